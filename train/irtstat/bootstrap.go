package irtstat

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/mat"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/machine"
	"github.com/jeirt/jeirt/model/progress"
	"github.com/jeirt/jeirt/train/eval"
	"github.com/jeirt/jeirt/train/irt"
)

// BootstrapBytesPerCell is the working memory of one bootstrap replicate per
// observed cell, measured (docs/limits.md: 25.8 bytes on MMLU-Pro).
const BootstrapBytesPerCell = 26

// WeightedBytesPerCell is what a cell of several trials or a graded score
// adds to a replicate: its trials and successes (4 + 8 bytes) in the
// responses and its weight and score (4 + 8) in the layout.
const WeightedBytesPerCell = 24

// Bootstrap estimates the sampling uncertainty of a cBMM fit by refitting on
// resampled data, many replicates per batched fit. Resampling items (always)
// measures how θ and the model ranking depend on the particular items;
// resampling models as well (Models) measures how a and b depend on the
// particular models. Each replicate is put in the full fit's gauge before
// percentiles are taken (see align).
type Bootstrap struct {
	B         int     // replicates; 0 means 200
	Seed      int64   // resampling seed
	Models    bool    // also resample models (with replacement)
	Level     float64 // interval level; 0 means 0.95
	BatchSize int     // replicates per FitBatch call; 0 means 25
	// MaxMemory caps the replicates' working memory in bytes: a batch
	// holds at most MaxMemory / (BootstrapBytesPerCell · cells) replicates
	// (at least one). 0 means half of the machine's memory (no cap where
	// that is unknown); negative means no cap.
	MaxMemory int64
	Fitter    irt.CBMM
	Log       progress.Logf // a line after every batch of replicates; nil is silent
	// Ranked, when not nil, says which models are ranked (Analysis.Rank >
	// 0): the rank intervals are ranks among those alone, and the others
	// (too few answers to rank) get no rank interval and no θ SE or interval.
	Ranked []bool
}

// BootstrapResult holds standard errors (sd over replicates) and Percentile
// intervals, indexed like the full fit (θ N x r, A J x r, b J). Entries are NaN
// where a model or item never appeared in a replicate.
type BootstrapResult struct {
	// B is the number of replicates summarised: Requested, or fewer when
	// the bootstrap was interrupted (see Interrupted).
	B, Requested              int
	Level                     float64
	ThetaSE, ThetaLo, ThetaHi []float64
	ASE, ALo, AHi             []float64
	BSE, BLo, BHi             []float64 // the intercept b (items.csv's d)
	// The difficulty −b/a (rank 1) or −b/‖a‖ (rank > 1), items.csv's b
	// (model.Difficulty), per replicate.
	DiffSE, DiffLo, DiffHi []float64
	// The 3PL's lower asymptotes c_j when they are fitted (nil otherwise).
	CSE, CLo, CHi []float64
	// Rank of each model (1 = highest ability score, see AbilityScore) in the
	// replicates: its percentile interval.
	RankLo, RankHi []int
}

// Interrupted is Run's error when its context ended before every replicate
// was fitted: Done replicates (whole batches) were, of Of. Run then returns
// their summary too when Done is at least 2 (nil otherwise). It unwraps to
// the context's error.
type Interrupted struct {
	Done, Of int
	Err      error
}

func (e *Interrupted) Error() string {
	return fmt.Sprintf("bootstrap interrupted after %d of %d replicates: %v", e.Done, e.Of, e.Err)
}

func (e *Interrupted) Unwrap() error { return e.Err }

