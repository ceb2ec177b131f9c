package analyzerun

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/analyze"
	"github.com/jeirt/jeirt/train/sweep"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
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
func Dims(t *sweep.Table, key string) ([]DimRow, error) {
	if key == "" {
		key = "model.dim"
	}
	by := map[int][]sweep.Row{}
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

// WriteDimsFigure draws test accuracy and log loss of the best run against
// the embedding dimension (log₂ axis), as SVG.
func WriteDimsFigure(w io.Writer, rows []DimRow) error {
	p, err := dimsPlot(rows)
	if err != nil {
		return err
	}
	return analyze.WriteSVG(w, p)
}

// WriteDimsFigurePNG draws WriteDimsFigure's figure as PNG.
func WriteDimsFigurePNG(w io.Writer, rows []DimRow) error {
	p, err := dimsPlot(rows)
	if err != nil {
		return err
	}
	return analyze.WritePNG(w, p)
}

func dimsPlot(rows []DimRow) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "Test scores against the embedding dimension d"
	p.X.Label.Text = "log₂ d"
	p.Y.Label.Text = "test accuracy / log loss"
	p.Add(plotter.NewGrid())
	var acc, ll plotter.XYs
	for _, r := range rows {
		x := math.Log2(float64(r.Dim))
		acc = append(acc, plotter.XY{X: x, Y: r.BestAccuracy})
		ll = append(ll, plotter.XY{X: x, Y: r.BestLogLoss})
	}
	for k, s := range []struct {
		name string
		xy   plotter.XYs
	}{{"accuracy", acc}, {"log loss", ll}} {
		l, pts, err := plotter.NewLinePoints(s.xy)
		if err != nil {
			return nil, err
		}
		l.Color, pts.Color = analyze.Palette[k], analyze.Palette[k]
		p.Add(l, pts)
		p.Legend.Add(s.name, l)
	}
	return p, nil
}

// WriteDims writes dims.csv.
func WriteDims(w io.Writer, rows []DimRow) error {
	out := [][]string{{"dim", "runs", "best_run", "best_val_log_loss", "best_test_accuracy", "best_test_log_loss", "mean_test_accuracy", "mean_test_log_loss"}}
	for _, r := range rows {
		out = append(out, []string{strconv.Itoa(r.Dim), strconv.Itoa(r.Runs), r.BestRun, model.FormatFloat(r.BestValLogLoss), model.FormatFloat(r.BestAccuracy),
			model.FormatFloat(r.BestLogLoss), model.FormatFloat(r.MeanAccuracy), model.FormatFloat(r.MeanLogLoss)})
	}
	return analyze.WriteCSV(w, out)
}
