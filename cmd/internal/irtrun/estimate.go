package irtrun

// jeirt irt estimate end to end: read a fit folder and a few answers of new
// models, estimate each model's score on all of the fit's items (package
// train/estimate) and write estimates.csv (and categories.csv); or, with
// Eval, measure the estimators and the selection rules on held-out models
// of a response file and print the table.

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/catfile"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/irtfit"
	"github.com/jeirt/jeirt/model/progress"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/train/catbank"
	"github.com/jeirt/jeirt/train/estimate"
)

// Estimate is jeirt irt estimate. The zero value needs Fit, Answers and
// Out (or Eval with Data).
type Estimate struct {
	Fit, Answers, Out string
	Force             bool
	Read              read.Options
	Models            []string
	// Weights is a selection CSV of jeirt irt select (its weight column:
	// each anchor's share of the bank); "" means equal shares.
	Weights string
	// Categories is an item-group file (CSV with item and category, group
	// or benchmark, or GroupColumn); "" means the category column of the
	// fit's recorded items file, when it gives every item one.
	Categories, GroupColumn string
	// Estimators: one (none: estimate.Default), or with Eval a list
	// (none: all).
	Estimators []string
	Level      float64
	// PriorDF is the degrees of freedom of blend's Student-t priors on θ
	// and on its residual (estimate.Scorer.PriorDF; 0: the normal priors).
	PriorDF float64

	// Eval: measure instead, on Data, split By model. CV is Eval of every
	// estimator under one rule (default: estimate.DefaultRule), to choose
	// the estimator.
	Eval, CV bool
	Data, By string
	// SplitsOut, with Eval, is a CSV (split,model) of each split's
	// held-out models, so that a peer can be measured on the same splits
	// (scripts/peer_tinybench.py).
	SplitsOut string
	Fitting   irtfit.Settings
	Eval1     estimate.Eval
	Log       progress.Logf
	Version   string
}

// Run estimates (or, with Eval, evaluates) and writes the lines it prints to w.
func (e Estimate) Run(ctx context.Context, w io.Writer) error {
	if err := e.checkNumbers(); err != nil {
		return err
	}
	if e.CV && len(e.Eval1.Rules) == 0 {
		e.Eval1.Rules = []string{estimate.DefaultRule}
	}
	if e.Eval || e.CV {
		if e.Data == "" {
			return model.FieldErrorf("Data", "{Data} FILE is required: the responses whose models are held out and estimated")
		}
		return e.runEval(ctx, w)
	}
	if e.Fit == "" || e.Answers == "" {
		return model.FieldErrorf("Fit", "give {Fit} DIR and {Answers} FILE (the new models' answers), or {Eval} with {Data} FILE")
	}
	if len(e.Estimators) > 1 {
		return model.FieldErrorf("Estimators", "{Estimators}: one estimator, unless {Eval}")
	}
	est := estimate.Default
	if len(e.Estimators) == 1 && e.Estimators[0] != "default" {
		est = e.Estimators[0]
	}
	f, err := catbank.LoadScoring(e.Fit)
	if err != nil {
		return err
	}
	if e.Categories != "" {
		if err := f.SetGroups(e.Categories, e.GroupColumn); err != nil {
			return err
		}
	} else if items := f.Folder.Doc.Settings.Items; items != "" && f.SetGroups(items, "") != nil {
		f.Bank.Group, f.Bank.Groups = nil, nil // the fit's items file has no category for every item: none
	}
	fit := f.Folder.IRT()
	s := &estimate.Scorer{Fit: fit, Prior: f.Prior, Level: e.Level, PriorDF: e.PriorDF, Group: f.Bank.Group, Groups: f.Bank.Groups}
	if f.Folder.Doc.Settings.Bootstrap > 0 {
		rk := fit.Rank
		s.SEA, s.SED = make([]float64, len(fit.B)*rk), make([]float64, len(fit.B))
		for j, it := range f.Folder.Items {
			s.SED[j] = it.SED
			copy(s.SEA[j*rk:(j+1)*rk], it.SEA)
		}
	}
	if est == estimate.GPIRT || est == estimate.Blend {
		if err := e.gpFromFitData(ctx, f.Dir, f.Folder, s); err != nil && (est == estimate.GPIRT || errors.Is(err, irtfit.ErrDataChanged)) {
			return err
		} else if err != nil {
			e.Log.Printf("blend: p-IRT's error on models new to the fit is not measured (%v); the residual is shrunk by a James-Stein factor instead", err)
		}
	}
	if err := s.Prepare(); err != nil {
		return err
	}
	var weight map[int]float64
	if e.Weights != "" {
		if weight, err = readWeights(e.Weights, fit); err != nil {
			return err
		}
	}
	models, items, ys, trials, err := f.ReadAnswers(e.Answers, e.Read, e.Models, e.Log)
	if err != nil {
		return err
	}
	var all, cats []catfile.Estimate
	unlisted, partial := 0, false
	for k, name := range models {
		if err := ctx.Err(); err != nil {
			return err
		}
		a := estimate.Answers{Items: items[k], Y: ys[k]}
		if trials != nil {
			a.Trials = trials[k]
		}
		if weight != nil {
			var n int
			if a, n = keepListed(a, weight); len(a.Items) == 0 {
				return fmt.Errorf("%s: model %q answered none of the items %s lists; give the answers to the selected items", e.Answers, name, e.Weights)
			}
			unlisted += n
		} else {
			partial = partial || len(a.Items) < len(fit.Items)
		}
		sc, err := s.Estimate(est, a, nil)
		if err != nil {
			return fmt.Errorf("model %q: %w", name, err)
		}
		for g, x := range sc {
			row := catfile.Estimate{Model: name, Category: x.Group, NAnswered: x.NAnswered, Observed: x.Observed,
				Score: x.Score, Lo: x.Lo, Hi: x.Hi, Theta: x.Theta, SE: x.SE}
			if g == 0 {
				all = append(all, row)
				fmt.Fprintf(w, "%s: score %.4f [%.4f, %.4f] on %d items, from %d answered (mean %.4f)\n", name, x.Score, x.Lo, x.Hi, x.N, x.NAnswered, x.Observed)
			} else {
				cats = append(cats, row)
			}
		}
	}
	if unlisted > 0 {
		e.Log.Printf("estimate: left out %d answers to items %s does not list: only the selected items' answers count, each with its weight", unlisted, e.Weights)
	}
	if partial && est != estimate.IRT {
		e.Log.Printf("warning: answers to part of the fit's %d items, without --weights, count equally; if they are the items jeirt irt select chose (anchor, anchor-rank, anchor-correct or random), pass its CSV as --weights so that each stands for its share of the bank", len(fit.Items))
	}
	if e.Out == "" {
		return nil
	}
	rk := fit.Rank
	return fileio.WriteDirAtomic(e.Out, e.Force, func(tmp string) error {
		if err := fileio.WriteFileAtomic(filepath.Join(tmp, "estimates.csv"), func(w io.Writer) error {
			return catfile.WriteEstimates(w, rk, false, all)
		}); err != nil || cats == nil {
			return err
		}
		return fileio.WriteFileAtomic(filepath.Join(tmp, "categories.csv"), func(w io.Writer) error {
			return catfile.WriteEstimates(w, rk, true, cats)
		})
	})
}

