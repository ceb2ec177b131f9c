package analyzerun

import (
	"fmt"
	"io"
	"math"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/read"
)

// ItemCategories returns the category of each of items (ids) from the item
// file at path (its category or benchmark column; "" for an id the file
// lacks). It is an error when the file has no such column or matches none of
// the ids.
func ItemCategories(items []string, path string) ([]string, error) {
	t, err := read.Items(path)
	if err != nil {
		return nil, err
	}
	if t.Group == nil {
		return nil, fmt.Errorf("%s has no category or benchmark column (make one with jeirt analyze groups)", path)
	}
	at := make(map[string]string, len(t.IDs))
	for k, id := range t.IDs {
		at[id] = t.Group[k]
	}
	cat := make([]string, len(items))
	found := 0
	for j, id := range items {
		if g, ok := at[id]; ok {
			cat[j] = g
			found++
		}
	}
	if found == 0 {
		return nil, fmt.Errorf("%s: none of its ids is one of the %d items", path, len(items))
	}
	return cat, nil
}

// Summary writes the table of runs and the correlations.
func (l *LOBO) Summary(w io.Writer) {
	fmt.Fprintf(w, "%-28s %7s %7s", "held out", "cells", "jeirt")
	for _, b := range LOBOBaselines {
		fmt.Fprintf(w, " %10s", b)
	}
	fmt.Fprintf(w, " %7s  %s\n", "cosine", "nearest")
	for _, r := range l.Rows {
		fmt.Fprintf(w, "%-28s %7d %7.4f", r.HeldOut, r.Cells, r.JEIRT)
		for _, b := range LOBOBaselines {
			if v, ok := r.Baselines[b]; ok {
				fmt.Fprintf(w, " %10.4f", v)
			} else {
				fmt.Fprintf(w, " %10s", "-")
			}
		}
		fmt.Fprintf(w, " %7.4f  %s\n", r.Cosine, r.Nearest)
	}
	f := func(x float64) model.Float { return model.Float(x) }
	fmt.Fprintf(w, "cosine vs jeirt accuracy: Pearson %.3f, Spearman %.3f; vs gain over model_mean: Pearson %.3f, Spearman %.3f\n",
		f(l.PearsonAcc), f(l.SpearmanAcc), f(l.PearsonGain), f(l.SpearmanGain))
	if l.Note != "" && math.IsNaN(l.SpearmanAcc+l.SpearmanGain) {
		fmt.Fprintf(w, "n/a: %s\n", l.Note)
	}
}

// DimsSummary writes the rows of Dims as a table.
func DimsSummary(w io.Writer, rows []DimRow) {
	fmt.Fprintf(w, "%6s %5s %10s %10s %10s %10s\n", "dim", "runs", "best acc", "best ll", "mean acc", "mean ll")
	for _, r := range rows {
		fmt.Fprintf(w, "%6d %5d %10.4f %10.4f %10.4f %10.4f\n", r.Dim, r.Runs, r.BestAccuracy, r.BestLogLoss, r.MeanAccuracy, r.MeanLogLoss)
	}
}
