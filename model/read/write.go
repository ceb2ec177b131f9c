package read

import (
	"bufio"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/fileio"
)

// WriteLongCSV writes r as a long CSV, one row per observed cell in cell order:
//
//	model,item,correct[,category]
//
// or, when cells have several trials, model,item,successes,trials[,category].
// A graded score is written as its fraction, and a file with one names its
// label column graded_score (graded_successes with trials), which the
// readers read as graded scores without Options.Graded: the file reads
// back as it was meant.
//
// A model or item with no observed cell gets one row with a blank label, so
// that reading the file back gives the same models and items (a blank label is
// missing). The file is written atomically.
func WriteLongCSV(path string, r *model.Responses) error {
	return fileio.WriteFileAtomic(path, func(w io.Writer) error { return writeLong(w, r, true) })
}

// WriteCellsCSV writes r's observed cells as WriteLongCSV does, without rows
// for the models and items that have none: every row has a label.
func WriteCellsCSV(path string, r *model.Responses) error {
	return fileio.WriteFileAtomic(path, func(w io.Writer) error { return writeLong(w, r, false) })
}

func writeLong(w io.Writer, r *model.Responses, placeholders bool) error {
	bw, ok := w.(*bufio.Writer)
	if !ok {
		bw = bufio.NewWriterSize(w, 1<<20)
	}
	models := quoteAll(r.Models)
	items := quoteAll(r.Items)
	var groups []string
	label := "correct"
	if r.Trials != nil {
		label = "successes,trials"
	}
	if gradedCells(r) {
		label = "graded_" + strings.Replace(label, "correct", "score", 1)
	}
	if r.ItemGroup != nil {
		groups = quoteAll(r.ItemGroup)
		bw.WriteString("model,item," + label + ",category\n")
	} else {
		bw.WriteString("model,item," + label + "\n")
	}
	row := func(m, i int32, label string) {
		bw.WriteString(models[m])
		bw.WriteByte(',')
		bw.WriteString(items[i])
		bw.WriteByte(',')
		bw.WriteString(label)
		if groups != nil {
			bw.WriteByte(',')
			bw.WriteString(groups[i])
		}
		bw.WriteByte('\n')
	}
	seenModel := make([]bool, len(r.Models))
	seenItem := make([]bool, len(r.Items))
	var cell []byte
	for c := range r.Label {
		m, i := r.Model[c], r.Item[c]
		seenModel[m], seenItem[i] = true, true
		switch {
		case r.Weighted():
			// The shortest plain decimal that reads back exactly (no exponent).
			cell = strconv.AppendFloat(cell[:0], r.SuccessesAt(c), 'f', -1, 64)
			if r.Trials != nil {
				cell = append(cell, ',')
				cell = strconv.AppendInt(cell, int64(r.Trials[c]), 10)
			}
			row(m, i, string(cell))
		case r.Label[c] == 1:
			row(m, i, "1")
		default:
			row(m, i, "0")
		}
	}
	blank := ""
	if r.Trials != nil {
		blank = ","
	}
	if placeholders && len(r.Models) > 0 && len(r.Items) > 0 {
		for m, ok := range seenModel {
			if !ok {
				row(int32(m), 0, blank)
			}
		}
		for i, ok := range seenItem {
			if !ok {
				row(0, int32(i), blank)
			}
		}
	}
	return bw.Flush()
}

// WriteItemsCSV writes item,text[,category] for every item of r (the item
// column is named as in every other file jeirt writes; readers accept item_id too).
func WriteItemsCSV(path string, r *model.Responses) error {
	return fileio.WriteFileAtomic(path, func(w io.Writer) error {
		bw := w.(*bufio.Writer)
		if r.ItemGroup != nil {
			bw.WriteString("item,text,category\n")
		} else {
			bw.WriteString("item,text\n")
		}
		for j, id := range r.Items {
			bw.WriteString(quoteCSV(id))
			bw.WriteByte(',')
			if r.ItemText != nil {
				bw.WriteString(quoteCSV(r.ItemText[j]))
			}
			if r.ItemGroup != nil {
				bw.WriteByte(',')
				bw.WriteString(quoteCSV(r.ItemGroup[j]))
			}
			bw.WriteByte('\n')
		}
		return nil
	})
}

func quoteAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = quoteCSV(n)
	}
	return out
}

// quoteCSV quotes a field when it holds a comma, quote, line break or leading
// or trailing space, as encoding/csv does.
func quoteCSV(s string) string {
	if s == "" || !strings.ContainsAny(s, ",\"\r\n\t") && s[0] != ' ' && s[len(s)-1] != ' ' {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// gradedCells says whether some cell of r has a fractional number of
// successes (a graded score).
func gradedCells(r *model.Responses) bool {
	for _, k := range r.Successes {
		if k != math.Trunc(k) {
			return true
		}
	}
	return false
}
