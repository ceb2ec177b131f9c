package read

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/limits"
	"github.com/jeirt/jeirt/model/machine"
	"github.com/jeirt/jeirt/model/read/internal/cell"
	"github.com/jeirt/jeirt/model/read/internal/parquet"
)

// ItemTable is an item-text file: ids with their text and, optionally, group.
type ItemTable struct {
	IDs   []string
	Text  []string
	Group []string // nil when the file has no category or benchmark column
	// IDColumn and TextColumn are the file's names of the columns (or JSON
	// keys) read as the id and the text.
	IDColumn, TextColumn string
}

// Column names of item-text files, compared case-insensitively, in order of
// preference: a file with several text columns (BigCodeBench's
// complete_prompt and instruct_prompt) gives the text of the first.
var (
	itemTextIDNames = []string{"item_id", "item", "prompt_id", "question_id", "id", "task_id", "instance_id", "problem_id", "example_id", "uid", "qid"}
	itemTextNames   = []string{"text", "problem_statement", "content", "prompt", "question", "instruct_prompt", "problem", "input",
		"query", "instruction", "question_text", "statement", "complete_prompt", "description"}
)

// Items reads an item-text file (gzip transparent): a CSV or TSV with an id
// column (item_id, item, prompt_id, question_id, id, task_id, instance_id,
// ...), a text column (text, problem_statement, content, prompt, question,
// instruct_prompt, problem, input, ...; the first present wins) and
// optionally a category or benchmark column; or JSON lines with the same
// keys ({"id": "q1", "text": "..."}); or a Parquet file with the same
// columns. Texts are kept byte for byte: a quoted CSV field keeps its line
// breaks as written, \r\n included (encoding/csv would make them \n).
func Items(path string) (*ItemTable, error) {
	in, err := fileio.OpenInput(path)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	if !in.Regular {
		in.Limit(machine.MemoryBudget(0), "an item-text file from a pipe")
	}
	if parquet.Is(in) {
		return readItemsParquet(in)
	}
	br, gz, err := openText(in)
	if err != nil {
		return nil, err
	}
	head, _ := br.Peek(1 << 10)
	if head = bytes.TrimLeft(head, " \t\r\n\xef\xbb\xbf"); len(head) > 0 && head[0] == '{' {
		return readItemsJSONL(path, br, gz)
	}
	return readItems(path, br, gz)
}

func readItems(path string, br *bufio.Reader, gz bool) (*ItemTable, error) {
	s := newCSVScanner(path, br, gz)
	s.keepCR = true
	h, err := s.readHeader()
	if err != nil {
		return nil, err
	}
	ic := cell.FindColumn(h, itemTextIDNames)
	if ic < 0 {
		return nil, s.errorf(1, "", "no item id column (want one of %s); header is %s", strings.Join(itemTextIDNames, ", "), cell.ClipJoin(h))
	}
	tc := cell.FindColumn(h, itemTextNames)
	if tc < 0 {
		return nil, s.errorf(1, "", "no text column (want one of %s); header is %s", strings.Join(itemTextNames, ", "), cell.ClipJoin(h))
	}
	gc := cell.FindColumn(h, cell.GroupNames)
	t := &ItemTable{IDColumn: h[ic], TextColumn: h[tc]}
	for {
		f, err := s.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(f) != len(h) {
			return nil, s.errorf(s.start, "", "row has %d fields, header has %d", len(f), len(h))
		}
		if len(f[ic]) == 0 {
			return nil, s.errorf(s.start, h[ic], "empty item id")
		}
		t.IDs = append(t.IDs, string(f[ic]))
		t.Text = append(t.Text, string(f[tc]))
		if gc >= 0 {
			t.Group = append(t.Group, string(f[gc]))
		}
	}
	return t, nil
}

