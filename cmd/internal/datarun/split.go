package datarun

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/train/eval"
)

// SplitFile is jeirt data split: it reads a responses file, splits it
// (Split) and writes Out/train.csv, val.csv and test.csv (long CSV, the
// observed cells only; a part with no cells has no file) and, when the input
// has item texts, items.csv with every item, atomically.
type SplitFile struct {
	Data    string
	Read    read.Options
	Options eval.SplitOptions
	Out     string
	Force   bool // replace Out
}

// Run splits and writes, then prints one line per part on w.
func (s SplitFile) Run(ctx context.Context, w io.Writer) error {
	r, _, err := read.File(s.Data, s.Read)
	if err != nil {
		return err
	}
	tr, va, te, err := eval.Split(r, s.Options)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	parts := []struct {
		name string
		r    *model.Responses
	}{{"train", tr}, {"val", va}, {"test", te}}
	err = fileio.WriteDirAtomic(s.Out, s.Force, func(tmp string) error {
		for _, p := range parts {
			if p.r.Len() == 0 {
				continue // nothing to write: a part with no cells has no file
			}
			if err := read.WriteCellsCSV(filepath.Join(tmp, p.name+".csv"), p.r); err != nil {
				return err
			}
		}
		if r.ItemText != nil {
			return read.WriteItemsCSV(filepath.Join(tmp, "items.csv"), r)
		}
		return nil
	})
	if err != nil {
		return err
	}
	by := s.Options.By
	if by == "" {
		by = "cell"
	}
	fmt.Fprintf(w, "split %s by %s (seed %d) into %s\n", s.Data, by, s.Options.Seed, s.Out)
	for _, p := range parts {
		if p.r.Len() == 0 {
			fmt.Fprintf(w, "  %-5s no cells: %s.csv not written\n", p.name, p.name)
			continue
		}
		fmt.Fprintf(w, "  %-5s %9d cells  %6d models  %7d items  mean correct %.4f\n",
			p.name, p.r.Len(), countRows(p.r.ByModel()), countRows(p.r.ByItem()), p.r.MeanCorrect())
	}
	return nil
}

// countRows is the number of rows of an index that have at least one cell.
func countRows(ix *model.Index) int {
	n := 0
	for r := 0; r+1 < len(ix.Start); r++ {
		if ix.Start[r+1] > ix.Start[r] {
			n++
		}
	}
	return n
}
