package irtstat

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/eval"
	"github.com/jeirt/jeirt/train/irt"
	"github.com/jeirt/jeirt/train/irtguard"
	"github.com/jeirt/jeirt/train/irtstat/fitstat"
)

// CVResult is k-fold cross-validation over cells: every observed cell is
// predicted once, by the fit on the other folds. Metrics pool the held-out
// predictions of all folds. Cells of several trials or graded scores are
// scored by eval.ScoreFractions (log loss, Brier and ECE on the fractions,
// per trial; accuracy and AUC of the rounded outcome, ȳ ≥ ½), 0/1 cells by
// eval.Score.
type CVResult struct {
	Folds    int          `json:"folds"`
	Seed     int64        `json:"seed"`
	Rank     int          `json:"rank"`
	IRT      eval.Metrics `json:"irt"`      // the (first) cBMM fit
	Baseline eval.Metrics `json:"baseline"` // each model's training accuracy
	// BenchmarkBaseline: each model's training accuracy on the cell's
	// benchmark (item group; BenchMIRT's per-benchmark average), when the
	// items have groups.
	BenchmarkBaseline *eval.Metrics `json:"benchmark_baseline,omitempty"`
	// Ranking: how well each method orders the models, as Spearman's ρ and
	// Kendall's τ_b between each model's mean prediction over its held-out
	// cells and its observed accuracy on them (method: irt, baseline,
	// benchmark_baseline, and each fit of Fits by its name).
	Ranking map[string]RankAgreement `json:"ranking"`
	// Per-fold metrics of the (first) IRT fit, to show the spread.
	PerFold []eval.Metrics `json:"per_fold"`
	// Fits are every fitter's results on the same folds, in the order given
	// (the first is IRT), and Best the index of the one with the lowest
	// held-out log loss.
	Fits []CVFit `json:"fits"`
	Best int     `json:"best"`
	// Nested compares every pair of fits where one nests the other, on
	// the same held-out cells (fitstat.Compare).
	Nested []fitstat.NestedComparison `json:"nested,omitempty"`
}

// CVFit is one fitter's cross-validation.
type CVFit struct {
	Name    string         `json:"name"` // CVName: e.g. 2pl, 3pl rank 2
	Model   model.Family   `json:"model"`
	Rank    int            `json:"rank"`
	Metrics eval.Metrics   `json:"metrics"`
	PerFold []eval.Metrics `json:"per_fold"`
	// Note says why the fitter was not run (Metrics undefined), e.g. the
	// 1PL at rank 2.
	Note string `json:"note,omitempty"`
}

// CVName names a fitter in the table: its model, its rank above 1, and a
// 3PL's given lower asymptotes ("3pl c 0.25", "3pl c given").
func CVName(c irt.CBMM) string {
	c = c.WithDefaults()
	name := c.Model.String()
	if c.Rank > 1 {
		name += fmt.Sprintf(" rank %d", c.Rank)
	}
	switch {
	case c.Model.HasAsymptote() && c.ItemGuess != nil:
		name += " c given"
	case c.Model.HasAsymptote() && c.Guess > 0:
		name += fmt.Sprintf(" c %g", c.Guess)
	}
	return name
}

// RankAgreement is the rank correlation of two orderings of the models.
type RankAgreement struct {
	Spearman model.Float `json:"spearman"` // NaN (null) when undefined; Note says why
	Kendall  model.Float `json:"kendall"`
	Note     string      `json:"note,omitempty"`
}

// CrossValidate assigns the observed cells of r to folds at random (seed),
// fits the folds' complements in one batched cBMM run, and scores the held-out
// cells against the per-model mean-accuracy baseline (smoothed: (successes +
// ½)/(trials + 1) on the training cells) and, when r has item groups, the
// per-model per-benchmark mean (smoothed the same way).
func CrossValidate(ctx context.Context, c irt.CBMM, r *model.Responses, folds int, seed int64) (*CVResult, error) {
	return CrossValidateFits(ctx, []irt.CBMM{c}, r, folds, seed)
}

