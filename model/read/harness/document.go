package harness

import (
	"bytes"

	"github.com/jeirt/jeirt/model/fileio"
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
