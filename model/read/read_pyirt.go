package read

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/limits"
	"github.com/jeirt/jeirt/model/machine"
	"github.com/jeirt/jeirt/model/read/internal/cell"
)

// readPyIRT reads py-irt JSONL: one object per line,
//
//	{"subject_id": "gpt-4o", "responses": {"q1": 1, "q2": 0}}
//
// with labels as numbers, booleans or strings; null is missing. Items are
// numbered in order of first appearance.
func readPyIRT(file string, br *bufio.Reader, cells *cell.Sink, lp *cell.Labels, rep *Report, gz bool) (*model.Responses, error) {
	models, items := cell.NewNames(), cell.NewNames()
	line := 0
	var long []byte
	for {
		l, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long[:0], l...)
			for err == bufio.ErrBufferFull {
				if len(long) > limits.MaxLineBytes {
					return nil, &ParseError{File: file, Line: line + 1, Msg: fmt.Sprintf("a line longer than %s (is this a text file?)", machine.Bytes(limits.MaxLineBytes))}
				}
				l, err = br.ReadSlice('\n')
				long = append(long, l...)
			}
			l = long
		}
		if err != nil && err != io.EOF {
			msg := err.Error()
			if gz {
				msg = "corrupt gzip data: " + msg
			}
			return nil, &ParseError{File: file, Line: line + 1, Msg: msg, Err: err}
		}
		if len(l) == 0 && err == io.EOF {
			break
		}
		line++
		if line == 1 {
			l = bytes.TrimPrefix(l, []byte("\xef\xbb\xbf"))
		}
		if len(bytes.TrimSpace(l)) > 0 {
			rep.Rows++
			if perr := pyirtLine(file, line, l, models, items, cells, lp); perr != nil {
				return nil, perr
			}
		}
		if err == io.EOF {
			break
		}
	}
	if rep.Rows == 0 {
		return nil, &ParseError{File: file, Msg: "the file is empty (no JSON lines)"}
	}
	return &model.Responses{Models: models.List, Items: items.List}, nil
}

func pyirtLine(file string, line int, l []byte, models, items *cell.Names, cells *cell.Sink, lp *cell.Labels) error {
	bad := func(format string, args ...any) error {
		return &ParseError{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	dec := json.NewDecoder(bytes.NewReader(l))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return bad("not a JSON object")
	}
	var subject []byte
	type resp struct {
		item  string
		value json.RawMessage
	}
	var responses []resp
	seen := false
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return bad("invalid JSON: %v", err)
		}
		key, _ := t.(string)
		switch key {
		case "subject_id":
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return bad("invalid JSON: %v", err)
			}
			var s string
			if json.Unmarshal(v, &s) == nil {
				subject = []byte(s)
			} else if bytes.HasPrefix(v, []byte("null")) {
				subject = nil
			} else {
				subject = bytes.TrimSpace(v) // a number
			}
		case "responses":
			seen = true
			if t, err := dec.Token(); err != nil || t != json.Delim('{') {
				return &ParseError{File: file, Line: line, Column: "responses", Key: true, Msg: "is not an object of item: label"}
			}
			for dec.More() {
				t, err := dec.Token()
				if err != nil {
					return bad("invalid JSON: %v", err)
				}
				var v json.RawMessage
				if err := dec.Decode(&v); err != nil {
					return bad("invalid JSON: %v", err)
				}
				responses = append(responses, resp{t.(string), v})
			}
			if _, err := dec.Token(); err != nil {
				return bad("invalid JSON: %v", err)
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return bad("invalid JSON: %v", err)
			}
		}
	}
	if _, err := dec.Token(); err != nil {
		return bad("invalid JSON: %v", err)
	}
	if len(subject) == 0 {
		return bad(`no "subject_id"`)
	}
	if !seen {
		return bad(`no "responses"`)
	}
	m := models.ID(subject)
	for _, r := range responses {
		v := []byte(r.value)
		if len(v) > 0 && v[0] == '"' {
			var s string
			_ = json.Unmarshal(v, &s)
			v = []byte(s)
		} else if string(v) == "null" {
			v = nil
		}
		y, err := lp.Parse(v, line)
		if err != nil || y == cell.Bad {
			msg := strings.Replace(lp.BadLabel(v), fmt.Sprintf("%q", limits.Clip(string(v))), strings.TrimSpace(string(r.value)), 1)
			if err != nil {
				msg = fmt.Sprintf("%s %v", r.value, err)
			}
			return &ParseError{File: file, Line: line, Column: "responses." + r.item, Key: true, Msg: msg}
		}
		i := items.ID([]byte(r.item))
		cells.AddLabel(m, i, y, lp, line)
	}
	return nil
}