// gpFromFitData sets gp-IRT's b and v and blend's τ from the responses the
// fit was made from (its recorded data): v their answer variance, b and τ
// p-IRT's error on every fifth of the fit's models, held out of a refit of
// the rest with the fit's settings (estimate.ValidationBias, as --eval).
func (e Estimate) gpFromFitData(ctx context.Context, dir string, folder *irtfit.Folder, s *estimate.Scorer) error {
	r, err := readFitDataLogged(dir, folder, e.Log)
	if err != nil {
		return fmt.Errorf("gp-irt needs the responses the fit was made from, to set its weight: %w", err)
	}
	set := folder.Doc.Settings
	if r.NumItems() != len(folder.Items) {
		return fmt.Errorf("%s now has %d items, the fit has %d", set.Data, r.NumItems(), len(folder.Items))
	}
	s.GPVar = estimate.AnswerVariance(r)
	fitter, err := FitterFor(set, r)
	if err != nil {
		return err
	}
	fitter.Accelerate = true
	e.Log.Printf("estimate: refitting %s without every fifth model, to measure p-IRT's error on models new to the fit", set.Data)
	s.GPBias, s.ResidSD, err = estimate.ValidationBias(ctx, fitter, r, s.Level)
	return err
}

// keepListed keeps a's answers to the items weight lists, each with its
// weight, and says how many it left out: with --weights, the answers to
// the selected items are the ones that count, wherever the answers file
// holds more.
func keepListed(a estimate.Answers, weight map[int]float64) (estimate.Answers, int) {
	var out estimate.Answers
	for i, j := range a.Items {
		wj, ok := weight[j]
		if !ok {
			continue
		}
		out.Items, out.Y, out.Weight = append(out.Items, j), append(out.Y, a.Y[i]), append(out.Weight, wj)
		if a.Trials != nil {
			out.Trials = append(out.Trials, a.Trials[i])
		}
	}
	return out, len(a.Items) - len(out.Items)
}

