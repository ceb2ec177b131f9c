package cell

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/jeirt/jeirt/model/limits"
)

// Labels parses the labels of one file: 0/1, 0.0/1.0, -1/1, true/false (any
// case); blank, NA and NaN are missing. A file may not mix 0 and -1 as its
// wrong answer. With Graded, a decimal strictly between 0 and 1 is a score
// (one trial, that fraction of a success); "k/n" is k successes in n trials
// (k a fraction only with Graded).
type Labels struct {
	Graded bool
	// K and N are the successes and trials of the last Counts label.
	K float64
	N int32

	zeroLine, minusLine int // first line with a 0 and with a -1 label
	fracLine            int // first line with a fraction (a score or k/n)
}

// The codes of a parsed label besides 0 and 1.
const (
	Missing = 2 // blank or NA
	Bad     = 3 // not a label
	// Counts: the label is k successes in n trials (Labels.K, .N), not one
	// 0/1 answer.
	Counts = 4
)

// Parse parses the label b, read at line, into 0, 1 or one of the codes
// above; the error says why b is not allowed here (a -1 in a file of 0s).
func (lp *Labels) Parse(b []byte, line int) (uint8, error) {
	b = bytes.TrimSpace(b)
	switch len(b) {
	case 0:
		return Missing, nil
	case 1:
		switch b[0] {
		case '1':
			return 1, nil
		case '0':
			return lp.zero(line)
		}
	case 2:
		if b[0] == '-' && b[1] == '1' {
			return lp.minus(line)
		}
	case 3:
		if b[1] == '.' && b[2] == '0' {
			switch b[0] {
			case '1':
				return 1, nil
			case '0':
				return lp.zero(line)
			}
		}
	}
	switch strings.ToLower(string(b)) {
	case "true":
		return 1, nil
	case "false":
		return 0, nil
	case "na", "nan", "n/a", "null":
		return Missing, nil
	}
	if v, ok := parseFloatLabel(b); ok {
		switch {
		case v == 1:
			return 1, nil
		case v == 0:
			return lp.zero(line)
		case v == -1:
			return lp.minus(line)
		case lp.Graded && v > 0 && v < 1:
			return lp.counts(v, 1, line)
		}
	}
	if i := bytes.IndexByte(b, '/'); i > 0 {
		k, kok := parseFloatLabel(bytes.TrimSpace(b[:i]))
		n, nerr := strconv.ParseInt(string(bytes.TrimSpace(b[i+1:])), 10, 32)
		switch {
		case !kok || nerr != nil || n < 0:
			return Bad, nil
		case n == 0 && k == 0:
			return Missing, nil
		case k < 0 || k > float64(n):
			return 0, fmt.Errorf("is not k successes in n trials with 0 ≤ k ≤ n")
		case k != math.Trunc(k) && !lp.Graded:
			return 0, fmt.Errorf("has a fractional number of successes (use --graded for graded scores)")
		}
		return lp.counts(k, int32(n), line)
	}
	return Bad, nil
}

// counts records k successes in n trials, refusing a file that also has -1
// labels (a score or a count has no -1/1 reading).
func (lp *Labels) counts(k float64, n int32, line int) (uint8, error) {
	if lp.fracLine == 0 {
		lp.fracLine = line
	}
	if lp.minusLine != 0 {
		return 0, fmt.Errorf("is a score or a count of trials, but line %d has -1: scores are in [0, 1] and wrong answers 0", lp.minusLine)
	}
	lp.K, lp.N = k, n
	return Counts, nil
}

func (lp *Labels) zero(line int) (uint8, error) {
	if lp.zeroLine == 0 {
		lp.zeroLine = line
		if lp.minusLine != 0 {
			return 0, fmt.Errorf("is 0, but line %d has -1: the file mixes 0/1 and -1/1 labels", lp.minusLine)
		}
	}
	return 0, nil
}

func (lp *Labels) minus(line int) (uint8, error) {
	if lp.minusLine == 0 {
		lp.minusLine = line
		if lp.zeroLine != 0 {
			return 0, fmt.Errorf("is -1, but line %d has 0: the file mixes 0/1 and -1/1 labels", lp.zeroLine)
		}
		if lp.fracLine != 0 {
			return 0, fmt.Errorf("is -1, but line %d has a score or a count of trials: scores are in [0, 1] and wrong answers 0", lp.fracLine)
		}
	}
	return 0, nil
}