// CrossValidateFits is CrossValidate for several fitters (models of the
// family, ranks) on the same folds. A 1PL above rank 1 is not fitted: its
// row says why.
func CrossValidateFits(ctx context.Context, cs []irt.CBMM, r *model.Responses, folds int, seed int64) (*CVResult, error) {
	if folds < 2 {
		return nil, fmt.Errorf("cv: need at least 2 folds, got %d", folds)
	}
	if len(cs) == 0 {
		return nil, fmt.Errorf("cv: no fitter")
	}
	n := r.Len()
	if n < folds {
		return nil, fmt.Errorf("cv: %d observed cells cannot make %d folds", n, folds)
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x2545f4914f6cdd1d))
	perm := rng.Perm(n)
	fold := make([]int, n)
	for k, c := range perm {
		fold[c] = k % folds
	}
	// Folds are fitted in batches of at most about 20 M training cells.
	group := max(1, min(folds, 20_000_000/max(1, n)))
	res := &CVResult{Folds: folds, Seed: seed, Ranking: map[string]RankAgreement{}}
	var frac, weight []float64 // of the held-out cells, in fold order; nil for 0/1 cells
	var ys []uint8
	var models []int32
	score := func(p []float64, lo, hi int) eval.Metrics {
		if frac == nil {
			return eval.Score(p, ys[lo:hi])
		}
		return eval.ScoreFractions(p, frac[lo:hi], weight[lo:hi])
	}
	// The held-out cells in fold order, once.
	var order []int32
	foldEnd := make([]int, folds)
	for f := 0; f < folds; f++ {
		for c := 0; c < n; c++ {
			if fold[c] == f {
				order = append(order, int32(c))
			}
		}
		foldEnd[f] = len(order)
	}
	for _, c := range order {
		ys = append(ys, r.Label[c])
		models = append(models, r.Model[c])
	}
	if r.Weighted() {
		for _, c := range order {
			frac = append(frac, r.ScoreAt(int(c)))
			weight = append(weight, float64(r.TrialsAt(int(c))))
		}
	}
	preds := make([][]float64, len(cs)) // each fit's held-out predictions, in order
	for k, c := range cs {
		cf := CVFit{Name: CVName(c), Model: c.WithDefaults().Model, Rank: c.WithDefaults().Rank}
		if cf.Model.CommonSlope() && cf.Rank > 1 {
			cf.Note = "the 1PL is unidimensional"
			cf.Metrics = eval.Score(nil, nil)
			res.Fits = append(res.Fits, cf)
			continue
		}
		fits := make([]*model.IRT, folds)
		for f0 := 0; f0 < folds; f0 += group {
			f1 := min(folds, f0+group)
			train := make([]*model.Responses, 0, f1-f0)
			for f := f0; f < f1; f++ {
				cells := make([]int32, 0, n-n/folds)
				for c := 0; c < n; c++ {
					if fold[c] != f {
						cells = append(cells, int32(c))
					}
				}
				train = append(train, r.Subset(cells))
			}
			fs, err := irtguard.Fits(ctx, c, train)
			if err != nil {
				return nil, fmt.Errorf("cv: %s: %w", cf.Name, err)
			}
			copy(fits[f0:f1], fs)
		}
		p := make([]float64, 0, n)
		lo := 0
		for f := 0; f < folds; f++ {
			for _, c := range order[lo:foldEnd[f]] {
				p = append(p, fits[f].Prob(int(r.Model[c]), int(r.Item[c])))
			}
			cf.PerFold = append(cf.PerFold, score(p[lo:foldEnd[f]], lo, foldEnd[f]))
			lo = foldEnd[f]
		}
		cf.Metrics = score(p, 0, n)
		res.Fits = append(res.Fits, cf)
		preds[k] = p
		res.Ranking[cf.Name] = rankAgreement(p, r, order, models, r.NumModels())
		if k == 0 {
			res.Rank, res.IRT, res.PerFold = cf.Rank, cf.Metrics, cf.PerFold
			res.Ranking["irt"] = res.Ranking[cf.Name]
		}
	}
	held := fitstat.HeldOut{Y: frac, W: weight, Model: models}
	if frac == nil {
		held.Y, held.W = make([]float64, n), make([]float64, n)
		for k, y := range ys {
			held.Y[k], held.W[k] = float64(y), 1
		}
	}
	for a, fa := range res.Fits {
		for b, fb := range res.Fits {
			if fa.Note == "" && fb.Note == "" && fitstat.Nests(fa.Model, fa.Rank, fb.Model, fb.Rank) {
				res.Nested = append(res.Nested, fitstat.Compare(fa.Name, fb.Name, preds[a], preds[b], held))
			}
		}
	}
	res.Best = -1
	for k, f := range res.Fits {
		if f.Note == "" && !math.IsNaN(f.Metrics.LogLoss) && (res.Best < 0 || f.Metrics.LogLoss < res.Fits[res.Best].Metrics.LogLoss) {
			res.Best = k
		}
	}
	N := r.NumModels()
	corAll, cntAll := make([]float64, N), make([]float64, N)
	for c, i := range r.Model {
		corAll[i] += r.SuccessesAt(c)
		cntAll[i] += float64(r.TrialsAt(c))
	}
	// Per (model, benchmark) counts for the per-benchmark baseline.
	var gOf []int
	G := 0
	if r.ItemGroup != nil {
		idx := map[string]int{}
		gOf = make([]int, r.NumItems())
		for j, g := range r.ItemGroup {
			k, ok := idx[g]
			if !ok {
				k = len(idx)
				idx[g] = k
			}
			gOf[j] = k
		}
		G = len(idx)
	}
	gCorAll, gCntAll := make([]float64, N*G), make([]float64, N*G)
	for c, i := range r.Model {
		if G > 0 {
			k := int(i)*G + gOf[r.Item[c]]
			gCorAll[k] += r.SuccessesAt(c)
			gCntAll[k] += float64(r.TrialsAt(c))
		}
	}
	pBase := make([]float64, 0, n)
	var pBench []float64
	lo := 0
	for f := 0; f < folds; f++ {
		cor, cnt := append([]float64(nil), corAll...), append([]float64(nil), cntAll...)
		gCor, gCnt := append([]float64(nil), gCorAll...), append([]float64(nil), gCntAll...)
		for _, c := range order[lo:foldEnd[f]] {
			i := r.Model[c]
			cor[i] -= r.SuccessesAt(int(c))
			cnt[i] -= float64(r.TrialsAt(int(c)))
			if G > 0 {
				k := int(i)*G + gOf[r.Item[c]]
				gCor[k] -= r.SuccessesAt(int(c))
				gCnt[k] -= float64(r.TrialsAt(int(c)))
			}
		}
		for _, c := range order[lo:foldEnd[f]] {
			i, j := int(r.Model[c]), int(r.Item[c])
			pBase = append(pBase, (cor[i]+0.5)/(cnt[i]+1))
			if G > 0 {
				k := i*G + gOf[j]
				pBench = append(pBench, (gCor[k]+0.5)/(gCnt[k]+1))
			}
		}
		lo = foldEnd[f]
	}
	res.Baseline = score(pBase, 0, n)
	res.Ranking["baseline"] = rankAgreement(pBase, r, order, models, N)
	if G > 0 {
		m := score(pBench, 0, n)
		res.BenchmarkBaseline = &m
		res.Ranking["benchmark_baseline"] = rankAgreement(pBench, r, order, models, N)
	}
	return res, nil
}

// rankAgreement compares each model's mean prediction over its held-out
// cells (order) with its observed accuracy on them (successes over trials).
func rankAgreement(p []float64, r *model.Responses, order, models []int32, N int) RankAgreement {
	pred, cnt, obs, trials := make([]float64, N), make([]float64, N), make([]float64, N), make([]float64, N)
	for k, i := range models {
		c := int(order[k])
		pred[i] += p[k]
		cnt[i]++
		obs[i] += r.SuccessesAt(c)
		trials[i] += float64(r.TrialsAt(c))
	}
	var a, b []float64
	for i := 0; i < N; i++ {
		if cnt[i] > 0 {
			a, b = append(a, pred[i]/cnt[i]), append(b, obs[i]/trials[i])
		}
	}
	return RankAgreement{Spearman: model.Float(eval.Spearman(a, b)), Kendall: model.Float(eval.KendallTau(a, b)),
		Note: eval.CorrelationNote("the mean prediction", a, "the accuracy", b)}
}
