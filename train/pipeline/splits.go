package pipeline

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/jeirt/jeirt/encoder"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/train/backend"
	"github.com/jeirt/jeirt/train/eval"
	"github.com/jeirt/jeirt/train/jeirt"
)

// SplitKinds are the splits RunSplits runs: questions seen in training
// (cell), new questions (item), new models onboarded from
// split.onboard_fraction of their cells (model).
var SplitKinds = []string{"cell", "item", "model"}

// SplitRun is one training of RunSplits: its split, seed and metrics (as
// metrics.json would hold them).
type SplitRun struct {
	By      string
	Seed    int64
	Metrics *checkpoint.RunMetrics
}

// RunSplits is jeirt train --splits n: for each of SplitKinds and each of
// n seeds (split.seed, split.seed+1, ...), the config's data split that
// way, JE-IRT trained on it (without the routing cross-validation) and
// scored with the baselines on its test cells, as Run does, but nothing
// written. It stops at the first error, or with ctx's, returning the runs
// done.
func RunSplits(ctx context.Context, cfg *Config, n int, opt Options) ([]SplitRun, error) {
	log := opt.Log
	if n < 1 {
		return nil, model.FieldErrorf("Splits", "{Splits} must be at least 1, got %d", n)
	}
	if cfg.Data.Responses == "" {
		return nil, model.FieldErrorf("Splits", "{Splits} splits data.responses; a config of given train, val and test files has one split")
	}
	if err := cfg.CheckInputs(); err != nil {
		return nil, err
	}
	device := opt.Device
	if device == "" {
		var err error
		if device, err = backend.Resolve(cfg.Train.Device); err != nil {
			return nil, err
		}
	}
	enc, err := encoder.Open(cfg.Encoder.Spec)
	if err != nil {
		return nil, err
	}
	var runs []SplitRun
	for _, by := range SplitKinds {
		for s := 0; s < n; s++ {
			c := *cfg
			c.Split.By, c.Split.Seed, c.Split.Hold, c.Route.Folds = by, cfg.Split.Seed+int64(s), "", 0
			met, err := runOneSplit(ctx, &c, enc, device, opt)
			if err != nil {
				return runs, fmt.Errorf("split by %s, seed %d: %w", by, c.Split.Seed, err)
			}
			runs = append(runs, SplitRun{By: by, Seed: c.Split.Seed, Metrics: met})
			log.Printf("split by %s, seed %d: jeirt accuracy %.4f, log loss %.4f on %d test cells", by, c.Split.Seed, met.Test.Accuracy, met.Test.LogLoss, met.Test.N)
		}
	}
	return runs, nil
}

// PrintSplits is RunSplits with its tables (SummariseSplits,
// PrintSplitTables) written to w: those of the runs done, also when it
// stops early.
func PrintSplits(ctx context.Context, w io.Writer, cfg *Config, n int, opt Options) error {
	runs, err := RunSplits(ctx, cfg, n, opt)
	PrintSplitTables(w, SummariseSplits(runs))
	return err
}

// runOneSplit trains and scores one split of RunSplits.
func runOneSplit(ctx context.Context, cfg *Config, enc encoder.Encoder, device string, opt Options) (*checkpoint.RunMetrics, error) {
	trainR, valR, testR, all, err := LoadSplits(cfg, nil)
	if err != nil {
		return nil, err
	}
	byModel := cfg.Split.By == "model"
	var heldOut []string
	trainAll := trainR
	if byModel {
		heldOut = modelsWithCells(testR)
		trainR, valR = keepModelsWithCells(trainR, valR)
	}
	features, err := Encode(ctx, enc, all, trainR, cfg.Encoder.Cache, nil)
	if err != nil {
		return nil, err
	}
	tr := cfg.Trainer(device)
	tr.MaxMemory = opt.MaxMemory
	fit, err := tr.Fit(ctx, trainR, valR, features, enc.Dim())
	if err != nil {
		return nil, err
	}
	if fit.Interrupted {
		return nil, ctx.Err()
	}
	met := &checkpoint.RunMetrics{BestEpoch: fit.BestEpoch, EpochsRun: fit.EpochsRun, SplitBy: cfg.Split.By, HeldOutModels: heldOut,
		Cells: map[string]int{"train": trainR.Len(), "val": valR.Len(), "test": testR.Len()}}
	if byModel {
		ck := &checkpoint.Checkpoint{Model: fit.Model}
		err = newModelExperiment(ctx, cfg, opt, ck, tr, trainR, valR, trainAll, testR, features, enc.Dim(), met, nil)
		return met, err
	}
	met.Test = eval.ScoreResponses(jeirt.PredictJEIRT(fit.Model, testR), testR).Scores()
	bl, err := RunBaselines(ctx, trainR, valR, testR, features, enc.Dim(), device, opt.MaxMemory, nil)
	if err != nil {
		return nil, err
	}
	met.Baselines, met.BaselineNotes, met.BaselineSettings, met.KNNK = bl.Scores, bl.Notes, bl.Settings, bl.KNNK
	return met, nil
}