// Label parses one cell value and turns failures into a ParseError.
func (lp *Labels) Label(file string, line int, column string, b []byte) (uint8, error) {
	y, err := lp.Parse(b, line)
	if err != nil {
		return 0, &ParseError{File: file, Line: line, Column: column, Msg: fmt.Sprintf("%q %s", limits.Clip(string(b)), err.Error())}
	}
	if y == Bad {
		return 0, &ParseError{File: file, Line: line, Column: column, Msg: lp.BadLabel(b)}
	}
	return y, nil
}

// BadLabel says why b is not a label, with the flag that reads a fraction.
func (lp *Labels) BadLabel(b []byte) string {
	q := limits.Clip(string(b))
	v, ok := parseFloatLabel(bytes.TrimSpace(b))
	switch {
	case ok && v > 0 && v < 1:
		return fmt.Sprintf("%q is not a 0/1 label (for graded scores in [0, 1] use --graded)", q)
	case lp.Graded:
		return fmt.Sprintf("%q is not a 0/1 label, a score in [0, 1] or k/n", q)
	}
	return fmt.Sprintf("%q is not a 0/1 label", q)
}

func parseFloatLabel(b []byte) (float64, bool) {
	// Only plain decimals such as 1.00 or -1.0, not 1e0 or 0x1.
	if !isDecimal(string(b)) {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(b), 64)
	return v, err == nil
}

func isDecimal(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == '-' || s[0] == '+' {
		s = s[1:]
	}
	dot, digits := false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !dot:
			dot = true
		default:
			return false
		}
	}
	return digits > 0
}

// Number is the label of a number (a Parquet column of integers or floats):
// 0, 1, Missing for NaN, or Counts for a graded score with lp.Graded; or a
// message saying why x is not a label here. line is used to report 0/1
// mixed with -1/1 as in text.
func (lp *Labels) Number(x float64, line int) (uint8, string) {
	var err error
	switch {
	case math.IsNaN(x):
		return Missing, ""
	case x == 1:
		return 1, ""
	case x == 0:
		_, err = lp.zero(line)
	case x == -1:
		_, err = lp.minus(line)
	case lp.Graded && x > 0 && x < 1:
		y, err := lp.counts(x, 1, line)
		if err != nil {
			return 0, fmt.Sprintf("%v %s", x, err.Error())
		}
		return y, ""
	case x > 0 && x < 1:
		return 0, fmt.Sprintf("%v is not a 0/1 label (for graded scores in [0, 1] use --graded)", x)
	default:
		return 0, fmt.Sprintf("%v is not a 0/1 label", x)
	}
	if err != nil {
		return 0, fmt.Sprintf("%v %s", x, err.Error())
	}
	return 0, ""
}

// ParseCounts reads a cell of k successes (kb) in n trials (nb): n a whole
// number, 0 ≤ k ≤ n, k whole unless graded. A blank or NA trials value, or
// 0 trials with 0 (or blank) successes, is a missing cell (n = 0). A
// problem comes back as a message and the field at fault (0: successes, 1:
// trials).
func ParseCounts(kb, nb []byte, graded bool) (k float64, n int32, msg string, col int) {
	kb, nb = bytes.TrimSpace(kb), bytes.TrimSpace(nb)
	if isMissingText(nb) {
		if !isMissingText(kb) {
			return 0, 0, fmt.Sprintf("%q successes with no trials", limits.Clip(string(kb))), 1
		}
		return 0, 0, "", 0
	}
	t, err := strconv.ParseInt(string(nb), 10, 32)
	if err != nil || t < 0 {
		if v, ok := parseFloatLabel(nb); ok && v == math.Trunc(v) && v >= 0 && v < 1<<31 {
			t, err = int64(v), nil // 5.0
		} else {
			return 0, 0, fmt.Sprintf("%q is not a number of trials (a whole number, at least 0)", limits.Clip(string(nb))), 1
		}
	}
	if isMissingText(kb) {
		if t == 0 {
			return 0, 0, "", 0
		}
		return 0, 0, fmt.Sprintf("no successes given for %d trials", t), 0
	}
	k, ok := parseFloatLabel(kb)
	switch {
	case !ok || k < 0:
		return 0, 0, fmt.Sprintf("%q is not a number of successes (at least 0)", limits.Clip(string(kb))), 0
	case k > float64(t):
		return 0, 0, fmt.Sprintf("%s successes in %d trials: more successes than trials", limits.Clip(string(kb)), t), 0
	case k != math.Trunc(k) && !graded:
		return 0, 0, fmt.Sprintf("%q is a fractional number of successes (use --graded for graded scores)", limits.Clip(string(kb))), 0
	}
	return k, int32(t), "", 0
}

// isMissingText is a blank, NA or NaN field.
func isMissingText(b []byte) bool {
	switch strings.ToLower(string(b)) {
	case "", "na", "nan", "n/a", "null":
		return true
	}
	return false
}
