package read

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/read/internal/cell"
	"github.com/jeirt/jeirt/model/read/internal/parquet"
)

// ItemTable is an item-text file: ids with their text and, optionally, group.
type ItemTable struct {
	IDs   []string
	Text  []string
	Group []string // nil when the file has no category or benchmark column
}

// Column names of item-text files, compared case-insensitively.
var (
	itemTextIDNames = []string{"item_id", "item", "prompt_id", "question_id", "id"}
	itemTextNames   = []string{"text", "problem_statement", "content", "prompt", "question"}
)

// Items reads an item-text CSV (gzip transparent): an id column
// (item_id, item, prompt_id, question_id or id), a text column (text,
// problem_statement, content, prompt or question) and optionally a category or
// benchmark column. Quoted fields may span lines. A Parquet file with the same
// columns is read as well.
func Items(path string) (*ItemTable, error) {
	in, err := fileio.OpenInput(path)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	if !in.Regular {
		in.Limit(fileio.MemoryBudget(0), "an item-text file from a pipe")
	}
	if parquet.Is(in) {
		return readItemsParquet(in)
	}
	br, gz, err := openText(in)
	if err != nil {
		return nil, err
	}
	return readItems(path, br, gz)
}

func readItems(path string, br *bufio.Reader, gz bool) (*ItemTable, error) {
	s := newCSVScanner(path, br, gz)
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
	t := &ItemTable{}
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

// joinItemText sets r.ItemText (and r.ItemGroup, when the file has groups and
// r has none) from an item-text file, matching by id; the file's text replaces
// any text from the response file, and a repeated id's last row wins.
func joinItemText(r *model.Responses, path string, rep *Report) error {
	t, err := Items(path)
	if err != nil {
		return err
	}
	rep.ItemsPath = path
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
		return fmt.Errorf("%s: none of its %d item ids matches an item of %s (first id %q, first item %q)", path, len(t.IDs), rep.Path, model.Clip(t.IDs[0]), model.Clip(firstOr(r.Items)))
	}
	return nil
}

func firstOr(list []string) string {
	if len(list) == 0 {
		return ""
	}
	return list[0]
}
