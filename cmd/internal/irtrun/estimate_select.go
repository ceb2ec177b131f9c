package irtrun

import (
	"context"
	"fmt"
	"io"
	"math"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/catfile"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/irtfit"
	"github.com/jeirt/jeirt/model/progress"
	"github.com/jeirt/jeirt/train/estimate"
)

// Select is jeirt irt select: the fit folder, how many items to keep (a
// fraction, or Budget items), the rule and its settings, and the CSV to write.
// An empty Rule is irt estimate's default rule (estimate.DefaultRule) when
// Budget is given, the tinyBenchmarks workflow of select, run, estimate;
// and info (the most informative items, a short form) for a fraction.
type Select struct {
	Fit, Out, Rule string
	Keep           float64
	Budget, Bins   int
	Seed           int64
	ExcludeFlagged bool
}

// Run runs SelectItems with s's settings and returns the line to print.
func (s Select) Run(ctx context.Context, device string, log progress.Logf) (string, error) {
	rule := s.Rule
	if rule == "" {
		rule = estimate.Info
		if s.Budget > 0 {
			rule = estimate.DefaultRule
		}
	}
	return SelectItems(ctx, s.Fit, s.Keep, s.Budget, s.Seed, s.Out, device, rule, s.Bins, s.ExcludeFlagged, log)
}

// SelectItems chooses, for the rules of package train/estimate (anchor,
// anchor-rank, anchor-correct, random), budget items of the fit in dir (or
// round(keep·J) when budget is 0), seeded by seed, and writes them with
// their weights to out; for the others it is SelectFile with the fraction
// keep (budget/J when budget > 0).

func SelectItems(ctx context.Context, dir string, keep float64, budget int, seed int64, out, device, rule string, bins int, excludeFlagged bool, log progress.Logf) (string, error) {
	folder, err := irtfit.Read(dir)
	if err != nil {
		return "", err
	}
	J := len(folder.Items)
	if budget < 0 || budget > J {
		return "", model.FieldErrorf("Budget", "{Budget} %d must be in [1, %d] (the fit's items)", budget, J)
	}
	if budget > 0 {
		keep = float64(budget) / float64(J)
	} else {
		if err := checkKeep(keep); err != nil {
			return "", err
		}
		budget = max(1, int(math.Round(keep*float64(J))))
	}
	switch rule {
	case estimate.Anchor, estimate.AnchorCorrect, estimate.AnchorRank, estimate.Random:
	default:
		return SelectFile(ctx, dir, keep, out, device, rule, bins, excludeFlagged, log)
	}
	fit := folder.IRT()
	var r *model.Responses
	if rule == estimate.AnchorCorrect {
		if r, err = readFitDataLogged(dir, folder, log); err != nil {
			return "", fmt.Errorf("--rule %s clusters the answers the fit was made from: %w", rule, err)
		}
		set := folder.Doc.Settings
		if r.NumItems() != J {
			return "", fmt.Errorf("%s now has %d items, the fit in %s has %d", set.Data, r.NumItems(), dir, J)
		}
	}
	items, weight, err := estimate.Select(rule, fit, r, budget, uint64(seed))
	if err != nil {
		return "", err
	}
	if weight == nil {
		weight = make([]float64, len(items))
		for k := range weight {
			weight[k] = 1 / float64(len(items))
		}
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if err := fileio.WriteFileAtomic(out, func(w io.Writer) error { return catfile.WriteWeights(w, fit, items, weight) }); err != nil {
		return "", err
	}
	return fmt.Sprintf("kept %d of %d items in %s (rule %s; weights: each item's share of the bank, for jeirt irt estimate --weights)", len(items), J, out, rule), nil
}