// Spread is a mean over splits and the spread around it: the sample
// standard deviation (0 for one split).
type Spread struct {
	Mean, SD float64
	N        int
}

// spreadOf is the Spread of xs.
func spreadOf(xs []float64) Spread {
	s := Spread{N: len(xs)}
	for _, x := range xs {
		s.Mean += x
	}
	s.Mean /= float64(len(xs))
	if len(xs) > 1 {
		for _, x := range xs {
			s.SD += (x - s.Mean) * (x - s.Mean)
		}
		s.SD = math.Sqrt(s.SD / float64(len(xs)-1))
	}
	return s
}

// SplitTable is, for one split kind and each method (jeirt first, then the
// baselines in the table's order), the Spread of accuracy, AUC and log
// loss over the runs, and why a method that was never scored is n/a.
type SplitTable struct {
	By      string
	Runs    int
	Methods []string
	Acc     map[string]Spread
	AUC     map[string]Spread
	LogLoss map[string]Spread
	NA      map[string]string
}

// SummariseSplits groups runs by split kind (SplitKinds' order) into
// SplitTables.
func SummariseSplits(runs []SplitRun) []SplitTable {
	var out []SplitTable
	for _, by := range SplitKinds {
		t := SplitTable{By: by, Acc: map[string]Spread{}, AUC: map[string]Spread{}, LogLoss: map[string]Spread{}, NA: map[string]string{}}
		acc, auc, ll := map[string][]float64{}, map[string][]float64{}, map[string][]float64{}
		add := func(name string, s model.Scores) {
			acc[name], auc[name], ll[name] = append(acc[name], float64(s.Accuracy)), append(auc[name], float64(s.AUC)), append(ll[name], float64(s.LogLoss))
		}
		for _, r := range runs {
			if r.By != by {
				continue
			}
			t.Runs++
			add("jeirt", r.Metrics.Test)
			for name, s := range r.Metrics.Baselines {
				add(name, s)
			}
			for name, note := range r.Metrics.BaselineNotes {
				if note.NA != "" {
					t.NA[name] = note.NA
				}
			}
		}
		if t.Runs == 0 {
			continue
		}
		for name := range acc {
			t.Methods = append(t.Methods, name)
			t.Acc[name], t.AUC[name], t.LogLoss[name] = spreadOf(acc[name]), spreadOf(auc[name]), spreadOf(ll[name])
		}
		for name := range t.NA {
			if _, ok := acc[name]; !ok {
				t.Methods = append(t.Methods, name)
			}
		}
		slices.SortFunc(t.Methods, func(a, b string) int {
			rank := func(n string) int {
				if n == "jeirt" {
					return -1
				}
				if k := slices.Index(baselineOrder, n); k >= 0 {
					return k
				}
				return len(baselineOrder)
			}
			if d := rank(a) - rank(b); d != 0 {
				return d
			}
			return strings.Compare(a, b)
		})
		out = append(out, t)
	}
	return out
}

// PrintSplitTables writes each split kind's table: per method, accuracy,
// AUC and log loss as mean ± standard deviation over the splits; a method
// scored in fewer runs than the table has says in how many.
func PrintSplitTables(w io.Writer, tables []SplitTable) {
	for _, t := range tables {
		fmt.Fprintf(w, "\nsplit by %s: mean ± sd over %d splits\n", t.By, t.Runs)
		fmt.Fprintf(w, "%-12s %17s %17s %17s\n", "method", "accuracy", "AUC", "logloss")
		for _, m := range t.Methods {
			a, ok := t.Acc[m]
			if !ok {
				fmt.Fprintf(w, "%-12s n/a (%s)\n", m, t.NA[m])
				continue
			}
			cell := func(s Spread) string { return fmt.Sprintf("%.4f ± %.4f", model.Float(s.Mean), model.Float(s.SD)) }
			fmt.Fprintf(w, "%-12s %17s %17s %17s", m, cell(a), cell(t.AUC[m]), cell(t.LogLoss[m]))
			if a.N < t.Runs {
				fmt.Fprintf(w, "  (%d of %d splits)", a.N, t.Runs)
			}
			fmt.Fprintln(w)
		}
	}
}
