package sweep

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/train/eval"
)

// Table is every run of a sweep with its validation and test scores.
type Table struct {
	Dir  string
	Keys []string // the varied config keys, in grid order
	Rows []Row
	Best int // index into Rows of the finished run with the lowest validation log-loss; -1 if none
}

// Row is one run of a Table.
type Row struct {
	ID       string
	Settings []Setting
	// Status is "ok", "missing" (no metrics.json yet), "interrupted" or
	// "unreadable" (see Err).
	Status          string
	Err             string
	Val, Test       eval.Metrics // NaN where not available
	BestEpoch       int
	EpochsRun       int
	SecondsPerEpoch float64
	Checkpoint      string // relative to the sweep folder
}

func nanMetrics() eval.Metrics { return eval.FromScores(model.NoScores()) }

// Collect reads the manifest and every run's checkpoint/metrics.json.
// Runs not finished yet are rows with status "missing"; the best run is the
// finished one with the lowest validation log-loss (ties: the lower run id).
func Collect(dir string) (*Table, error) {
	man, err := ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	t := &Table{Dir: dir, Keys: man.Keys, Best: -1}
	for _, r := range man.Runs {
		row := Row{ID: r.ID, Settings: r.Settings, Val: nanMetrics(), Test: nanMetrics(),
			Checkpoint: filepath.Join(r.Dir, "checkpoint"), SecondsPerEpoch: math.NaN()}
		m, err := checkpoint.ReadRunMetrics(filepath.Join(dir, r.Dir, "checkpoint"))
		switch {
		case errors.Is(err, os.ErrNotExist):
			row.Status = "missing"
		case err != nil:
			row.Status, row.Err = "unreadable", err.Error()
		default:
			row.Status = "ok"
			if m.Interrupted {
				row.Status = "interrupted"
			}
			row.Val, row.Test = eval.FromScores(m.Val), eval.FromScores(m.Test)
			row.BestEpoch, row.EpochsRun, row.SecondsPerEpoch = m.BestEpoch, m.EpochsRun, m.SecondsPerEpoch
		}
		t.Rows = append(t.Rows, row)
	}
	for k, row := range t.Rows {
		if row.Status != "ok" || math.IsNaN(row.Val.LogLoss) {
			continue
		}
		if t.Best < 0 || row.Val.LogLoss < t.Rows[t.Best].Val.LogLoss {
			t.Best = k
		}
	}
	return t, nil
}

// Finished counts the rows with status ok.
func (t *Table) Finished() int {
	n := 0
	for _, r := range t.Rows {
		if r.Status == "ok" {
			n++
		}
	}
	return n
}

var metricColumns = []string{"val_log_loss", "val_accuracy", "val_auc", "val_brier",
	"test_log_loss", "test_accuracy", "test_auc", "test_brier", "test_ece"}

func (r *Row) metricValues() []float64 {
	return []float64{r.Val.LogLoss, r.Val.Accuracy, r.Val.AUC, r.Val.Brier,
		r.Test.LogLoss, r.Test.Accuracy, r.Test.AUC, r.Test.Brier, r.Test.ECE}
}

func (r *Row) setting(key string) string {
	for _, s := range r.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}

func formatMetric(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', 6, 64)
}

