package read

import (
	"fmt"
	"strings"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/limits"
	"github.com/jeirt/jeirt/model/read/internal/cell"
)

// maxLongColumns is the most columns a file may have for a failed guess of
// a matrix to suggest reading it as a long file instead: long files have a
// model, an item and a label column and perhaps a few more.
const maxLongColumns = 8

// guessedWrong explains the label error err, met in the row f of a matrix
// whose format auto guessed (s.guessed says why), at the column bad: it says
// what was guessed, and what the file more likely is: an item-text file
// (an item id and a text column, to give as --items), or, when the first
// data row of a file of a few columns fails at its second column (a long
// file's item ids read as a model's first answer), a long file, with the
// --columns that name its own columns. A file whose format was given, and
// a matrix with a bad cell elsewhere, keep err as it is.
func (s *csvScanner) guessedWrong(err error, f [][]byte, bad int, format string) error {
	pe, ok := err.(*ParseError)
	if !ok || s.guessed == "" {
		return err
	}
	h := s.header
	msg := fmt.Sprintf("%s; the format was guessed as %s (%s)", pe.Msg, format, s.guessed)
	var fe *model.FieldError
	ic, tc := cell.FindColumn(h, itemTextIDNames), cell.FindColumn(h, itemTextNames)
	switch {
	case ic >= 0 && tc == bad:
		fe = model.FieldErrorf("Items", "but it looks like an item-text file (item id column %q, text column %q): give it with {Items}, and the responses with {Data}", limits.Clip(h[ic]), limits.Clip(h[tc]))
	case s.start == 2 && bad == 1 && len(h) >= 3 && len(h) <= maxLongColumns:
		fe = model.FieldErrorf("Columns", "if it is a long file (one row per model and item), name its columns: {Columns} %s", suggestColumns(h, f))
	}
	if fe == nil {
		return err // a matrix with a bad cell: the cell is the news
	}
	return &ParseError{File: pe.File, Line: pe.Line, Column: pe.Column, Msg: msg + "; " + fe.Error(), Err: fe}
}

// suggestColumns names the columns of a long file from its header h and
// first data row f: the label is the last column whose value is a label
// (with no row, the last column not named as a model's or an item's), the
// model and item columns are those named so (cell.ModelNames, cell.ItemNames)
// or else the first two of the others, in order; a role with no column left
// is written COLUMN.
func suggestColumns(h []string, f [][]byte) string {
	label := -1
	for k := len(f) - 1; k >= 0 && label < 0; k-- {
		y, err := (&cell.Labels{Graded: true}).Parse(f[k], 2)
		if err == nil && (y == 0 || y == 1 || y == cell.Counts) {
			label = k
		}
	}
	for k := len(h) - 1; f == nil && k >= 0 && label < 0; k-- {
		if one := []string{h[k]}; cell.FindColumn(one, cell.ModelNames) < 0 && cell.FindColumn(one, cell.ItemNames) < 0 {
			label = k
		}
	}
	used := map[int]bool{label: true}
	pick := func(names []string) int {
		if k := cell.FindColumn(h, names); k >= 0 && !used[k] {
			used[k] = true
			return k
		}
		return -1
	}
	mod, item := pick(cell.ModelNames), pick(cell.ItemNames)
	for k := range h {
		if used[k] {
			continue
		}
		switch {
		case mod < 0:
			mod, used[k] = k, true
		case item < 0:
			item, used[k] = k, true
		}
	}
	name := func(k int) string {
		if k < 0 {
			return "COLUMN"
		}
		return limits.Clip(h[k])
	}
	return strings.Join([]string{"model=" + name(mod), "item=" + name(item), "label=" + name(label)}, ",")
}

// longColumnsExample is the --columns of decide's error for a header it
// cannot tell: the file's own columns where it has a few, else placeholders.
func longColumnsExample(h []string) string {
	if len(h) >= 3 && len(h) <= maxLongColumns {
		return suggestColumns(h, nil)
	}
	return "model=COLUMN,item=COLUMN,label=COLUMN"
}
