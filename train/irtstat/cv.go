package irtstat

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/eval"
	"github.com/jeirt/jeirt/train/irt"
)

// CVResult is k-fold cross-validation over cells: every observed cell is
// predicted once, by the fit on the other folds. Metrics pool the held-out
// predictions of all folds.
type CVResult struct {
	Folds    int          `json:"folds"`
	Seed     int64        `json:"seed"`
	Rank     int          `json:"rank"`
	IRT      eval.Metrics `json:"irt"`      // the cBMM fit (2PL at rank 1)
	Baseline eval.Metrics `json:"baseline"` // each model's training accuracy
	// BenchmarkBaseline: each model's training accuracy on the cell's
	// benchmark (item group; BenchMIRT's per-benchmark average), when the
	// items have groups.
	BenchmarkBaseline *eval.Metrics `json:"benchmark_baseline,omitempty"`
	// Ranking: how well each method orders the models, as Spearman's ρ and
	// Kendall's τ_b between each model's mean prediction over its held-out
	// cells and its observed accuracy on them (method: irt, baseline,
	// benchmark_baseline).
	Ranking map[string]RankAgreement `json:"ranking"`
	// Per-fold metrics of the IRT fit, to show the spread.
	PerFold []eval.Metrics `json:"per_fold"`
}

// RankAgreement is the rank correlation of two orderings of the models.
type RankAgreement struct {
	Spearman model.Float `json:"spearman"` // NaN (null) when undefined; Note says why
	Kendall  model.Float `json:"kendall"`
	Note     string      `json:"note,omitempty"`
}

// CrossValidate assigns the observed cells of r to folds at random (seed),
// fits the folds' complements in one batched cBMM run, and scores the held-out
// cells with train.Score against the per-model mean-accuracy baseline
// (smoothed: (correct + ½)/(answered + 1) on the training cells) and, when r
// has item groups, the per-model per-benchmark mean (smoothed the same way).
func CrossValidate(ctx context.Context, c irt.CBMM, r *model.Responses, folds int, seed int64) (*CVResult, error) {
	if folds < 2 {
		return nil, fmt.Errorf("cv: need at least 2 folds, got %d", folds)
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
	train := make([]*model.Responses, folds)
	fits := make([]*model.IRT, folds)
	for f0 := 0; f0 < folds; f0 += group {
		f1 := min(folds, f0+group)
		for f := f0; f < f1; f++ {
			cells := make([]int32, 0, n-n/folds)
			for c := 0; c < n; c++ {
				if fold[c] != f {
					cells = append(cells, int32(c))
				}
			}
			train[f] = r.Subset(cells)
		}
		fs, err := c.FitBatch(ctx, train[f0:f1])
		if err != nil {
			return nil, fmt.Errorf("cv: %w", err)
		}
		copy(fits[f0:f1], fs)
		clear(train[f0:f1])
	}
	N := r.NumModels()
	corAll, cntAll := make([]float64, N), make([]float64, N)
	for c, i := range r.Model {
		corAll[i] += float64(r.Label[c])
		cntAll[i]++
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
			gCorAll[k] += float64(r.Label[c])
			gCntAll[k]++
		}
	}
	res := &CVResult{Folds: folds, Seed: seed, Rank: fits[0].Rank}
	pIRT := make([]float64, 0, n)
	pBase := make([]float64, 0, n)
	var pBench []float64
	ys := make([]uint8, 0, n)
	models := make([]int32, 0, n)
	for f := 0; f < folds; f++ {
		cor, cnt := append([]float64(nil), corAll...), append([]float64(nil), cntAll...)
		gCor, gCnt := append([]float64(nil), gCorAll...), append([]float64(nil), gCntAll...)
		for c, i := range r.Model {
			if fold[c] == f {
				cor[i] -= float64(r.Label[c])
				cnt[i]--
				if G > 0 {
					k := int(i)*G + gOf[r.Item[c]]
					gCor[k] -= float64(r.Label[c])
					gCnt[k]--
				}
			}
		}
		var fp []float64
		var fy []uint8
		for c := 0; c < n; c++ {
			if fold[c] != f {
				continue
			}
			i, j := int(r.Model[c]), int(r.Item[c])
			p := fits[f].Prob(i, j)
			fp = append(fp, p)
			fy = append(fy, r.Label[c])
			pBase = append(pBase, (cor[i]+0.5)/(cnt[i]+1))
			if G > 0 {
				k := i*G + gOf[j]
				pBench = append(pBench, (gCor[k]+0.5)/(gCnt[k]+1))
			}
			models = append(models, r.Model[c])
		}
		pIRT = append(pIRT, fp...)
		ys = append(ys, fy...)
		res.PerFold = append(res.PerFold, eval.Score(fp, fy))
	}
	res.IRT = eval.Score(pIRT, ys)
	res.Baseline = eval.Score(pBase, ys)
	res.Ranking = map[string]RankAgreement{"irt": rankAgreement(pIRT, ys, models, N), "baseline": rankAgreement(pBase, ys, models, N)}
	if G > 0 {
		m := eval.Score(pBench, ys)
		res.BenchmarkBaseline = &m
		res.Ranking["benchmark_baseline"] = rankAgreement(pBench, ys, models, N)
	}
	return res, nil
}

// rankAgreement compares each model's mean prediction over its cells with
// its observed accuracy on them.
func rankAgreement(p []float64, y []uint8, models []int32, N int) RankAgreement {
	pred, obs, cnt := make([]float64, N), make([]float64, N), make([]float64, N)
	for c, i := range models {
		pred[i] += p[c]
		obs[i] += float64(y[c])
		cnt[i]++
	}
	var a, b []float64
	for i := 0; i < N; i++ {
		if cnt[i] > 0 {
			a, b = append(a, pred[i]/cnt[i]), append(b, obs[i]/cnt[i])
		}
	}
	return RankAgreement{Spearman: model.Float(eval.Spearman(a, b)), Kendall: model.Float(eval.KendallTau(a, b)),
		Note: eval.CorrelationNote("the mean prediction", a, "the accuracy", b)}
}
