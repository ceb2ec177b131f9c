package model

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

func nan() float64 { return math.NaN() }

// Float is a float64 that JSON carries as null when it is NaN (undefined: an
// AUC with one class, a rank correlation of a constant ranking), and reads
// null back as NaN. Every NaN-as-null JSON field of jeirt's files has this type.
// Printed with any verb (%.4f, %8.3f, %v), NaN is "n/a" in the same width.
type Float float64

// MarshalJSON writes NaN as null and any other value as encoding/json writes a float64.
func (f Float) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(f)) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(f))
}

// UnmarshalJSON reads null as NaN.
func (f *Float) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*f = Float(math.NaN())
		return nil
	}
	var x float64
	err := json.Unmarshal(b, &x)
	*f = Float(x)
	return err
}

// Format prints f as fmt prints a float64 with the same verb and flags,
// except NaN, which is "n/a" padded to the width: a table column of an
// undefined statistic reads n/a, never NaN or a made-up 0.
func (f Float) Format(s fmt.State, verb rune) {
	if !math.IsNaN(float64(f)) {
		fmt.Fprintf(s, fmt.FormatString(s, verb), float64(f))
		return
	}
	const na = "n/a"
	pad := ""
	if w, ok := s.Width(); ok && w > len(na) {
		pad = strings.Repeat(" ", w-len(na))
	}
	if s.Flag('-') {
		fmt.Fprint(s, na+pad)
	} else {
		fmt.Fprint(s, pad+na)
	}
}

// FormatFloat writes x for a CSV cell: the shortest form that reads back
// exactly, and an empty cell for NaN (missing).
func FormatFloat(x float64) string {
	if math.IsNaN(x) {
		return ""
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// Finite reports whether x is neither NaN nor infinite.
func Finite(x float64) bool { return x-x == 0 }
