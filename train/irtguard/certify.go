package irtguard

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/limits"
	"github.com/jeirt/jeirt/train/irt"
)

// DefaultGradTol is the largest projected gradient per answer at which a
// fit is certified stationary (Guard.GradTol).
const DefaultGradTol = 1e-3

// Certificate is the first-order optimality check of a joint maximum
// likelihood fit: the projected gradient of its objective at the returned
// parameters (Nocedal and Wright, Numerical Optimization, 2nd ed., eq. 16.44:
// P(x − ∇ℓ) − x for the bound constraints a ≥ 0 and 0 ≤ c ≤ MaxGuess).
// Each parameter's component is divided by the number of answers (trials)
// it enters, so that MaxGradient is a per-answer figure on the scale of
// ∂ℓ/∂x = (sigmoid(x/σ) − y)/σ, the same for data of any size: 1e-3 says
// that no parameter's answers are, on average, off their fitted
// probabilities in its direction by more than 0.001.
//
// The parameters the data leave without a finite estimate (the intercepts,
// slopes and asymptotes of items answered only right or only wrong or
// whose answers the fitted abilities order perfectly, the abilities of
// models answered only right or only wrong) are left out: their gradient
// only ever tends to 0.
type Certificate struct {
	MaxGradient float64 // the largest per-answer |projected gradient| over the free parameters
	Where       string  // which parameter: "theta of model m", "a of item q", ...
	// Separated counts the items whose answers the fitted abilities order
	// perfectly (every right answer above every wrong one in θ·a_j): their
	// slopes grow without bound under joint maximum likelihood, and they
	// are left out like the items answered only right or only wrong.
	Separated int
}

func Certify(r *model.Responses, f *model.IRT, c irt.CBMM) Certificate {
	c = c.WithDefaults()
	N, J, rk := len(f.Models), len(f.Items), f.Rank
	sig := f.Sigma
	if sig == 0 {
		sig = 1
	}
	three := f.C != nil
	// The cells are summed in chunks of their own (inChunks: a fixed split,
	// merged in order), so the sums are the same whatever the goroutines.
	parts := inChunks(len(r.Label), c.Threads, func(lo, hi int) *cellSums {
		a := newCellSums(N, J, rk)
		for cell := lo; cell < hi; cell++ {
			i, j := int(r.Model[cell]), int(r.Item[cell])
			n, k := float64(r.TrialsAt(cell)), r.SuccessesAt(cell)
			x := f.Logit(i, j)
			s := model.Sigmoid(x / sig)
			var g, gc float64 // ∂ℓ/∂x and ∂ℓ/∂c_j of the cell
			if three {
				cj := f.C[j]
				p := cj + (1-cj)*s
				p = math.Min(math.Max(p, 1e-300), 1-1e-16)
				d := -(k/p - (n-k)/(1-p)) // ∂ℓ/∂P
				g, gc = d*(1-cj)*s*(1-s)/sig, d*(1-s)
			} else {
				g = (n*s - k) / sig
			}
			for d := 0; d < rk; d++ {
				a.gT[i*rk+d] += g * f.A[j*rk+d]
				a.gA[j*rk+d] += g * f.Theta[i*rk+d]
			}
			a.gB[j] += g
			a.gC[j] += gc
			a.nT[i] += n
			a.nI[j] += n
			// The lowest θ·a_j among item j's right answers and the highest
			// among its wrong ones: when the first is above the second the
			// fitted abilities order the item's answers perfectly, and its
			// slope has no finite estimate (the likelihood rises for ever as
			// a_j grows).
			if k > 0 {
				a.rightI[j], a.rightM[i] = true, true
				a.minRight[j] = math.Min(a.minRight[j], x-f.B[j])
			}
			if k < n {
				a.wrongI[j], a.wrongM[i] = true, true
				a.maxWrong[j] = math.Max(a.maxWrong[j], x-f.B[j])
			}
		}
		return a
	})
	sum := parts[0]
	for _, p := range parts[1:] {
		sum.merge(p)
	}
	gT, nT, gA, gB, gC, nI := sum.gT, sum.nT, sum.gA, sum.gB, sum.gC, sum.nI
	rightI, wrongI, rightM, wrongM, minRight, maxWrong := sum.rightI, sum.wrongI, sum.rightM, sum.wrongM, sum.minRight, sum.maxWrong
	// Under a prior (irt.CBMM.Prior) the gradient is the negative log
	// posterior's, and the parameters the prior bounds are certified too:
	// their optimum is finite.
	pg := irt.NewPriorGrad(c, f)
	boundT, boundD, boundA := pg.Bounded()
	if pg.On() {
		for i := 0; i < N; i++ {
			for d := 0; d < rk; d++ {
				gT[i*rk+d] += pg.Theta(f.Theta[i*rk+d])
			}
		}
		for j := 0; j < J; j++ {
			for d := 0; d < rk; d++ {
				gA[j*rk+d] += pg.A(f.A[j*rk+d])
			}
			gB[j] += pg.B(f.B[j])
		}
	}
	var out Certificate
	worst := func(v float64, where func() string) {
		if v = math.Abs(v); v > out.MaxGradient || math.IsNaN(v) {
			out.MaxGradient, out.Where = v, where()
		}
	}
	for i := 0; i < N; i++ {
		if nT[i] == 0 || !boundT && (!rightM[i] || !wrongM[i]) {
			continue
		}
		for d := 0; d < rk; d++ {
			worst(gT[i*rk+d]/nT[i], func() string { return "theta of model " + limits.Clip(f.Models[i]) })
		}
	}
	pa, pb := c.GuessPrior[0]-1, c.GuessPrior[1]-1
	fitsC := three && c.FitsGuess()
	var commonA, total float64
	for j := 0; j < J; j++ {
		oneSided := !rightI[j] || !wrongI[j]
		if nI[j] == 0 || oneSided && !boundD {
			continue
		}
		if !oneSided && !c.Model.CommonSlope() && maxWrong[j] < minRight[j] {
			out.Separated++
			if !boundA {
				continue
			}
		}
		item := func(what string) func() string {
			return func() string { return what + " of item " + limits.Clip(f.Items[j]) }
		}
		worst(gB[j]/nI[j], item("d"))
		for d := 0; d < rk; d++ {
			g := gA[j*rk+d]
			if c.Model.CommonSlope() {
				commonA, total = commonA+g, total+nI[j]
				continue
			}
			if !f.Signed && f.A[j*rk+d] <= 0 && g > 0 {
				g = 0 // at the bound a ≥ 0, pushing outwards
			}
			worst(g/nI[j], item("a"))
		}
		if fitsC {
			cj, g := f.C[j], gC[j]
			if pa > 0 || pb > 0 {
				g += -pa/math.Max(cj, 1e-300) + pb/(1-cj)
			}
			if cj <= 0 && g > 0 || cj >= c.MaxGuess && g < 0 {
				g = 0
			}
			worst(g/nI[j], item("c"))
		}
	}
	if c.Model.CommonSlope() && total > 0 {
		worst(commonA/total, func() string { return "the common a" })
	}
	return out
}

