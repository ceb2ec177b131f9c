// Package routefile reads the two files a router is given: a costs file
// (model,cost rows) and a queries file (one question per line, or JSON
// lines with an id and a text).
package routefile

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/limits"
	"github.com/jeirt/jeirt/model/read"
)

// ReadCosts reads a costs file, a CSV of model,cost rows with an optional
// model,cost header, and returns the cost of every name in models (NaN for a
// model the file does not price). A model the file names that is not in
// models, a repeated model, a row without exactly two fields and a cost that
// is not a finite non-negative number are errors naming the file and line.
func ReadCosts(path string, models []string) ([]float64, error) {
	f, err := fileio.OpenInput(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readCosts(path, f, models)
}

func readCosts(path string, r io.Reader, models []string) ([]float64, error) {
	row := map[string]int{}
	for i, n := range models {
		row[n] = i
	}
	costs := make([]float64, len(models))
	for i := range costs {
		costs[i] = math.NaN()
	}
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	seen := map[string]int{}
	rows := 0
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, &read.ParseError{File: path, Line: pe.Line, Msg: pe.Err.Error(), Err: err}
			}
			return nil, err
		}
		line, _ := cr.FieldPos(0)
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if len(rec) != 2 {
			return nil, &read.ParseError{File: path, Line: line, Msg: fmt.Sprintf("want 2 fields (model,cost), got %d", len(rec))}
		}
		name, val := strings.TrimSpace(rec[0]), strings.TrimSpace(rec[1])
		if rows == 0 && strings.EqualFold(name, "model") && strings.EqualFold(val, "cost") {
			rows++
			continue
		}
		rows++
		c, err := strconv.ParseFloat(val, 64)
		if err != nil || c < 0 || math.IsInf(c, 0) || math.IsNaN(c) {
			return nil, &read.ParseError{File: path, Line: line, Column: "cost", Msg: fmt.Sprintf("%q is not a non-negative number", limits.Clip(val))}
		}
		i, ok := row[name]
		if !ok {
			return nil, &read.ParseError{File: path, Line: line, Column: "model", Msg: fmt.Sprintf("%q is not a model of the checkpoint", limits.Clip(name))}
		}
		if prev, dup := seen[name]; dup {
			return nil, &read.ParseError{File: path, Line: line, Column: "model", Msg: fmt.Sprintf("%q is priced twice (first on line %d)", limits.Clip(name), prev)}
		}
		seen[name] = line
		costs[i] = c
	}
	if len(seen) == 0 {
		return nil, &read.ParseError{File: path, Msg: "no model,cost rows"}
	}
	return costs, nil
}

// Query is one question to route.
type Query struct {
	ID   string
	Text string
	Line int // 1-based line of the input
}

// QueryFile is what ReadQueries read.
type QueryFile struct {
	Queries []Query
	JSONL   bool  // the input was JSONL rather than plain text
	Empty   []int // lines skipped because they (or their text) are empty
	// EmptyText is those of Empty that are JSON objects with an empty text
	// (the others are blank lines).
	EmptyText []int
}

// Blank is the lines of Empty that are blank: Empty without EmptyText.
func (qf *QueryFile) Blank() []int {
	var out []int
	for _, l := range qf.Empty {
		if !slices.Contains(qf.EmptyText, l) {
			out = append(out, l)
		}
	}
	return out
}

// ReadQueries reads questions to route from r (name is used in errors): either
// plain text, one question per line, whose id is its line number; or JSONL,
// one {"id": ..., "text": ...} object per line (id a string or number,
// defaulting to the line number). The input is JSONL when its first non-empty
// line starts with "{". Empty lines, and JSONL objects with empty text, are
// skipped and listed in Empty.
func ReadQueries(name string, r io.Reader) (*QueryFile, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	qf := &QueryFile{}
	decided := false
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if len(b) == 0 && err != nil {
			if err == io.EOF {
				break
			}
			return nil, err
		}
		b = bytes.TrimRight(b, "\r\n")
		if len(bytes.TrimSpace(b)) == 0 {
			qf.Empty = append(qf.Empty, line)
			continue
		}
		if !decided {
			qf.JSONL, decided = bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")), true
		}
		if !qf.JSONL {
			qf.Queries = append(qf.Queries, Query{ID: strconv.Itoa(line), Text: string(b), Line: line})
			continue
		}
		q, err := parseQueryJSON(name, line, b)
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(q.Text) == "" {
			qf.Empty = append(qf.Empty, line)
			qf.EmptyText = append(qf.EmptyText, line)
			continue
		}
		qf.Queries = append(qf.Queries, q)
	}
	return qf, nil
}

func parseQueryJSON(name string, line int, b []byte) (Query, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		return Query{}, &read.ParseError{File: name, Line: line, Msg: "not a JSON object: " + err.Error(), Err: err}
	}
	q := Query{ID: strconv.Itoa(line), Line: line}
	raw, ok := obj["text"]
	if !ok {
		return Query{}, &read.ParseError{File: name, Line: line, Column: "text", Key: true, Msg: "missing"}
	}
	if err := json.Unmarshal(raw, &q.Text); err != nil {
		return Query{}, &read.ParseError{File: name, Line: line, Column: "text", Key: true, Msg: "not a string"}
	}
	if raw, ok := obj["id"]; ok {
		var s string
		var n json.Number
		switch {
		case json.Unmarshal(raw, &s) == nil && s != "":
			q.ID = s
		case json.Unmarshal(raw, &n) == nil:
			q.ID = n.String()
		default:
			return Query{}, &read.ParseError{File: name, Line: line, Column: "id", Key: true, Msg: "not a non-empty string or a number"}
		}
	}
	return q, nil
}
