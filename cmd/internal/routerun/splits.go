package routerun

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/jeirt/jeirt/encoder"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/progress"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/train/backend"
	"github.com/jeirt/jeirt/train/eval"
	"github.com/jeirt/jeirt/train/pipeline"
	"github.com/jeirt/jeirt/train/route"
	"github.com/jeirt/jeirt/train/router"
)

// splitConfig is the training config of every split: Config (or the
// defaults) with its data the responses of Data split by item, the
// overrides Set applied last.
func (e EvalRun) splitConfig() (*pipeline.Config, error) {
	cfg := pipeline.DefaultConfig()
	if e.Config != "" {
		var err error
		if cfg, err = pipeline.ReadConfig(e.Config); err != nil {
			return nil, err
		}
	}
	cfg.Data = pipeline.DataConfig{Responses: e.Data, Items: e.Read.Items, Format: e.Read.Format}
	if cfg.Data.Format == "" {
		cfg.Data.Format = "auto"
	}
	cfg.Split.By, cfg.Split.Val, cfg.Split.Test, cfg.Split.Seed, cfg.Split.Hold = "item", e.SplitVal, e.SplitTest, e.Seed, ""
	cfg.Output = "(not written: route eval --splits)"
	if e.Costs != "" && cfg.Route.Costs == "" {
		cfg.Route.Costs = e.Costs
	}
	if err := cfg.SetAll(e.Set); err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Split.By != "item" {
		return nil, model.FieldErrorf("Splits", "route eval {Splits} splits by item (the questions a router has never seen); split.by %s is not for it", cfg.Split.By)
	}
	return cfg, nil
}