// Run fits B replicates of r and summarises them against full, the fit of r
// itself (same Rank and Sigma). When ctx ends first, it summarises the
// replicates done so far and says so (Interrupted).
func (bs Bootstrap) Run(ctx context.Context, r *model.Responses, full *model.IRT) (*BootstrapResult, error) {
	if bs.B == 0 {
		bs.B = 200
	}
	if bs.B < 2 {
		return nil, fmt.Errorf("bootstrap: need at least 2 replicates, got %d", bs.B)
	}
	if bs.Level == 0 {
		bs.Level = 0.95
	}
	if bs.BatchSize <= 0 {
		bs.BatchSize = 25
	}
	mem := bs.MaxMemory
	if mem == 0 {
		mem = machine.SystemMemory() / 2
	}
	perCell := int64(BootstrapBytesPerCell)
	if r.Weighted() {
		perCell += WeightedBytesPerCell
	}
	if per := perCell * int64(r.Len()); mem > 0 && per > 0 && int64(bs.BatchSize)*per > mem {
		bs.BatchSize = int(max(1, mem/per))
		bs.Log.Printf("bootstrap: %d replicates per batch to stay within %.1f GB (about %d bytes per cell and replicate)",
			bs.BatchSize, float64(mem)/1e9, perCell)
	}
	fitter := bs.Fitter
	fitter.Log = nil
	rk := full.Rank
	N, J := r.NumModels(), r.NumItems()
	rng := rand.New(rand.NewPCG(uint64(bs.Seed), 0x5bd1e995))
	byModel := r.ByModel()
	// Per replicate: resampled parameters mapped back to original indices.
	thetas := make([][]float64, 0, bs.B)
	as := make([][]float64, 0, bs.B)
	bsv := make([][]float64, 0, bs.B)
	scores := make([][]float64, 0, bs.B)
	var cs [][]float64
	// Given lower asymptotes go with their items into each replicate.
	var given []float64
	if fitter.ItemGuess != nil {
		given = fitter.ItemGuess[0]
	}
	var stopped *Interrupted
	for done := 0; done < bs.B; {
		if err := ctx.Err(); err != nil {
			stopped = &Interrupted{Done: done, Of: bs.B, Err: err}
			break
		}
		n := min(bs.BatchSize, bs.B-done)
		reps := make([]*model.Responses, n)
		starts := make([]*model.IRT, n)
		modelIdx := make([][]int, n)
		itemIdx := make([][]int, n)
		f := fitter
		if given != nil {
			f.ItemGuess = make([][]float64, n)
		}
		for k := range reps {
			modelIdx[k], itemIdx[k] = resampleIndex(rng, N, bs.Models), resampleIndex(rng, J, true)
			reps[k] = resample(r, byModel, modelIdx[k], itemIdx[k])
			starts[k] = startFrom(full, modelIdx[k], itemIdx[k])
			if given != nil {
				f.ItemGuess[k] = starts[k].C
			}
		}
		// Each replicate starts from the full fit's parameters of the models
		// and items it drew: the same optimum is reached in far fewer steps.
		fits, err := f.FitBatchFrom(ctx, reps, starts)
		if err != nil && ctx.Err() != nil { // the batch in flight is lost; the ones before are kept
			stopped = &Interrupted{Done: done, Of: bs.B, Err: ctx.Err()}
			break
		}
		if err != nil {
			return nil, fmt.Errorf("bootstrap: %w", err)
		}
		for k, f := range fits {
			th, a, b := backToOriginal(f, modelIdx[k], itemIdx[k], N, J)
			if f.C != nil && fitter.FitsGuess() {
				c := nans(J)
				for l, j := range itemIdx[k] {
					if math.IsNaN(c[j]) {
						c[j] = f.C[l]
					}
				}
				cs = append(cs, c)
			}
			absentWithoutCells(th, reps[k], modelIdx[k], rk)
			align(full, th, a, b, bs.Models)
			for i := 0; i < N; i++ {
				if bs.Ranked != nil && !bs.Ranked[i] { // too few answers: no SE, no interval
					for d := 0; d < rk; d++ {
						th[i*rk+d] = math.NaN()
					}
				}
			}
			thetas = append(thetas, th)
			as = append(as, a)
			bsv = append(bsv, b)
			sc := AbilityScore(&model.IRT{Rank: rk, Sigma: full.Sigma, Theta: th, A: full.A, B: full.B, C: full.C})
			scores = append(scores, sc)
		}
		done += n
		bs.Log.Printf("bootstrap: %d of %d replicates", done, bs.B)
	}
	if stopped != nil && stopped.Done < 2 {
		return nil, stopped
	}
	res := &BootstrapResult{B: len(thetas), Requested: bs.B, Level: bs.Level}
	lo, hi := (1-bs.Level)/2, 1-(1-bs.Level)/2
	res.ThetaSE, res.ThetaLo, res.ThetaHi = summarise(thetas, N*rk, lo, hi)
	res.ASE, res.ALo, res.AHi = summarise(as, J*rk, lo, hi)
	res.BSE, res.BLo, res.BHi = summarise(bsv, J, lo, hi)
	diffs := make([][]float64, len(as))
	for k := range as {
		diffs[k] = make([]float64, J)
		for j := 0; j < J; j++ {
			diffs[k][j] = model.Difficulty(as[k][j*rk:(j+1)*rk], bsv[k][j])
		}
	}
	res.DiffSE, res.DiffLo, res.DiffHi = summarise(diffs, J, lo, hi)
	if cs != nil {
		res.CSE, res.CLo, res.CHi = summarise(cs, J, lo, hi)
	}
	// Ranks among the models present in each replicate (absent: NaN score).
	ranks := make([][]float64, len(scores))
	for k, sc := range scores {
		ranks[k] = make([]float64, N)
		present := make([]float64, N)
		for i, s := range sc {
			present[i] = s
			if math.IsNaN(s) {
				present[i] = math.Inf(-1)
			}
		}
		rr := eval.DescRanks(present)
		for i := range rr {
			ranks[k][i] = float64(rr[i])
			if math.IsNaN(sc[i]) {
				ranks[k][i] = math.NaN()
			}
		}
	}
	_, rl, rh := summarise(ranks, N, lo, hi)
	res.RankLo, res.RankHi = make([]int, N), make([]int, N)
	for i := range rl {
		if !math.IsNaN(rl[i]) { // a model ranked in fewer than two replicates has no interval
			res.RankLo[i], res.RankHi[i] = int(math.Floor(rl[i])), int(math.Ceil(rh[i]))
		}
	}
	if stopped != nil {
		return res, stopped
	}
	return res, nil
}

