package irt

import (
	"context"
	"math"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/backend"
)

// partitionedFit simulates cBMM (rank 1) split over k workers the way a
// multi-GPU or multi-node fit would run it: worker w owns a contiguous block
// of items and only their cells. Per iteration each worker
//
//  1. computes ℓ and Ỹ on its cells and updates its own items' (a_j, b_j)
//     (the item block needs nothing from other workers);
//  2. forms its partial θ normal equations, per model i:
//     Σ_{j ∈ w} a_j² and Σ_{j ∈ w} a_j (ỹ_ij − b_j);
//
// then one all-reduce sums the k partial equations (2N numbers) and the k
// partial losses, and every worker solves θ_i = num_i/den_i for itself. The
// only traffic is the all-reduce: 2N + 1 floats per iteration, whatever J.
func partitionedFit(p *backend.CBMMProblem, k int, start *model.IRT, tol float64, maxIter int) (theta, a, b, hist []float64) {
	N := p.N
	theta = append([]float64(nil), start.Theta...)
	a = append([]float64(nil), start.A...)
	b = append([]float64(nil), start.B...)
	bounds := BalanceChunks(p.ItemStart, k)
	type worker struct {
		lo, hi   int       // items lo:hi
		yt       []float64 // Ỹ on the worker's cells
		den, num []float64 // partial θ normal equations
		loss     float64
	}
	ws := make([]*worker, len(bounds)-1)
	for w := range ws {
		lo, hi := bounds[w], bounds[w+1]
		ws[w] = &worker{lo: lo, hi: hi, yt: make([]float64, p.ItemStart[hi]-p.ItemStart[lo]),
			den: make([]float64, N), num: make([]float64, N)}
	}
	for iter := 0; iter < maxIter; iter++ {
		for _, wk := range ws { // in a real run: in parallel, one per GPU or node
			wk.loss = 0
			clear(wk.den)
			clear(wk.num)
			off := p.ItemStart[wk.lo]
			for j := wk.lo; j < wk.hi; j++ {
				cells := p.Cells[p.ItemStart[j]:p.ItemStart[j+1]]
				yt := wk.yt[p.ItemStart[j]-off : p.ItemStart[j+1]-off]
				var st, stt, sy, sty float64
				for c, cell := range cells {
					th := theta[cell>>1]
					x := th*a[j] + b[j]
					y := float64(cell&1)*2 - 1
					t := -y * x // σ = 1
					wk.loss += math.Max(t, 0) + math.Log1p(math.Exp(-math.Abs(t)))
					v := x + 4*y/(1+math.Exp(-t)) // x + 4y·sigmoid(−y x)
					yt[c] = v
					st += th
					stt += th * th
					sy += v
					sty += th * v
				}
				if len(cells) > 0 {
					a[j], b[j] = backend.ItemSolve1(float64(len(cells)), st, stt, sy, sty, a[j])
				}
				for c, cell := range cells {
					i := cell >> 1
					wk.den[i] += a[j] * a[j]
					wk.num[i] += a[j] * (yt[c] - b[j])
				}
			}
		}
		// The all-reduce.
		loss := 0.0
		den, num := make([]float64, N), make([]float64, N)
		for _, wk := range ws {
			loss += wk.loss
			for i := range den {
				den[i] += wk.den[i]
				num[i] += wk.num[i]
			}
		}
		for i := range theta {
			if den[i] > 0 {
				theta[i] = num[i] / den[i]
			}
		}
		hist = append(hist, loss)
		if n := len(hist); n >= 2 && math.Abs(hist[n-2]-hist[n-1]) <= tol*math.Abs(hist[n-2]) {
			break
		}
	}
	return theta, a, b, hist
}

// The partitioned update (items split over 1, 3 and 8 workers, the θ normal
// equations reduced) is the single-process cBMM fit: the same loss at every
// iteration and the same parameters, up to the order of floating-point sums.
func TestPartitionedFitEqualsSingleFit(t *testing.T) {
	r, _, err := synth.Generate(synth.Options{Kind: "2pl", Models: 40, Items: 500, Missing: 0.2, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	p := backend.NewCBMMProblem(r)
	th, a, b, err := SVDStart(context.Background(), p, 1, 1, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	start := &model.IRT{Models: r.Models, Items: r.Items, Rank: 1, Sigma: 1, Theta: th, A: a, B: b}
	single, err := CBMM{Tol: 1e-7, MaxIter: 300, Threads: 2}.FitBatchFrom(context.Background(), []*model.Responses{r}, []*model.IRT{start})
	if err != nil {
		t.Fatal(err)
	}
	want := single[0]
	for _, k := range []int{1, 3, 8} {
		theta, a, b, hist := partitionedFit(p, k, start, 1e-7, 300)
		if len(hist) != want.Iterations {
			t.Errorf("%d workers: %d iterations, single fit %d", k, len(hist), want.Iterations)
		}
		for it := range min(len(hist), want.Iterations) {
			if d := math.Abs(hist[it]-want.LossHistory[it]) / want.LossHistory[it]; d > 1e-12 {
				t.Fatalf("%d workers: iteration %d loss %.15g, single fit %.15g", k, it+1, hist[it], want.LossHistory[it])
			}
		}
		got := &model.IRT{Models: r.Models, Items: r.Items, Rank: 1, Sigma: 1, Theta: theta, A: a, B: b}
		StandardGauge(got)
		worst := 0.0
		for _, pair := range [][2][]float64{{got.Theta, want.Theta}, {got.A, want.A}, {got.B, want.B}} {
			for i := range pair[0] {
				worst = math.Max(worst, math.Abs(pair[0][i]-pair[1][i]))
			}
		}
		if worst > 1e-9 {
			t.Errorf("%d workers: parameters differ from the single fit by %.3g", k, worst)
		}
		t.Logf("%d workers: %d iterations, final loss %.10f, max parameter difference %.2g", k, len(hist), hist[len(hist)-1], worst)
	}
}