// runSplits is route eval --splits: for each of e.Splits seeds, split the
// questions of Data, train a checkpoint on the training questions (with
// its routing cross-validation), and score every rule and the checkpoint's
// default on the test questions. The curve, the mean over the splits done,
// is rewritten after each split, so Ctrl-C keeps every completed split.
func (e EvalRun) runSplits(ctx context.Context, w io.Writer) error {
	log := e.Log
	if e.Checkpoint != "" || e.Train != "" || e.Val != "" {
		return model.FieldErrorf("Splits", "route eval: {Splits} makes its own checkpoints, training and validation questions; drop {Checkpoint}, {Train} and {Val}")
	}
	cfg, err := e.splitConfig()
	if err != nil {
		return err
	}
	device := e.Device
	if device == "" {
		if device, err = backend.Resolve(cfg.Train.Device); err != nil {
			return err
		}
	}
	all, _, err := read.File(e.Data, e.Read)
	if err != nil {
		return err
	}
	enc, err := encoder.Open(cfg.Encoder.Spec)
	if err != nil {
		return err
	}
	_, fitted := enc.(encoder.Fitter)
	var features []float32
	var short [][]float32 // the questions' titles and first sentences
	if !fitted {          // the same vectors for every split
		if features, err = pipeline.Encode(ctx, enc, all, all, cfg.Encoder.Cache, log); err != nil {
			return err
		}
		if short, err = pipeline.EncodeShort(ctx, enc, all); err != nil {
			return err
		}
	}
	opt, err := e.options(all.Models)
	if err != nil {
		return err
	}
	var xForeign [][]float32
	if e.Foreign != "" && !fitted {
		if xForeign, _, err = foreignVectors(ctx, enc, e.Foreign); err != nil {
			return err
		}
	}
	tr := cfg.Trainer(device)
	ratio := cfg.Split.Test / (1 - cfg.Split.Val - cfg.Split.Test)
	var splits [][]route.RoutePoint
	var ood, foreign []float64
	var oodAll, foreignAll share
	var byLength lengthFlags
	rules := map[string]int{}
	log.Printf("route eval: %d item splits of %s (%d models x %d questions; val %.0f%%, test %.0f%%), seeds %d-%d; each trains a checkpoint (%s encoder, %d-fold routing cross-validation)",
		e.Splits, e.Data, all.NumModels(), all.NumItems(), 100*cfg.Split.Val, 100*cfg.Split.Test, e.Seed, e.Seed+int64(e.Splits)-1, cfg.Encoder.Spec, cfg.Route.Folds)
	interrupted := false
	for s := 0; s < e.Splits; s++ {
		start := time.Now()
		seed := e.Seed + int64(s)
		trainR, valR, testR, err := eval.Split(all, eval.SplitOptions{Val: cfg.Split.Val, Test: cfg.Split.Test, Seed: seed, By: "item"})
		if err != nil {
			return err
		}
		if fitted { // fitted on this split's training questions
			if features, err = pipeline.Encode(ctx, enc, all, trainR, "", log); err != nil {
				return err
			}
			if short, err = pipeline.EncodeShort(ctx, enc, all); err != nil {
				return err
			}
		}
		trained, err := pipeline.TrainSplit(ctx, cfg, tr, trainR, valR, features, short, enc.Dim(), quiet(log))
		if ctx.Err() != nil {
			interrupted = true
			break
		}
		if err != nil {
			return fmt.Errorf("split %d (seed %d): %w", s+1, seed, err)
		}
		fit, rec, dom, rule := trained.Fit, trained.Routing, trained.Domain, trained.Rule
		fitTime := trained.FitTime
		ck := &checkpoint.Checkpoint{Model: fit.Model, Manifest: checkpoint.Manifest{Routing: rec}}
		m := fit.Model
		sopt := opt
		sopt.Reference = router.Reference(ck)
		sopt.BenchmarkReference = BenchmarkReference(m, trainR)
		sopt.Calibration = router.CalibrationOf(ck)
		if rule, sopt.Costs, err = recordedDefault(ck, sopt.Costs, sopt.Reference); err != nil {
			return fmt.Errorf("split %d (seed %d): %w", s+1, seed, err)
		}
		sopt.Default = &rule
		rules[rule.String()]++
		dim := enc.Dim()
		vecs := func(r *model.Responses) [][]float32 {
			x := make([][]float32, r.NumItems())
			for _, j := range r.Item {
				x[j] = features[int(j)*dim : int(j+1)*dim]
			}
			return x
		}
		q := func(r *model.Responses) [][]float32 {
			out := make([][]float32, r.NumItems())
			for _, j := range r.Item {
				out[j] = m.ItemEmbedding(int(j))
			}
			return out
		}
		var flagged share
		if dom != nil {
			sopt.OutOfDomain, flagged = domainFlags(dom, vecs(testR))
			ood = append(ood, flagged.rate())
			oodAll.k, oodAll.n = oodAll.k+flagged.k, oodAll.n+flagged.n
			if err := byLength.add(dom, features, short, dim, trainR, testR, cfg.Route.FalseFlagRate); err != nil {
				return fmt.Errorf("split %d (seed %d): %w", s+1, seed, err)
			}
		}
		delta, _, err := tuneMargin(m, valR, q(valR), sopt)
		if err != nil {
			return fmt.Errorf("split %d (seed %d): validation questions: %w", s+1, seed, err)
		}
		sopt.TunedMargin = &delta
		pts, err := route.RouteEval(m, testR, q(testR), sopt)
		if err != nil {
			return fmt.Errorf("split %d (seed %d): %w", s+1, seed, err)
		}
		if e.Foreign != "" && dom != nil {
			xf := xForeign
			if fitted {
				if xf, _, err = foreignVectors(ctx, enc, e.Foreign); err != nil {
					return err
				}
			}
			_, fs := domainFlags(dom, xf)
			foreign = append(foreign, fs.rate())
			foreignAll.k, foreignAll.n = foreignAll.k+fs.k, foreignAll.n+fs.n
		}
		splits = append(splits, pts)
		var def, best route.RoutePoint
		for _, p := range pts {
			switch {
			case p.Policy == "best-single":
				best = p
			case p.Rule == "default":
				def = p
			}
		}
		log.Printf("route eval: split %d/%d (seed %d): trained in %.1fs (best epoch %d), routing cross-validation %.1fs: default %s; %d test questions: default %.4f, best-single %.4f; out of domain %d of %d",
			s+1, e.Splits, seed, fitTime.Seconds(), fit.BestEpoch, (time.Since(start) - fitTime).Seconds(), rule, def.Items, def.Accuracy, best.Accuracy, flagged.k, flagged.n)
		if e.Out != "" && e.Out != "-" {
			cur := route.Combine(splits, ratio)
			if err := fileio.WriteFileAtomic(e.Out, func(w io.Writer) error { return route.WriteRouteCSV(w, cur) }); err != nil {
				return err
			}
		}
	}
	if len(splits) == 0 {
		return fmt.Errorf("route eval: interrupted before the first split finished; nothing was written")
	}
	if interrupted {
		log.Printf("route eval: interrupted during split %d of %d: the curve holds the %d completed splits", len(splits)+1, e.Splits, len(splits))
	}
	var parts []string
	for spec, n := range rules {
		parts = append(parts, fmt.Sprintf("%s in %d", spec, n))
	}
	fmt.Fprintf(w, "default rule recorded by the %d checkpoints (routing cross-validation over each split's training questions): %s\n", len(splits), strings.Join(sortedDesc(parts), ", "))
	if len(ood) > 0 {
		mean, se := route.CorrectedMeanSE(ood, ratio)
		fmt.Fprintf(w, "out-of-domain check on the held-out in-domain questions: flagged %.2f%% ± %.2f (mean over splits; %d of %d question tests), stated false-flag rate %.1f%%\n",
			100*mean, 100*se, oodAll.k, oodAll.n, 100*cfg.Route.FalseFlagRate)
	}
	byLength.write(w, cfg.Route.FalseFlagRate)
	if len(foreign) > 0 {
		mean, _ := route.CorrectedMeanSE(foreign, 0)
		fmt.Fprintf(w, "out-of-domain check on the %d foreign queries of %s: flagged %.1f%% (mean over splits; %d of %d)\n",
			foreignAll.n/len(foreign), e.Foreign, 100*mean, foreignAll.k, foreignAll.n)
	}
	return e.write(w, route.Combine(splits, ratio), len(splits))
}

