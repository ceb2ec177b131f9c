package harness

import (
	"bytes"
	"fmt"

	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/read/harness/internal/jsonscan"
)

// readDocument reads a whole JSON document of a log (an lm-eval results
// file, a HELM run spec) as fileio.ReadInputFile does, up to limit bytes,
// with a byte order mark at its start passed over and each NaN, Infinity
// or -Infinity outside a string read as null: Python's json module writes
// them for floats that are not finite, and jeirt reads no score from these
// documents, so a NaN in a field it does not use (a stderr) is no error,
// and a field it uses that is NaN is missing, named as such.
func readDocument(p string, limit int64, what string) ([]byte, error) {
	b, err := fileio.ReadInputFile(p, limit, what)
	if err != nil {
		return nil, err
	}
	return nullNonFinite(bytes.TrimPrefix(b, bom)), nil
}

// skipBOM passes over a byte order mark at the start of in.
func skipBOM(in *fileio.Input) {
	if b, _ := in.Peek(len(bom)); bytes.Equal(b, bom) {
		in.Discard(len(bom))
	}
}

// nonFinite are the tokens Python writes for floats JSON has no number for.
var nonFinite = [][]byte{[]byte("NaN"), []byte("-Infinity"), []byte("Infinity")}

// nullNonFinite replaces each NaN, Infinity and -Infinity token outside a
// string of b with null (b itself when there is none).
func nullNonFinite(b []byte) []byte {
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

// notNumber says why raw, a bare value where a number was looked for, is
// not one; "" when raw is not a bare token (a string, a list, an object,
// null or a boolean, which the caller names).
func notNumber(raw []byte) string {
	switch {
	case len(raw) == 0, raw[0] == '"', raw[0] == '[', raw[0] == '{':
		return ""
	case string(raw) == "null", string(raw) == "true", string(raw) == "false":
		return ""
	}
	for _, tok := range nonFinite {
		if bytes.Equal(raw, tok) {
			return fmt.Sprintf("%s is not a number (Python's json writes it for a float that is not finite): the score is undefined; choose another metric with --metric, or remove the sample", raw)
		}
	}
	s := string(raw)
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	if jsonscan.IsNumber(raw) {
		return fmt.Sprintf("%s is beyond the range of a 64-bit float", s)
	}
	return fmt.Sprintf("%s is not a JSON number (JSON writes numbers in decimal, e.g. 0.5), so it is not read as one: rewrite the value", s)
}