// absentWithoutCells sets to NaN (absent) the θ of every original model with
// no cell in replicate rep (whose model k is original model mi[k]): with the
// items it answered all left out, its θ is only where the fit started, and
// ranking it would repeat the full fit's rank in every such replicate.
func absentWithoutCells(th []float64, rep *model.Responses, mi []int, rk int) {
	has := make([]bool, len(th)/rk)
	for _, k := range rep.Model {
		has[mi[k]] = true
	}
	for i, h := range has {
		if !h {
			for d := 0; d < rk; d++ {
				th[i*rk+d] = math.NaN()
			}
		}
	}
}

// resampleIndex draws n indices with replacement, or returns 0..n-1 when draw is false.
func resampleIndex(rng *rand.Rand, n int, draw bool) []int {
	idx := make([]int, n)
	for k := range idx {
		if draw {
			idx[k] = rng.IntN(n)
		} else {
			idx[k] = k
		}
	}
	return idx
}

// resample builds the replicate whose model k is r's model mi[k] and whose
// item l is r's item ii[l] (a drawn twice appears as two items).
func resample(r *model.Responses, byModel *model.Index, mi, ii []int) *model.Responses {
	J := r.NumItems()
	// copies[j] lists the replicate items that are copies of original item j.
	start := make([]int32, J+1)
	for _, j := range ii {
		start[j+1]++
	}
	for j := 0; j < J; j++ {
		start[j+1] += start[j]
	}
	copies := make([]int32, len(ii))
	next := append([]int32(nil), start[:J]...)
	for l, j := range ii {
		copies[next[j]] = int32(l)
		next[j]++
	}
	out := &model.Responses{Models: make([]string, len(mi)), Items: make([]string, len(ii))}
	for k, i := range mi {
		out.Models[k] = r.Models[i]
	}
	for l, j := range ii {
		out.Items[l] = r.Items[j]
	}
	est := 0
	for _, i := range mi {
		est += len(byModel.Row(i))
	}
	out.Model = make([]int32, 0, est)
	out.Item = make([]int32, 0, est)
	out.Label = make([]uint8, 0, est)
	// A cell keeps its trials and successes: the unit resampled is the
	// model or the item, never a trial.
	for k, i := range mi {
		for _, c := range byModel.Row(i) {
			j := r.Item[c]
			for _, l := range copies[start[j]:start[j+1]] {
				out.AppendFrom(int32(k), l, r, int(c))
			}
		}
	}
	return out
}

