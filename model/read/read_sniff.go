package read

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
)

// sniffText looks at the start of a text response file before any reader
// does: a JSON document (not py-irt's one object per line) is refused with
// what it is, and a file whose lines end in CR alone (as old Mac programs
// wrote) is read as if they ended in LF.
func sniffText(path string, br *bufio.Reader) (*bufio.Reader, error) {
	head, _ := br.Peek(64 << 10)
	if err := jsonDocument(path, head); err != nil {
		return nil, err
	}
	if len(head) > 0 && bytes.IndexByte(head, '\n') < 0 && bytes.IndexByte(head, '\r') >= 0 {
		return bufio.NewReaderSize(crToLF{br}, 1<<20), nil
	}
	return br, nil
}

// crToLF reads a CR-only file with LF line ends.
type crToLF struct{ r io.Reader }

func (c crToLF) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	for i := range p[:n] {
		if p[i] == '\r' {
			p[i] = '\n'
		}
	}
	return n, err
}

// jsonDocument returns an error naming what a JSON document given as
// responses is (a jeirt fit.json, a checkpoint's manifest.json, ...), or nil
// when head does not start one: py-irt JSONL has a whole object on its
// first line.
func jsonDocument(path string, head []byte) error {
	t := bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), " \t\r\n")
	if len(t) == 0 || t[0] != '{' && t[0] != '[' {
		return nil
	}
	first, _, _ := bytes.Cut(t, []byte("\n"))
	if t[0] == '{' && json.Valid(bytes.TrimSpace(first)) {
		return nil
	}
	has := func(key, value string) bool {
		return bytes.Contains(head, []byte(`"`+key+`": "`+value+`"`)) || bytes.Contains(head, []byte(`"`+key+`":"`+value+`"`))
	}
	hasKey := func(key string) bool { return bytes.Contains(head, []byte(`"`+key+`"`)) }
	base := strings.ToLower(filepath.Base(path))
	var what, instead string
	switch {
	case has("format", "jeirt-checkpoint"):
		what, instead = "a jeirt checkpoint's manifest.json", "give the checkpoint's folder with --checkpoint, and the responses as --data"
	case has("format", "jeirt-sweep"):
		what, instead = "a jeirt sweep.json", "give the sweep folder to jeirt sweep collect; the responses are the data: of the sweep's base config"
	case base == ".jeirt-output.json":
		what, instead = "the marker jeirt writes into its output folders", "give a responses file"
	case hasKey("jeirt_version") && hasKey("mode") && hasKey("settings"):
		what, instead = "a jeirt irt cat cat.json", "give the responses the tests were run on (cat.json names them under settings.data)"
	case hasKey("jeirt_version") && hasKey("settings"):
		what, instead = "a jeirt fit.json (an IRT fit's summary)", "give the responses the fit was made from (fit.json names them under settings.data), or the fit folder with --fit"
	case base == "metrics.json" || hasKey("best_epoch"):
		what, instead = "a jeirt checkpoint's metrics.json", "give the checkpoint's folder with --checkpoint, and the responses as --data"
	default:
		what, instead = "a JSON document", "jeirt reads responses as CSV, TSV, Parquet or py-irt JSONL (one JSON object per line: {\"subject_id\": ..., \"responses\": {...}})"
	}
	return &ParseError{File: path, Line: 1, Msg: "this is " + what + ", not responses: " + instead}
}