// WriteCSV writes the table: run, the varied keys, status, best, the
// validation and test metrics, epochs and the checkpoint folder.
func (t *Table) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	head := append(append([]string{"run"}, t.Keys...), "status", "best")
	head = append(append(head, metricColumns...), "best_epoch", "epochs_run", "seconds_per_epoch", "checkpoint")
	if err := cw.Write(head); err != nil {
		return err
	}
	for k := range t.Rows {
		r := &t.Rows[k]
		rec := []string{r.ID}
		for _, key := range t.Keys {
			rec = append(rec, r.setting(key))
		}
		best := ""
		if k == t.Best {
			best = "yes"
		}
		rec = append(rec, r.Status, best)
		for _, v := range r.metricValues() {
			rec = append(rec, formatMetric(v))
		}
		epochs := func(n int) string {
			if r.Status == "missing" || r.Status == "unreadable" {
				return ""
			}
			return strconv.Itoa(n)
		}
		rec = append(rec, epochs(r.BestEpoch), epochs(r.EpochsRun), formatMetric(r.SecondsPerEpoch), r.Checkpoint)
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteCSVFile writes the table to path atomically.
func (t *Table) WriteCSVFile(path string) error {
	return fileio.WriteFileAtomic(path, t.WriteCSV)
}

// Print writes the table aligned for a terminal, names the best run and,
// when runs differ only by seed, the mean and spread over seeds per setting.
func (t *Table) Print(w io.Writer) {
	head := append(append([]string{"run"}, t.Keys...), "status", "val loss", "val acc", "val AUC", "test loss", "test acc", "test AUC", "epochs")
	rows := [][]string{head}
	for k := range t.Rows {
		r := &t.Rows[k]
		rec := []string{r.ID}
		if k == t.Best {
			rec[0] += " *"
		}
		for _, key := range t.Keys {
			rec = append(rec, r.setting(key))
		}
		f := func(v float64) string {
			if math.IsNaN(v) {
				return "-"
			}
			return strconv.FormatFloat(v, 'f', 4, 64)
		}
		ep := "-"
		if r.Status == "ok" || r.Status == "interrupted" {
			ep = fmt.Sprintf("%d/%d", r.BestEpoch, r.EpochsRun)
		}
		rec = append(rec, r.Status, f(r.Val.LogLoss), f(r.Val.Accuracy), f(r.Val.AUC), f(r.Test.LogLoss), f(r.Test.Accuracy), f(r.Test.AUC), ep)
		rows = append(rows, rec)
	}
	printAligned(w, rows)
	for _, r := range t.Rows {
		if r.Err != "" {
			fmt.Fprintf(w, "run %s: %s\n", r.ID, r.Err)
		}
	}
	fmt.Fprintf(w, "%d of %d runs finished\n", t.Finished(), len(t.Rows))
	if t.Best < 0 {
		fmt.Fprintln(w, "best: none yet (no finished run)")
		return
	}
	b := t.Rows[t.Best]
	val, test := b.Val.Scores(), b.Test.Scores()
	why := ""
	if u := test.Undefined(); u != "" {
		why = " (" + u + ")"
	}
	fmt.Fprintf(w, "best by validation log-loss: run %s (%s): val log-loss %.4f, test log-loss %.4f, test accuracy %.4f, test AUC %.4f%s\n",
		b.ID, FormatSettings(b.Settings), val.LogLoss, test.LogLoss, test.Accuracy, test.AUC, why)
	fmt.Fprintf(w, "checkpoint: %s\n", filepath.Join(t.Dir, b.Checkpoint))
	t.printSeedSummary(w)
}

// printSeedSummary averages finished runs over train.seed for each setting of
// the other keys, when there is more than one seed.
func (t *Table) printSeedSummary(w io.Writer) {
	others := make([]string, 0, len(t.Keys))
	hasSeed := false
	for _, k := range t.Keys {
		if k == "train.seed" {
			hasSeed = true
			continue
		}
		others = append(others, k)
	}
	if !hasSeed {
		return
	}
	type agg struct {
		settings []Setting
		val      []float64
		test     []float64
	}
	groups := map[string]*agg{}
	var order []string
	for _, r := range t.Rows {
		var st []Setting
		for _, k := range others {
			st = append(st, Setting{k, r.setting(k)})
		}
		key := FormatSettings(st)
		g, ok := groups[key]
		if !ok {
			g = &agg{settings: st}
			groups[key] = g
			order = append(order, key)
		}
		if r.Status == "ok" {
			g.val = append(g.val, r.Val.LogLoss)
			g.test = append(g.test, r.Test.Accuracy)
		}
	}
	seeds := 0
	for _, g := range groups {
		seeds = max(seeds, len(g.val))
	}
	if seeds < 2 {
		return
	}
	fmt.Fprintln(w, "\nmean ± sd over seeds:")
	rows := [][]string{{"setting", "runs", "val loss", "test acc"}}
	bestKey, bestVal := "", math.Inf(1)
	for _, key := range order {
		g := groups[key]
		if len(g.val) == 0 {
			rows = append(rows, []string{key, "0", "-", "-"})
			continue
		}
		mv, sv := meanSD(g.val)
		mt, st := meanSD(g.test)
		if mv < bestVal {
			bestKey, bestVal = key, mv
		}
		rows = append(rows, []string{key, strconv.Itoa(len(g.val)), fmt.Sprintf("%.4f ± %.4f", mv, sv), fmt.Sprintf("%.4f ± %.4f", mt, st)})
	}
	printAligned(w, rows)
	fmt.Fprintf(w, "best setting by mean validation log-loss: %s (%.4f)\n", bestKey, bestVal)
}

func meanSD(x []float64) (mean, sd float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	if len(x) < 2 {
		return mean, 0
	}
	for _, v := range x {
		sd += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(sd / float64(len(x)-1))
}

func printAligned(w io.Writer, rows [][]string) {
	width := map[int]int{}
	for _, r := range rows {
		for c, v := range r {
			width[c] = max(width[c], len([]rune(v)))
		}
	}
	for _, r := range rows {
		parts := make([]string, len(r))
		for c, v := range r {
			parts[c] = v + strings.Repeat(" ", width[c]-len([]rune(v)))
		}
		fmt.Fprintln(w, strings.TrimRight(strings.Join(parts, "  "), " "))
	}
}