// startFrom picks the full fit's parameters for a replicate's models and items.
func startFrom(full *model.IRT, mi, ii []int) *model.IRT {
	rk := full.Rank
	s := &model.IRT{Rank: rk, Theta: make([]float64, len(mi)*rk), A: make([]float64, len(ii)*rk), B: make([]float64, len(ii))}
	if full.C != nil {
		s.C = make([]float64, len(ii))
	}
	for k, i := range mi {
		copy(s.Theta[k*rk:k*rk+rk], full.Theta[i*rk:i*rk+rk])
	}
	for l, j := range ii {
		copy(s.A[l*rk:l*rk+rk], full.A[j*rk:j*rk+rk])
		s.B[l] = full.B[j]
		if full.C != nil {
			s.C[l] = full.C[j]
		}
	}
	return s
}

// backToOriginal maps a replicate's parameters to the original models and
// items (the first copy of each), NaN for those not drawn.
func backToOriginal(f *model.IRT, mi, ii []int, N, J int) (th, a, b []float64) {
	rk := f.Rank
	th, a, b = nans(N*rk), nans(J*rk), nans(J)
	for k, i := range mi {
		if math.IsNaN(th[i*rk]) {
			copy(th[i*rk:i*rk+rk], f.Theta[k*rk:k*rk+rk])
		}
	}
	for l, j := range ii {
		if math.IsNaN(b[j]) {
			copy(a[j*rk:j*rk+rk], f.A[l*rk:l*rk+rk])
			b[j] = f.B[l]
		}
	}
	return
}

func nans(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = math.NaN()
	}
	return v
}

// align puts a replicate (θ, A, b; NaN where absent) into the full fit's
// gauge without changing its X. Rank 1 with the same models needs nothing:
// both are standardised over the same models and a ≥ 0 fixes the sign. Rank 1
// with resampled models: θ is matched in mean and sd to the full fit over the
// models they share. Rank r > 1: the affine map θ ↦ θM + c that best fits the
// full fit's θ over the shared models (least squares) removes the rotation,
// scale and shift freedom; A becomes A M⁻ᵀ and b becomes b − A M⁻ᵀ c.
func align(full *model.IRT, th, a, b []float64, models bool) {
	rk := full.Rank
	N := len(th) / rk
	var shared []int
	for i := 0; i < N; i++ {
		if !math.IsNaN(th[i*rk]) {
			shared = append(shared, i)
		}
	}
	if len(shared) < rk+2 {
		return
	}
	if rk > 1 {
		alignAffine(full, th, a, b, shared)
		return
	}
	if !models {
		return
	}
	var mr, mf, vr, vf float64
	for _, i := range shared {
		mr += th[i]
		mf += full.Theta[i]
	}
	n := float64(len(shared))
	mr /= n
	mf /= n
	for _, i := range shared {
		vr += (th[i] - mr) * (th[i] - mr)
		vf += (full.Theta[i] - mf) * (full.Theta[i] - mf)
	}
	if vr == 0 || vf == 0 {
		return
	}
	s := math.Sqrt(vf / vr)
	// θ' = (θ − mr)s + mf, a' = a/s, b' = b + a·mr − a·mf/s: θ'a' + b' = θa + b.
	for i := 0; i < N; i++ {
		th[i] = (th[i]-mr)*s + mf
	}
	for j := range b {
		b[j] += a[j]*mr - a[j]*mf/s
		a[j] /= s
	}
}