// readWeights reads the weights of a selection CSV, by item index.
func readWeights(path string, fit *model.IRT) (map[int]float64, error) {
	byID, err := catfile.ReadWeights(path)
	if err != nil {
		return nil, err
	}
	idx := make(map[string]int, len(fit.Items))
	for j, id := range fit.Items {
		idx[id] = j
	}
	out := make(map[int]float64, len(byID))
	for id, wt := range byID {
		j, ok := idx[id]
		if !ok {
			return nil, fmt.Errorf("%s: item %q is not in the fit", path, id)
		}
		out[j] = wt
	}
	return out, nil
}

func (e Estimate) runEval(ctx context.Context, w io.Writer) error {
	r, err := ReadLogged(e.Data, e.Read, e.Log, false)
	if err != nil {
		return err
	}
	for _, rk := range append([]int{e.Fitting.Rank}, e.Eval1.Ranks...) {
		if err := checkRank(rk, r); err != nil {
			return fmt.Errorf("%s: %w", e.Data, err)
		}
	}
	if e.By != "" && e.By != "model" {
		return model.FieldErrorf("By", "{By} %q: only model splits are measured (the models held out, every item kept)", e.By)
	}
	ev := e.Eval1
	ev.PriorDF = e.PriorDF
	ev.Estimators = e.Estimators
	e.Fitting.Accelerate = true
	if ev.Fitter, err = FitterFor(e.Fitting, r); err != nil {
		return err
	}
	ev.Log = e.Log
	ev.Level = e.Level
	var splits bytes.Buffer
	if e.SplitsOut != "" {
		if _, err := fileio.CheckOutput(fileio.Output{Path: e.SplitsOut, Force: e.Force, Inputs: []string{e.Data}}); err != nil {
			return err
		}
		cw := csv.NewWriter(&splits)
		_ = cw.Write([]string{"split", "model"})
		ev.OnSplit = func(split int, heldOut []string) error {
			for _, m := range heldOut {
				if err := cw.Write([]string{strconv.Itoa(split), m}); err != nil {
					return err
				}
			}
			cw.Flush()
			return cw.Error()
		}
	}
	var ranks []estimate.RankChoice
	ev.OnRank = func(_ int, c estimate.RankChoice) error {
		ranks = append(ranks, c)
		return nil
	}
	cells, k, err := ev.Run(ctx, r)
	if err != nil {
		return err
	}
	if e.SplitsOut != "" {
		if err := fileio.WriteFileAtomic(e.SplitsOut, func(w io.Writer) error {
			_, err := w.Write(splits.Bytes())
			return err
		}); err != nil {
			return err
		}
	}
	if err := WriteEvalTable(w, e.Data, r, k, ev, cells); err != nil {
		return err
	}
	return writeRankTable(w, ev.Ranks, ranks)
}

// WriteEvalTable prints the evaluation as a Markdown table, lowest MAE
// marked *.
func WriteEvalTable(w io.Writer, data string, r *model.Responses, k int, ev estimate.Eval, cells []estimate.EvalCell) error {
	best := 0
	for c := range cells {
		if cells[c].MAE < cells[best].MAE {
			best = c
		}
	}
	seeds := len(cells[0].PerSplit)
	fmt.Fprintf(w, "%s: %d models x %d items; K = %d items; %d splits holding out %.0f%% of the models\n\n", data, r.NumModels(), r.NumItems(), k, seeds, 100*fracOr(ev.TestFraction, 0.2))
	fmt.Fprintln(w, "| rule | estimator | MAE (mean ± sd over splits) | 95% coverage | mean width | lowest tenth: MAE, coverage | highest tenth: MAE, coverage |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	tail := func(t estimate.Tail) string {
		if t.N == 0 {
			return "n/a (no held-out model)"
		}
		return fmt.Sprintf("%.4f, %.1f%% (%d)", t.MAE, 100*t.Coverage, t.N)
	}
	for c, x := range cells {
		mark := ""
		if c == best {
			mark = " *"
		}
		fmt.Fprintf(w, "| %s | %s | %.4f ± %.4f%s | %.1f%% | %.3f | %s | %s |\n", x.Rule, x.Estimator, x.MAE, x.MAESD, mark, 100*x.Coverage, x.Width, tail(x.Low), tail(x.High))
	}
	fmt.Fprintln(w, "\nlowest and highest tenth: the held-out estimates of the models in the bottom and top 10% of accuracy on --data (estimates counted in parentheses)")
	var def string
	for _, x := range cells {
		if x.Rule == estimate.DefaultRule && x.Estimator == estimate.Default {
			def = fmt.Sprintf("\ndefault (%s + %s): MAE %.4f", x.Rule, x.Estimator, x.MAE)
		}
	}
	if def != "" {
		fmt.Fprintln(w, def)
	}
	return nil
}

func fracOr(x, d float64) float64 {
	if x == 0 {
		return d
	}
	return x
}
