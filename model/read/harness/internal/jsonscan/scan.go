// Package jsonscan finds values in JSON without decoding what it passes
// over: a small scanner over one JSON value held in memory (a JSON line, an
// element of a big array): it finds an object's keys and the raw bytes of
// their values without decoding the values it is not asked for, which is
// what lets a reader pass over a log's prompts, completions and events at
// the speed of a byte search. The values it hands out are decoded by
// encoding/json, which checks them.
package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// ErrSyntax is wrapped by the errors of input that is not JSON.
var ErrSyntax = errors.New("not valid JSON")

// SkipSpace returns the index of the first byte at or after i that is not
// white space.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just past the string that starts at b[i] == '"'.
func skipString(b []byte, i int) (int, error) {
	i++
	for {
		k := bytes.IndexByte(b[i:], '"')
		if k < 0 {
			return 0, fmt.Errorf("%w: a string is not closed", ErrSyntax)
		}
		j := i + k
		// The quote is escaped when an odd number of backslashes precede it.
		n := 0
		for p := j - 1; p >= i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return j + 1, nil
		}
		i = j + 1
	}
}

// SkipValue returns the index just past the value that starts at b[i]
// (after space).
func SkipValue(b []byte, i int) (int, error) {
	i = SkipSpace(b, i)
	if i >= len(b) {
		return 0, fmt.Errorf("%w: a value is missing", ErrSyntax)
	}
	switch c := b[i]; c {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				j, err := skipString(b, i)
				if err != nil {
					return 0, err
				}
				i = j
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, nil
				}
			}
			i++
		}
		return 0, fmt.Errorf("%w: an object or array is not closed", ErrSyntax)
	default:
		j := i
		for j < len(b) {
			switch b[j] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				if j == i {
					return 0, fmt.Errorf("%w: unexpected %q", ErrSyntax, b[j])
				}
				return j, nil
			}
			j++
		}
		if j == i {
			return 0, fmt.Errorf("%w: a value is missing", ErrSyntax)
		}
		return j, nil
	}
}

// EachField calls fn with each key of the JSON object b (its raw bytes,
// escapes as written) and the raw bytes of its value; fn returning false
// stops the scan.
func EachField(b []byte, fn func(key, val []byte) bool) error {
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return fmt.Errorf("%w: want a JSON object", ErrSyntax)
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return trailing(b, i+1)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return fmt.Errorf("%w: want a key at byte %d", ErrSyntax, i+1)
		}
		j, err := skipString(b, i)
		if err != nil {
			return err
		}
		key := b[i+1 : j-1]
		i = SkipSpace(b, j)
		if i >= len(b) || b[i] != ':' {
			return fmt.Errorf("%w: want ':' after key %q", ErrSyntax, key)
		}
		i = SkipSpace(b, i+1)
		end, err := SkipValue(b, i)
		if err != nil {
			return err
		}
		if !fn(key, b[i:end]) {
			return nil
		}
		i = SkipSpace(b, end)
		if i >= len(b) {
			return fmt.Errorf("%w: the object is not closed", ErrSyntax)
		}
		if b[i] == '}' {
			return trailing(b, i+1)
		}
		if b[i] != ',' {
			return fmt.Errorf("%w: want ',' or '}' at byte %d", ErrSyntax, i+1)
		}
		i = SkipSpace(b, i+1)
	}
}

func trailing(b []byte, i int) error {
	if SkipSpace(b, i) != len(b) {
		return fmt.Errorf("%w: text after the object", ErrSyntax)
	}
	return nil
}

// Field returns the raw value of key in object b, nil when absent.
func Field(b []byte, key string) ([]byte, error) {
	var v []byte
	err := EachField(b, func(k, val []byte) bool {
		if string(k) == key {
			v = val
			return false
		}
		return true
	})
	return v, err
}

// Path returns the raw value at the keys in nested objects, nil when one is absent.
func Path(b []byte, keys ...string) ([]byte, error) {
	for _, k := range keys {
		if len(b) == 0 || b[0] != '{' {
			return nil, nil
		}
		v, err := Field(b, k)
		if err != nil || v == nil {
			return nil, err
		}
		b = v
	}
	return b, nil
}

