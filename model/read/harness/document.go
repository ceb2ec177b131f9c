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
	return jsonscan.NullNonFinite(bytes.TrimPrefix(b, bom)), nil
}

// skipBOM passes over a byte order mark at the start of in.
func skipBOM(in *fileio.Input) {
	if b, _ := in.Peek(len(bom)); bytes.Equal(b, bom) {
		in.Discard(len(bom))
	}
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
	if jsonscan.NonFinite(raw) {
		return fmt.Sprintf("%s is not a number (Python's json writes it for a float that is not finite): the score is undefined; choose another metric with --metric, or remove the sample", raw)
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
