package model

import (
	"encoding/json"
	"math"
	"strconv"
)

func nan() float64 { return math.NaN() }

// Float is a float64 that JSON carries as null when it is NaN (undefined: an
// AUC with one class, a rank correlation of a constant ranking), and reads
// null back as NaN. Every NaN-as-null JSON field of jeirt's files has this type.
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

// FormatFloat writes x for a CSV cell: the shortest form that reads back
// exactly, and an empty cell for NaN (missing).
func FormatFloat(x float64) string {
	if math.IsNaN(x) {
		return ""
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}