func alignAffine(full *model.IRT, th, a, b []float64, shared []int) {
	rk := full.Rank
	n := len(shared)
	U := mat.NewDense(n, rk+1, nil)
	T := mat.NewDense(n, rk, nil)
	for k, i := range shared {
		for d := 0; d < rk; d++ {
			U.Set(k, d, th[i*rk+d])
			T.Set(k, d, full.Theta[i*rk+d])
		}
		U.Set(k, rk, 1)
	}
	var W mat.Dense
	if err := W.Solve(U, T); err != nil {
		return
	}
	M := mat.DenseCopyOf(W.Slice(0, rk, 0, rk))
	var Minv mat.Dense
	if err := Minv.Inverse(M); err != nil {
		return
	}
	c := make([]float64, rk)
	for d := range c {
		c[d] = W.At(rk, d)
	}
	row := make([]float64, rk)
	for i := 0; i < len(th)/rk; i++ {
		x := th[i*rk : i*rk+rk]
		if math.IsNaN(x[0]) {
			continue
		}
		for e := 0; e < rk; e++ {
			v := c[e]
			for d := 0; d < rk; d++ {
				v += x[d] * M.At(d, e)
			}
			row[e] = v
		}
		copy(x, row)
	}
	for j := range b {
		x := a[j*rk : j*rk+rk]
		if math.IsNaN(x[0]) {
			continue
		}
		// a' = M⁻¹ a (A' = A M⁻ᵀ row by row), b' = b − a'·c.
		for e := 0; e < rk; e++ {
			v := 0.0
			for d := 0; d < rk; d++ {
				v += Minv.At(e, d) * x[d]
			}
			row[e] = v
		}
		copy(x, row)
		for e := 0; e < rk; e++ {
			b[j] -= x[e] * c[e]
		}
	}
}

// summarise returns the sd and the lo/hi percentiles over replicates of each
// of n coordinates, ignoring NaN (absent) values.
func summarise(reps [][]float64, n int, lo, hi float64) (se, l, h []float64) {
	se, l, h = nans(n), nans(n), nans(n)
	vals := make([]float64, 0, len(reps))
	for c := 0; c < n; c++ {
		vals = vals[:0]
		for _, r := range reps {
			if v := r[c]; !math.IsNaN(v) {
				vals = append(vals, v)
			}
		}
		if len(vals) < 2 {
			continue
		}
		mu := 0.0
		for _, v := range vals {
			mu += v
		}
		mu /= float64(len(vals))
		ss := 0.0
		for _, v := range vals {
			ss += (v - mu) * (v - mu)
		}
		se[c] = math.Sqrt(ss / float64(len(vals)-1))
		sort.Float64s(vals)
		l[c], h[c] = eval.Percentile(vals, lo), eval.Percentile(vals, hi)
	}
	return
}

// AbilityScore is the number models are ranked by: θ at rank 1; at rank > 1,
// the model's mean predicted probability over the fit's items (NaN rows of θ
// give NaN).
func AbilityScore(m *model.IRT) []float64 {
	rk := m.Rank
	N := len(m.Theta) / rk
	out := make([]float64, N)
	if rk == 1 {
		copy(out, m.Theta)
		return out
	}
	s := m.Sigma
	if s == 0 {
		s = 1
	}
	J := len(m.B)
	for i := 0; i < N; i++ {
		if math.IsNaN(m.Theta[i*rk]) {
			out[i] = math.NaN()
			continue
		}
		sum := 0.0
		for j := 0; j < J; j++ {
			x := m.B[j]
			for d := 0; d < rk; d++ {
				x += m.Theta[i*rk+d] * m.A[j*rk+d]
			}
			sum += m.Guessing(j, model.Sigmoid(x/s))
		}
		out[i] = sum / float64(J)
	}
	return out
}
