package irtstat

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/irtfit"
	"github.com/jeirt/jeirt/train/eval"
	"github.com/jeirt/jeirt/train/irt"
	"github.com/jeirt/jeirt/train/irt/rotate"
	"github.com/jeirt/jeirt/train/irtguard"
)

// Item flags written by Analyze.
const (
	FlagNeverSolved   = "never_solved"
	FlagAlwaysSolved  = "always_solved"
	FlagUninformative = "uninformative" // near-zero discrimination
	// FlagFewAnswers marks a model or item with fewer observed answers than
	// AnalysisOptions.MinAnswers: too few to estimate its parameters. Such
	// a model is not ranked (no rank, no rank interval, not in τ).
	FlagFewAnswers = "few_answers"
)

// DefaultMinAnswers is the fewest observed answers a model needs to be
// ranked (and an item to go unflagged) unless AnalysisOptions.MinAnswers says
// otherwise.
const DefaultMinAnswers = 5

// AnalysisOptions sets the thresholds of Analyze.
type AnalysisOptions struct {
	// MinDiscrimination: an item whose ‖a_j‖ (in the standard gauge, logit per
	// sd of θ, divided by σ) is below it is flagged uninformative; 0 means 0.1.
	MinDiscrimination float64
	// RankMove: models whose θ rank and accuracy rank differ by more than this
	// many places are listed; 0 means max(3, N/20).
	RankMove int
	// MinAnswers: a model (item) with fewer observed answers is flagged
	// few_answers, and such a model is left out of both rankings; 0 means
	// DefaultMinAnswers, negative means no threshold (every model with an
	// answer is ranked).
	MinAnswers int
	// Threads for the item diagnostics; 0 means all cores.
	Threads int
}

// Analysis summarises a fit against the raw accuracies.
type Analysis struct {
	Accuracy       []float64 // per model, over its observed cells
	AccuracyRank   []int     // 1 = most accurate
	Score          []float64 // AbilityScore
	Rank           []int     // 1 = highest Score; 0 for a model with fewer than MinAnswers observations
	Unobserved     []string  // models with no observed cell (not ranked)
	FewAnswers     []string  // models with some, but fewer than MinAnswers, observed cells (not ranked)
	MinAnswers     int       // the threshold applied (0: none)
	ModelObserved  []int     // n_obs per model
	ModelFlags     []string  // "" or FlagFewAnswers, per model
	KendallTau     float64   // τ_b between Score and Accuracy over the ranked models
	KendallNote    string    // why KendallTau is undefined (NaN); "" when it is defined
	RankMoveLimit  int
	RankMoves      []RankMove
	ItemAccuracy   []float64 // p_correct per item
	ItemObserved   []int     // n_obs per item
	ItemTrials     []float64 // trials per item (its cells' trials summed)
	ItemFlags      []string  // "", or Flag constants joined by ";"
	FlagCounts     map[string]int
	GroupLoadings  []GroupLoading `json:",omitempty"` // rank > 1 with item groups
	VarimaxLoading []float64      `json:"-"`          // J x r rotated loadings (rank > 1)
	// ItemDiagnostics and Test are the diagnostics per item and of the
	// whole test (Diagnose); FlagCounts counts the items carrying each flag.
	ItemDiagnostics []ItemDiagnostics
	Test            TestDiagnostics
	// FitStatistics (the log-likelihood, log-prior, AIC and BIC) and
	// PersonMisfits (the models flagged person_misfit) are set by whoever
	// computes them from the fit's estimation (package fitstat); nil
	// otherwise.
	FitStatistics *irtfit.FitStatistics
	PersonMisfits []string
}

// RankMove is a model whose ability rank differs from its accuracy rank (as
// fit.json lists it).
type RankMove = irtfit.RankMove

// GroupLoading is an item group's mean varimax loading on each dimension.
type GroupLoading = irtfit.GroupLoading

