package cat

import (
	"math"
	"sort"

	"github.com/jeirt/jeirt/model"
)

// criterion1 is a rank-1 selection criterion at the current θ whose value
// for an item of discrimination α = |a|/σ at location β = −d/a falls with
// the distance |θ − β| and rises with α.
type criterion1 interface {
	value(j int) float64
	// bound is at least the value of every item with α in [amin, amax] and
	// |θ − β| ≥ dist.
	bound(amax, amin, dist float64) float64
}

// index1 finds the available item of largest criterion value among a set of
// items of a rank-1 bank without evaluating most of them: the items are cut
// into blocks of about √n by decreasing α, each block sorted by β. A block's
// bound (its largest α, its smallest α and the distance from θ to its
// nearest β) says whether it can hold a better item than the best so far;
// blocks are visited by decreasing bound, and inside a block the items are
// scanned outward from θ until the bound at the scanned distance falls
// below the best. The answer is the exhaustive search's (ties go to the
// lower item index); used and ineligible items are skipped, so the index is
// built once per bank and shared by every session.
type index1 struct {
	beta   []float64 // per bank item
	blocks []block1
	order  []int // scratch: blocks by bound
	ub     []float64
	pos    []int
}

type block1 struct {
	items      []int32 // by increasing β
	beta       []float64
	amax, amin float64
}

func newIndex1(b *Bank, items []int) *index1 {
	sig := b.sigma()
	ix := &index1{beta: make([]float64, b.NumItems())}
	alpha := func(j int) float64 { return math.Abs(b.A[j]) / sig }
	for _, j := range items {
		if b.A[j] != 0 {
			ix.beta[j] = -b.D[j] / b.A[j]
		}
	}
	byA := append([]int(nil), items...)
	sort.SliceStable(byA, func(x, y int) bool { return alpha(byA[x]) > alpha(byA[y]) })
	size := max(32, int(math.Sqrt(float64(len(byA)))))
	for lo := 0; lo < len(byA); lo += size {
		part := byA[lo:min(lo+size, len(byA))]
		blk := block1{amax: alpha(part[0]), amin: alpha(part[len(part)-1])}
		sorted := append([]int(nil), part...)
		sort.SliceStable(sorted, func(x, y int) bool { return ix.beta[sorted[x]] < ix.beta[sorted[y]] })
		for _, j := range sorted {
			blk.items = append(blk.items, int32(j))
			blk.beta = append(blk.beta, ix.beta[j])
		}
		ix.blocks = append(ix.blocks, blk)
	}
	ix.order = make([]int, len(ix.blocks))
	ix.ub = make([]float64, len(ix.blocks))
	ix.pos = make([]int, len(ix.blocks))
	return ix
}

// best returns the available item of largest c.value at theta (−1 when
// none is available) and its value.
func (ix *index1) best(theta float64, c criterion1, avail []bool) (int, float64) {
	for k := range ix.blocks {
		blk := &ix.blocks[k]
		p := sort.SearchFloat64s(blk.beta, theta)
		d := math.Inf(1)
		if p < len(blk.beta) {
			d = blk.beta[p] - theta
		}
		if p > 0 {
			d = math.Min(d, theta-blk.beta[p-1])
		}
		ix.pos[k], ix.ub[k], ix.order[k] = p, c.bound(blk.amax, blk.amin, d), k
	}
	sort.Slice(ix.order, func(x, y int) bool { return ix.ub[ix.order[x]] > ix.ub[ix.order[y]] })
	best, bestV := -1, math.Inf(-1)
	consider := func(j int) {
		if !avail[j] {
			return
		}
		if v := c.value(j); v > bestV || v == bestV && j < best {
			best, bestV = j, v
		}
	}
	for _, k := range ix.order {
		if ix.ub[k] < bestV {
			break
		}
		blk := &ix.blocks[k]
		l, r := ix.pos[k]-1, ix.pos[k]
		for l >= 0 || r < len(blk.beta) {
			var at int
			switch {
			case l < 0:
				at, r = r, r+1
			case r >= len(blk.beta):
				at, l = l, l-1
			case theta-blk.beta[l] <= blk.beta[r]-theta:
				at, l = l, l-1
			default:
				at, r = r, r+1
			}
			if c.bound(blk.amax, blk.amin, math.Abs(blk.beta[at]-theta)) < bestV {
				break // every item further out is bounded lower still
			}
			consider(int(blk.items[at]))
		}
	}
	return best, bestV
}

// psi is σ(x)(1 − σ(x)), the Fisher weight of a logistic answer.
func psi(x float64) float64 {
	e := math.Exp(-math.Abs(x))
	return e / ((1 + e) * (1 + e))
}

// fisher1 is the item information I_j(θ) = (a_j/σ)² p_j(1 − p_j)
// (Lord 1980, eq. 5-6 for the 2PL): for an item of discrimination α it
// peaks, at α²/4, where θ = β.
type fisher1 struct {
	b     *Bank
	theta float64
}

func (f fisher1) value(j int) float64 {
	sig := f.b.sigma()
	a := f.b.A[j] / sig
	return a * a * psi((f.b.A[j]*f.theta+f.b.D[j])/sig)
}

func (f fisher1) bound(amax, amin, dist float64) float64 { return amax * amax * psi(amin*dist) }

// Gauss-Legendre nodes and weights on [−1, 1], 8 points.
var (
	glNodes   = [8]float64{-0.9602898564975363, -0.7966664774136267, -0.5255324099163290, -0.1834346424956498, 0.1834346424956498, 0.5255324099163290, 0.7966664774136267, 0.9602898564975363}
	glWeights = [8]float64{0.1012285362903763, 0.2223810344533745, 0.3137066458778873, 0.3626837833783620, 0.3626837833783620, 0.3137066458778873, 0.2223810344533745, 0.1012285362903763}
)

// kl1 is Chang and Ying's (1996, "A global information approach to
// computerized adaptive testing", Applied Psychological Measurement 20)
// KL information of an item at the estimate θ̂,
//
//	K_j(θ̂) = ∫_{θ̂−δ}^{θ̂+δ} KL(P_j(θ̂) ‖ P_j(θ)) dθ,  δ = c/√n,
//
// n the number of items answered (at least 1), by 8-point Gauss-Legendre
// quadrature. Early in a test, when θ̂ is poor, it favours items that
// separate θ̂ from a whole interval rather than from its immediate
// neighbours; as n grows it tends to Fisher information (K ≈ I·δ³/3).
type kl1 struct {
	b            *Bank
	theta, delta float64
}

func (k kl1) value(j int) float64 {
	sig := k.b.sigma()
	x := (k.b.A[j]*k.theta + k.b.D[j]) / sig
	p := model.Sigmoid(x)
	a := k.b.A[j] / sig
	spx := model.Softplus(x)
	s := 0.0
	for q, u := range glNodes {
		y := x + a*k.delta*u
		// KL(Ber(σ(x)) ‖ Ber(σ(y))) = model.Softplus(y) − model.Softplus(x) − σ(x)(y − x).
		s += glWeights[q] * (model.Softplus(y) - spx - p*(y-x))
	}
	return s * k.delta
}

// bound: KL(x ‖ y) = ½ψ(ξ)(y − x)² for some ξ between the logits, which lie
// at least α(dist − δ)₊ from 0, so K ≤ α²ψ(α(dist − δ)₊)·δ³/3; the
// quadrature, exact for u², obeys the same bound.
func (k kl1) bound(amax, amin, dist float64) float64 {
	return amax * amax * psi(amin*math.Max(dist-k.delta, 0)) * k.delta * k.delta * k.delta / 3
}