// Str decodes a JSON string value; ok is false for anything else (null included).
func Str(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// ID is an id given as a JSON string or integer, "" for anything else.
func ID(raw []byte) string {
	if s, ok := Str(raw); ok {
		return s
	}
	if IsNumber(raw) && bytes.IndexAny(raw, ".eE") < 0 {
		if _, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
			return string(raw)
		}
	}
	return ""
}

// IsNumber says whether raw is a number as JSON writes them (RFC 8259:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?), which Go's ParseFloat
// is looser than: it reads 0x1p-1, 1_000, Inf and NaN too.
func IsNumber(raw []byte) bool {
	i := 0
	digits := func() bool {
		j := i
		for i < len(raw) && raw[i] >= '0' && raw[i] <= '9' {
			i++
		}
		return i > j
	}
	if i < len(raw) && raw[i] == '-' {
		i++
	}
	switch {
	case i < len(raw) && raw[i] == '0':
		i++
	case !digits():
		return false
	}
	if i < len(raw) && raw[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(raw) && (raw[i] == 'e' || raw[i] == 'E') {
		i++
		if i < len(raw) && (raw[i] == '+' || raw[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	return i == len(raw)
}

// Number decodes a score: a JSON number or a boolean (true is 1); a
// number out of float64's range (1e999) is not one.
func Number(raw []byte) (float64, bool) {
	switch string(raw) {
	case "true":
		return 1, true
	case "false":
		return 0, true
	}
	if !IsNumber(raw) {
		return 0, false
	}
	x, err := strconv.ParseFloat(string(raw), 64)
	return x, err == nil
}

// Elems calls fn with each element of the JSON array b; fn
// returning false stops.
func Elems(b []byte, fn func(el []byte) (bool, error)) error {
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return fmt.Errorf("%w: want a list", ErrSyntax)
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return nil
	}
	for {
		end, err := SkipValue(b, i)
		if err != nil {
			return err
		}
		more, err := fn(b[i:end])
		if err != nil || !more {
			return err
		}
		i = SkipSpace(b, end)
		if i >= len(b) {
			return fmt.Errorf("%w: a list is not closed", ErrSyntax)
		}
		if b[i] == ']' {
			return nil
		}
		if b[i] != ',' {
			return fmt.Errorf("%w: want ',' or ']' in a list", ErrSyntax)
		}
		i = SkipSpace(b, i+1)
	}
}

// First is the first element of a JSON array, nil when b is not a
// non-empty array.
func First(b []byte) []byte {
	if len(b) == 0 || b[0] != '[' {
		return nil
	}
	i := SkipSpace(b, 1)
	end, err := SkipValue(b, i)
	if err != nil {
		return nil
	}
	return b[i:end]
}

// nonFinite are the tokens Python writes for floats JSON has no number for.
var nonFinite = [][]byte{[]byte("NaN"), []byte("-Infinity"), []byte("Infinity")}

// NullNonFinite replaces each NaN, Infinity and -Infinity token outside a
// string of b with null (b itself when there is none).
func NullNonFinite(b []byte) []byte {
	if bytes.IndexAny(b, "NI") < 0 {
		return b
	}
	var out []byte
	last := 0
	inString := false
	for i := 0; i < len(b); i++ {
		switch ch := b[i]; {
		case inString:
			if ch == '\\' {
				i++
			} else if ch == '"' {
				inString = false
			}
		case ch == '"':
			inString = true
		case ch == 'N' || ch == 'I' || ch == '-':
			for _, tok := range nonFinite {
				end := i + len(tok)
				if bytes.HasPrefix(b[i:], tok) && (end == len(b) || bytes.IndexByte([]byte(",]} \t\r\n"), b[end]) >= 0) {
					out = append(append(out, b[last:i]...), "null"...)
					last = end
					i = end - 1
					break
				}
			}
		}
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

// NonFinite says whether raw is one of the tokens NaN, Infinity and
// -Infinity.
func NonFinite(raw []byte) bool {
	for _, tok := range nonFinite {
		if bytes.Equal(raw, tok) {
			return true
		}
	}
	return false
}