// Analyze computes the Kendall τ between the ability and accuracy rankings,
// the models whose rank moves, the item diagnostics (Diagnose), item flags,
// and the loadings averaged per item group (r.ItemGroup): at rank > 1 the
// varimax loadings, at rank 1 a.
//
// An item's flags are never_solved or always_solved, else uninformative when
// ‖a‖/σ is below the threshold, followed by those of DiagnosticFlags.
func Analyze(r *model.Responses, fit *model.IRT, opt AnalysisOptions) *Analysis {
	if opt.MinDiscrimination == 0 {
		opt.MinDiscrimination = 0.1
	}
	N, J, rk := r.NumModels(), r.NumItems(), fit.Rank
	if opt.RankMove == 0 {
		opt.RankMove = max(3, N/20)
	}
	an := &Analysis{Accuracy: r.ModelAccuracy(), ItemAccuracy: r.ItemAccuracy(), Score: AbilityScore(fit),
		RankMoveLimit: opt.RankMove, FlagCounts: map[string]int{}}
	switch {
	case opt.MinAnswers == 0:
		an.MinAnswers = DefaultMinAnswers
	case opt.MinAnswers > 0:
		an.MinAnswers = opt.MinAnswers
	}
	// A model with no observed cell has a θ from the gauge alone, and one
	// with a handful a θ from those alone (one right answer of a thousand
	// items put a model first): both are listed, but left out of both
	// rankings (rank 0) and of τ.
	ranked := append([]float64(nil), an.Score...)
	accRanked := append([]float64(nil), an.Accuracy...)
	bm := r.ByModel()
	an.ModelObserved, an.ModelFlags = make([]int, N), make([]string, N)
	for i := 0; i < N; i++ {
		n := len(bm.Row(i))
		an.ModelObserved[i] = n
		if n == 0 || n < an.MinAnswers {
			ranked[i], accRanked[i] = math.NaN(), math.NaN()
			if n == 0 {
				an.Unobserved = append(an.Unobserved, r.Models[i])
			} else {
				an.FewAnswers = append(an.FewAnswers, r.Models[i])
			}
			if n < an.MinAnswers {
				an.ModelFlags[i] = FlagFewAnswers
			}
		}
	}
	an.AccuracyRank = eval.DescRanks(accRanked)
	an.Rank = eval.DescRanks(ranked)
	an.KendallTau = eval.KendallTau(ranked, accRanked)
	if math.IsNaN(an.KendallTau) {
		an.KendallNote = eval.CorrelationNote("θ", ranked, "accuracy", accRanked)
		if an.KendallNote == "" {
			an.KendallNote = "no pair of ranked models differs in both θ and accuracy"
		}
	}
	for i := 0; i < N; i++ {
		if math.IsNaN(ranked[i]) {
			an.Rank[i], an.AccuracyRank[i] = 0, 0
			continue
		}
		if mv := an.AccuracyRank[i] - an.Rank[i]; mv > opt.RankMove || -mv > opt.RankMove {
			an.RankMoves = append(an.RankMoves, RankMove{Model: fit.Models[i], Rank: an.Rank[i], AccuracyRank: an.AccuracyRank[i], Move: mv})
		}
	}
	sort.SliceStable(an.RankMoves, func(x, y int) bool { return abs(an.RankMoves[x].Move) > abs(an.RankMoves[y].Move) })
	by := r.ByItem()
	an.ItemObserved = make([]int, J)
	an.ItemFlags = make([]string, J)
	an.ItemDiagnostics, an.Test = Diagnose(r, fit, opt.Threads)
	sigma := fit.Sigma
	if sigma == 0 {
		sigma = 1
	}
	an.ItemTrials = make([]float64, J)
	for j := 0; j < J; j++ {
		an.ItemObserved[j] = len(by.Row(j))
		for _, c := range by.Row(j) {
			an.ItemTrials[j] += float64(r.TrialsAt(int(c)))
		}
		norm := 0.0
		for d := 0; d < rk; d++ {
			norm += fit.A[j*rk+d] * fit.A[j*rk+d]
		}
		switch p := an.ItemAccuracy[j]; {
		case an.ItemObserved[j] == 0:
		case an.ItemObserved[j] < an.MinAnswers:
			an.ItemFlags[j] = FlagFewAnswers
		case p == 0:
			an.ItemFlags[j] = FlagNeverSolved
		case p == 1:
			an.ItemFlags[j] = FlagAlwaysSolved
		case math.Sqrt(norm)/sigma < opt.MinDiscrimination:
			an.ItemFlags[j] = FlagUninformative
		}
		flags := DiagnosticFlags(an.ItemDiagnostics[j])
		if f := an.ItemFlags[j]; f != "" {
			flags = append([]string{f}, flags...)
		}
		for _, f := range flags {
			an.FlagCounts[f]++
		}
		an.ItemFlags[j] = strings.Join(flags, ";")
	}
	if rk > 1 {
		an.VarimaxLoading = rotate.Varimax(rotate.WhitenedLoadings(fit), J, rk)
		if r.ItemGroup != nil {
			an.GroupLoadings = groupLoadings(an.VarimaxLoading, r.ItemGroup, rk)
		}
	} else if r.ItemGroup != nil && len(fit.A) == J {
		an.GroupLoadings = groupLoadings(fit.A, r.ItemGroup, 1)
	}
	return an
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func groupLoadings(l []float64, group []string, rk int) []GroupLoading {
	idx := map[string]int{}
	var out []GroupLoading
	for j, g := range group {
		if g == "" {
			continue
		}
		k, ok := idx[g]
		if !ok {
			k = len(out)
			idx[g] = k
			out = append(out, GroupLoading{Group: g, MeanLoading: make([]float64, rk)})
		}
		out[k].Items++
		for d := 0; d < rk; d++ {
			out[k].MeanLoading[d] += l[j*rk+d]
		}
	}
	for k := range out {
		for d := range out[k].MeanLoading {
			out[k].MeanLoading[d] /= float64(out[k].Items)
		}
	}
	sort.Slice(out, func(x, y int) bool { return out[x].Group < out[y].Group })
	return out
}

// InformationSelect keeps round(keep·J) items chosen by Fisher information
// across the ability range: on a grid of 13 abilities from −3 to 3 (θ's sd
// units, along the direction (1,…,1)/√r at rank > 1) it takes, in turn at
// each grid point, the not yet chosen item most informative there,
// I_j(θ) = ‖a_j‖² p(1 − p)/σ². So easy and hard items are kept as well as
// those in the middle. It returns the chosen item indices (in choice order)
// and the grid point each was chosen for.
//
// A 3PL fit (fit.C) uses the 3PL's information (model.Response3PL).
func InformationSelect(fit *model.IRT, keep float64) (items []int, at []float64, err error) {
	return InformationSelectTrials(fit, keep, nil)
}

// InformationSelectTrials is InformationSelect with each item's information
// multiplied by its trials per answer, perAnswer[j] (nil: 1): an item
// sampled n times per model tells n times as much about θ.
func InformationSelectTrials(fit *model.IRT, keep float64, perAnswer []float64) (items []int, at []float64, err error) {
	J, rk := len(fit.B), fit.Rank
	if !(keep > 0 && keep <= 1) {
		return nil, nil, fmt.Errorf("keep %v must be in (0, 1]", keep)
	}
	n := int(math.Round(keep * float64(J)))
	n = max(1, min(n, J))
	sigma := fit.Sigma
	if sigma == 0 {
		sigma = 1
	}
	const points = 13
	grid := make([]float64, points)
	for g := range grid {
		grid[g] = -3 + 6*float64(g)/(points-1)
	}
	// Items sorted by information at each grid point.
	order := make([][]int, points)
	for g, th := range grid {
		info := make([]float64, J)
		for j := 0; j < J; j++ {
			x, a2 := fit.B[j], 0.0
			for d := 0; d < rk; d++ {
				x += th / math.Sqrt(float64(rk)) * fit.A[j*rk+d]
				a2 += fit.A[j*rk+d] * fit.A[j*rk+d]
			}
			if fit.C == nil {
				p := model.Sigmoid(x / sigma)
				info[j] = a2 * p * (1 - p) / (sigma * sigma)
			} else {
				_, ij := model.Response3PL(x, sigma, fit.C[j])
				info[j] = a2 * ij
			}
			if perAnswer != nil {
				info[j] *= perAnswer[j]
			}
		}
		o := make([]int, J)
		for j := range o {
			o[j] = j
		}
		sort.SliceStable(o, func(x, y int) bool { return info[o[x]] > info[o[y]] })
		order[g] = o
	}
	taken := make([]bool, J)
	next := make([]int, points)
	for len(items) < n {
		for g := 0; g < points && len(items) < n; g++ {
			for next[g] < J && taken[order[g][next[g]]] {
				next[g]++
			}
			if next[g] < J {
				j := order[g][next[g]]
				taken[j] = true
				items = append(items, j)
				at = append(at, grid[g])
			}
		}
	}
	return items, at, nil
}

// SelectionTau refits on the chosen items only and returns Kendall's τ between
// the models' AbilityScore ranking from that fit and from full.
func SelectionTau(ctx context.Context, c irt.CBMM, r *model.Responses, full *model.IRT, items []int) (float64, *model.IRT, error) {
	keep := make([]bool, r.NumItems())
	for _, j := range items {
		keep[j] = true
	}
	var cells []int32
	for cell, j := range r.Item {
		if keep[j] {
			cells = append(cells, int32(cell))
		}
	}
	sub := r.Subset(cells)
	fits, err := irtguard.Fits(ctx, c, []*model.Responses{sub})
	if err != nil {
		return math.NaN(), nil, err
	}
	fit := fits[0]
	return eval.KendallTau(AbilityScore(fit), AbilityScore(full)), fit, nil
}