// cellSums are Certify's sums over a range of cells.
type cellSums struct {
	gT, nT, gA, gB, gC, nI         []float64
	rightI, wrongI, rightM, wrongM []bool
	minRight, maxWrong             []float64
}

func newCellSums(N, J, rk int) *cellSums {
	a := &cellSums{gT: make([]float64, N*rk), nT: make([]float64, N), gA: make([]float64, J*rk), gB: make([]float64, J),
		gC: make([]float64, J), nI: make([]float64, J), rightI: make([]bool, J), wrongI: make([]bool, J),
		rightM: make([]bool, N), wrongM: make([]bool, N), minRight: make([]float64, J), maxWrong: make([]float64, J)}
	for j := range a.minRight {
		a.minRight[j], a.maxWrong[j] = math.Inf(1), math.Inf(-1)
	}
	return a
}

// merge adds b's sums into a.
func (a *cellSums) merge(b *cellSums) {
	for _, v := range [][2][]float64{{a.gT, b.gT}, {a.nT, b.nT}, {a.gA, b.gA}, {a.gB, b.gB}, {a.gC, b.gC}, {a.nI, b.nI}} {
		for k, x := range v[1] {
			v[0][k] += x
		}
	}
	for _, v := range [][2][]bool{{a.rightI, b.rightI}, {a.wrongI, b.wrongI}, {a.rightM, b.rightM}, {a.wrongM, b.wrongM}} {
		for k, x := range v[1] {
			v[0][k] = v[0][k] || x
		}
	}
	for j := range a.minRight {
		a.minRight[j], a.maxWrong[j] = math.Min(a.minRight[j], b.minRight[j]), math.Max(a.maxWrong[j], b.maxWrong[j])
	}
}

// inChunks runs f on the consecutive ranges of [0, n) that n alone decides
// (at most 8, of at least 2^16 cells), on up to threads goroutines (0: one
// per core), and returns f's results in the ranges' order.
func inChunks[T any](n, threads int, f func(lo, hi int) T) []T {
	k := min(8, max(1, n>>16))
	out := make([]T, k)
	workers := threads
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, k) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := int(next.Add(1) - 1); c < k; c = int(next.Add(1) - 1) {
				out[c] = f(c*n/k, (c+1)*n/k)
			}
		}()
	}
	wg.Wait()
	return out
}