// quiet passes on the routing cross-validation's summary lines, not one
// line per fold, nor the train stage's own lines (the split's line says
// them).
func quiet(log progress.Logf) progress.Logf {
	return func(format string, args ...any) {
		for _, p := range []string{"routing cross-validation: fold", "stopped: ", "routing: choosing", "routing: default rule"} {
			if strings.HasPrefix(format, p) {
				return
			}
		}
		log.Printf(format, args...)
	}
}

// sortedDesc sorts "spec in N" parts by N, largest first.
func sortedDesc(parts []string) []string {
	n := func(s string) int {
		var k int
		fmt.Sscanf(s[strings.LastIndex(s, " ")+1:], "%d", &k)
		return k
	}
	for i := 1; i < len(parts); i++ {
		for j := i; j > 0 && (n(parts[j]) > n(parts[j-1]) || n(parts[j]) == n(parts[j-1]) && parts[j] < parts[j-1]); j-- {
			parts[j], parts[j-1] = parts[j-1], parts[j]
		}
	}
	return parts
}

// lengthFlags counts, per query length (each short form, then the full
// text), the held-out in-domain questions the out-of-domain check flags:
// with the checkpoint's threshold (calibrated on every length) and with
// the threshold of the full texts alone, for comparison.
type lengthFlags struct {
	names            []string
	calibrated, full []share
}

func (l *lengthFlags) add(dom *checkpoint.Domain, features []float32, short [][]float32, dim int, trainR, testR *model.Responses, rate float64) error {
	seen := make([]bool, trainR.NumItems())
	var rows []int
	for _, j := range trainR.Item {
		if !seen[j] {
			seen[j], rows = true, append(rows, int(j))
		}
	}
	fullOnly, err := checkpoint.NewDomain(features, dim, rows, rate)
	if err != nil {
		return err
	}
	forms := append(slices.Clone(short), features)
	if l.names == nil {
		for k := range short {
			l.names = append(l.names, pipeline.ShortForms[k].Name)
		}
		l.names = append(l.names, "full text")
		l.calibrated, l.full = make([]share, len(forms)), make([]share, len(forms))
	}
	for f, x := range forms {
		vecs := make([][]float32, testR.NumItems())
		for _, j := range testR.Item {
			vecs[j] = x[int(j)*dim : int(j+1)*dim]
		}
		_, a := domainFlags(dom, vecs)
		_, b := domainFlags(fullOnly, vecs)
		l.calibrated[f].k, l.calibrated[f].n = l.calibrated[f].k+a.k, l.calibrated[f].n+a.n
		l.full[f].k, l.full[f].n = l.full[f].k+b.k, l.full[f].n+b.n
	}
	return nil
}

func (l *lengthFlags) write(w io.Writer, rate float64) {
	if l.names == nil {
		return
	}
	var parts []string
	for f, name := range l.names {
		c, u := l.calibrated[f], l.full[f]
		parts = append(parts, fmt.Sprintf("%s %.1f%% (%d of %d; calibrated on full texts only: %.1f%%)", name, 100*c.rate(), c.k, c.n, 100*u.rate()))
	}
	fmt.Fprintf(w, "out-of-domain false flags by query length on the held-out in-domain questions (all splits): %s; stated rate %.1f%%\n", strings.Join(parts, ", "), 100*rate)
}