// readItemsJSONL reads an item-text file of JSON lines: one object per
// line with an id key and a text key of Items' names (the first line's
// keys decide which) and optionally category or benchmark. An id may be a
// string or an integer; the text must be a string.
func readItemsJSONL(path string, br *bufio.Reader, gz bool) (*ItemTable, error) {
	t := &ItemTable{}
	var groupKey string
	line := 0
	for {
		b, err := br.ReadBytes('\n')
		if len(b) > limits.MaxLineBytes {
			return nil, &ParseError{File: path, Line: line + 1, Msg: fmt.Sprintf("a line longer than %s", machine.Bytes(limits.MaxLineBytes))}
		}
		if len(b) > 0 {
			line++
			if err := t.addJSONLine(path, line, bytes.TrimSpace(b), &groupKey); err != nil {
				return nil, err
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			msg := err.Error()
			if gz {
				msg = "corrupt gzip data: " + msg
			}
			return nil, &ParseError{File: path, Line: line + 1, Msg: msg, Err: err}
		}
	}
	if len(t.IDs) == 0 {
		return nil, &ParseError{File: path, Msg: "no items (want one JSON object per line, {\"id\": ..., \"text\": ...})"}
	}
	return t, nil
}

func (t *ItemTable) addJSONLine(path string, line int, b []byte, groupKey *string) error {
	if len(b) == 0 {
		return nil
	}
	if line == 1 {
		b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		return &ParseError{File: path, Line: line, Msg: "not a JSON object: " + err.Error()}
	}
	if t.IDColumn == "" {
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		ic, tc := cell.FindColumn(keys, itemTextIDNames), cell.FindColumn(keys, itemTextNames)
		if ic < 0 {
			return &ParseError{File: path, Line: line, Msg: fmt.Sprintf("no item id key (want one of %s); keys are %s", strings.Join(itemTextIDNames, ", "), cell.ClipJoin(keys))}
		}
		if tc < 0 {
			return &ParseError{File: path, Line: line, Msg: fmt.Sprintf("no text key (want one of %s); keys are %s", strings.Join(itemTextNames, ", "), cell.ClipJoin(keys))}
		}
		t.IDColumn, t.TextColumn = keys[ic], keys[tc]
		if gc := cell.FindColumn(keys, cell.GroupNames); gc >= 0 {
			*groupKey = keys[gc]
			t.Group = []string{}
		}
	}
	id, err := jsonID(obj[t.IDColumn])
	if err != nil || id == "" {
		return &ParseError{File: path, Line: line, Column: t.IDColumn, Msg: "want a non-empty string or integer id"}
	}
	var text string
	if raw, ok := obj[t.TextColumn]; !ok || json.Unmarshal(raw, &text) != nil {
		return &ParseError{File: path, Line: line, Column: t.TextColumn, Msg: "want a string"}
	}
	t.IDs, t.Text = append(t.IDs, id), append(t.Text, text)
	if t.Group != nil {
		var g string
		if raw, ok := obj[*groupKey]; ok && json.Unmarshal(raw, &g) != nil {
			return &ParseError{File: path, Line: line, Column: *groupKey, Msg: "want a string"}
		}
		t.Group = append(t.Group, g)
	}
	return nil
}

// jsonID is an id given as a JSON string or integer.
func jsonID(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var n json.Number
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&n); err != nil || strings.ContainsAny(n.String(), ".eE") {
		return "", fmt.Errorf("not a string or integer")
	}
	return n.String(), nil
}

// joinItemText sets r.ItemText (and r.ItemGroup, when the file has groups and
// r has none) from an item-text file, matching by id; the file's text replaces
// any text from the response file, and a repeated id's last row wins.
func joinItemText(r *model.Responses, path string, rep *Report) error {
	t, err := Items(path)
	if err != nil {
		return err
	}
	rep.ItemsPath, rep.ItemTextColumn = path, t.TextColumn
	index := make(map[string]int, len(r.Items))
	for j, id := range r.Items {
		index[id] = j
	}
	if r.ItemText == nil {
		r.ItemText = make([]string, len(r.Items))
	}
	setGroup := t.Group != nil && r.ItemGroup == nil
	if setGroup {
		r.ItemGroup = make([]string, len(r.Items))
	}
	matched := make([]bool, len(r.Items))
	for k, id := range t.IDs {
		j, ok := index[id]
		if !ok {
			rep.ItemTextUnknown++
			continue
		}
		if !matched[j] {
			matched[j] = true
			rep.ItemTexts++
		}
		r.ItemText[j] = t.Text[k]
		if setGroup {
			r.ItemGroup[j] = t.Group[k]
		}
	}
	if rep.ItemTexts == 0 && len(t.IDs) > 0 {
		return fmt.Errorf("%s: none of its %d item ids matches an item of %s (first id %q, first item %q)", path, len(t.IDs), rep.Path, limits.Clip(t.IDs[0]), limits.Clip(firstOr(r.Items)))
	}
	return nil
}

func firstOr(list []string) string {
	if len(list) == 0 {
		return ""
	}
	return list[0]
}
