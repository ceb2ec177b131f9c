package analyzerun

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/train/analyze"
	"github.com/jeirt/jeirt/train/eval"
)

// LOBORow is one leave-benchmark-out run of `jeirt train` (split.by:
// benchmark): the held-out benchmark, the test accuracy of JE-IRT and of the
// baselines on it, and the alignment cosine.
type LOBORow struct {
	Run       string
	HeldOut   string
	Cells     int
	JEIRT     float64
	Baselines map[string]float64 // accuracy per baseline
	Cosine    float64
	Nearest   string
}

// LOBO is a table of leave-benchmark-out runs and, across them, how the
// alignment cosine goes with the held-out accuracy (JE-IRT's claim: the
// better aligned a held-out benchmark, the better it is predicted).
type LOBO struct {
	Rows []LOBORow
	// Pearson and Spearman correlation across runs between the cosine and
	// JE-IRT's held-out accuracy, and between the cosine and JE-IRT's gain
	// over the per-model mean (NaN with fewer than 3 runs).
	PearsonAcc, SpearmanAcc   float64
	PearsonGain, SpearmanGain float64
	// Note says why the correlations are undefined; "" when they are not.
	Note string
}

// CollectLOBO reads the metrics.json of each checkpoint folder in dirs; each
// must come from a split.by: benchmark run.
func CollectLOBO(dirs []string) (*LOBO, error) {
	out := &LOBO{}
	var cos, acc, gain []float64
	for _, d := range dirs {
		m, err := checkpoint.ReadRunMetrics(d)
		if err != nil {
			return nil, err
		}
		if m.SplitBy != "benchmark" || m.Alignment == nil {
			return nil, fmt.Errorf("%s: not a leave-benchmark-out run (split by %q); train it with split.by: benchmark", d, m.SplitBy)
		}
		row := LOBORow{Run: d, HeldOut: strings.Join(m.HeldOutBenchmarks, "+"), Cells: m.Test.N, JEIRT: float64(m.Test.Accuracy),
			Baselines: map[string]float64{}, Cosine: m.Alignment.Cosine, Nearest: m.Alignment.Nearest}
		for k, s := range m.Baselines {
			row.Baselines[k] = float64(s.Accuracy)
		}
		out.Rows = append(out.Rows, row)
		cos, acc = append(cos, row.Cosine), append(acc, row.JEIRT)
		if mm, ok := row.Baselines["model_mean"]; ok {
			gain = append(gain, row.JEIRT-mm)
		} else {
			gain = append(gain, math.NaN())
		}
	}
	out.PearsonAcc, out.SpearmanAcc, out.PearsonGain, out.SpearmanGain = math.NaN(), math.NaN(), math.NaN(), math.NaN()
	if len(cos) >= 3 {
		out.PearsonAcc, out.SpearmanAcc = pearson(cos, acc), eval.Spearman(cos, acc)
		out.PearsonGain, out.SpearmanGain = pearson(cos, gain), eval.Spearman(cos, gain)
		out.Note = eval.CorrelationNote("the cosine", cos, "the accuracy", acc)
	} else {
		out.Note = fmt.Sprintf("%d run(s); the correlations need 3", len(cos))
	}
	return out, nil
}

// LOBOBaselines are the baseline columns of lobo.csv, in order.
var LOBOBaselines = []string{"majority", "model_mean", "knn", "irt_2pl"}

// Write writes lobo.csv: one row per run, then a row "correlation" with
// Pearson's r of the cosine against the accuracy (in the jeirt column) and
// against the gain over model_mean (in the model_mean column).
func (l *LOBO) Write(w io.Writer) error {
	rows := [][]string{append(append([]string{"held_out", "cells", "jeirt"}, LOBOBaselines...), "cosine", "nearest", "run")}
	for _, r := range l.Rows {
		row := []string{r.HeldOut, strconv.Itoa(r.Cells), model.FormatFloat(r.JEIRT)}
		for _, b := range LOBOBaselines {
			v, ok := r.Baselines[b]
			if !ok {
				v = math.NaN()
			}
			row = append(row, model.FormatFloat(v))
		}
		rows = append(rows, append(row, model.FormatFloat(r.Cosine), r.Nearest, r.Run))
	}
	return analyze.WriteCSV(w, rows)
}

func pearson(x, y []float64) float64 {
	var mx, my float64
	n := 0.0
	for k := range x {
		if math.IsNaN(x[k]) || math.IsNaN(y[k]) {
			continue
		}
		mx += x[k]
		my += y[k]
		n++
	}
	if n < 2 {
		return math.NaN()
	}
	mx /= n
	my /= n
	var sxy, sxx, syy float64
	for k := range x {
		if math.IsNaN(x[k]) || math.IsNaN(y[k]) {
			continue
		}
		sxy += (x[k] - mx) * (y[k] - my)
		sxx += (x[k] - mx) * (x[k] - mx)
		syy += (y[k] - my) * (y[k] - my)
	}
	if sxx == 0 || syy == 0 {
		return math.NaN()
	}
	return sxy / math.Sqrt(sxx*syy)
}
