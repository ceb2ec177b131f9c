package analyze

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/jeirt/jeirt/train/sweep"
)

// DimRow is one embedding dimension d of a sweep: how many finished runs
// had it, the test scores of the one with the lowest validation log loss,
// and the mean test scores over all of them (the JE-IRT paper's
// dimension ablation, read from the runs).
type DimRow struct {
	Dim                       int
	Runs                      int
	BestRun                   string
	BestAccuracy, BestLogLoss float64
	BestValLogLoss            float64
	MeanAccuracy, MeanLogLoss float64
}

// Dims groups the finished runs of a collected sweep by their model.dim
// setting (key, "model.dim" when empty), in increasing d.
func Dims(t *sweep.SweepTable, key string) ([]DimRow, error) {
	if key == "" {
		key = "model.dim"
	}
	by := map[int][]sweep.SweepRow{}
	varied := false
	for _, k := range t.Keys {
		varied = varied || k == key
	}
	if !varied {
		return nil, fmt.Errorf("dims: the sweep in %s does not vary %s (it varies %v)", t.Dir, key, t.Keys)
	}
	for _, r := range t.Rows {
		if r.Status != "ok" {
			continue
		}
		for _, s := range r.Settings {
			if s.Key != key {
				continue
			}
			d, err := strconv.Atoi(s.Value)
			if err != nil {
				return nil, fmt.Errorf("dims: run %s: %s = %q is not a whole number", r.ID, key, s.Value)
			}
			by[d] = append(by[d], r)
		}
	}
	if len(by) == 0 {
		return nil, fmt.Errorf("dims: no finished runs in %s", t.Dir)
	}
	var out []DimRow
	for d, rows := range by {
		row := DimRow{Dim: d, Runs: len(rows), BestValLogLoss: math.Inf(1)}
		for _, r := range rows {
			row.MeanAccuracy += r.Test.Accuracy / float64(len(rows))
			row.MeanLogLoss += r.Test.LogLoss / float64(len(rows))
			if r.Val.LogLoss < row.BestValLogLoss {
				row.BestValLogLoss, row.BestRun = r.Val.LogLoss, r.ID
				row.BestAccuracy, row.BestLogLoss = r.Test.Accuracy, r.Test.LogLoss
			}
		}
		out = append(out, row)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Dim < out[b].Dim })
	return out, nil
}
