package analyze

import (
	"fmt"
	"math"
	"sort"

	"github.com/jeirt/jeirt/model"
)

// Flags of ICC.
const (
	FlagNonMonotone   = "non_monotone"   // the empirical curve falls significantly between two ability bins
	FlagNegativeSlope = "negative_slope" // the best-fitting free slope is significantly negative
)

// ICC compares each item's empirical item characteristic curve (proportion
// correct among the models of each ability bin) with the fitted 2PL curve,
// the check behind JE-IRT's remark that 2PL's monotone, one-slope curve
// fails on some LLM items. Two flags:
//
//   - non_monotone: between two adjacent bins, each with at least MinCount
//     cells, the proportion correct falls by more than Z standard errors
//     (√(p̄(1−p̄)(1/n₁ + 1/n₂)), p̄ pooled);
//   - negative_slope: the item's own logistic regression on θ, with a free
//     slope (Newton's method; the fit's a ≥ 0 cannot show it), has a slope
//     whose Wald z is below −Z: stronger models get it wrong more often.
//
// The zero value works: 5 bins (quantiles of θ over the models), Z = 2.5,
// MinCount 5.
type ICC struct {
	Bins     int
	Z        float64
	MinCount int
}

// ICCItem is one item's curves and flags.
type ICCItem struct {
	ID        string
	A, D      float64 // the fitted 2PL slope and intercept (logit a·θ + d, over σ)
	Slope     float64 // free logistic-regression slope on θ
	SlopeZ    float64 // its Wald z (NaN when the information is zero)
	MaxDrop   float64 // the largest fall of the empirical curve between adjacent bins
	DropZ     float64 // that fall in standard errors
	Flags     []string
	N         []int     // cells per bin
	Empirical []float64 // proportion correct per bin (NaN for an empty bin)
	Fitted    []float64 // mean fitted P over the same cells
}

// ICCResult is the bins and every item.
type ICCResult struct {
	Edges []float64 // Bins+1 ability edges (the first −Inf, the last +Inf)
	Mid   []float64 // median θ of the models in each bin
	Items []ICCItem
	Count map[string]int // items per flag
}

// Run computes the curves of every item of fit (rank 1) on r (the responses
// it was fitted to: same models and items, by name).
func (c ICC) Run(r *model.Responses, fit *model.IRT) (*ICCResult, error) {
	if c.Bins == 0 {
		c.Bins = 5
	}
	if c.Z == 0 {
		c.Z = 2.5
	}
	if c.MinCount == 0 {
		c.MinCount = 5
	}
	if fit.Rank != 1 {
		return nil, fmt.Errorf("icc: the fit has rank %d; empirical curves need a rank-1 fit", fit.Rank)
	}
	N := len(fit.Models)
	if c.Bins < 2 || c.Bins > N {
		return nil, fmt.Errorf("icc: %d bins for %d models", c.Bins, N)
	}
	// Map r's models and items onto the fit's.
	mi, ii := indexByName(fit.Models), indexByName(fit.Items)
	sigma := fit.Sigma
	if sigma == 0 {
		sigma = 1
	}
	// Quantile bins of θ.
	th := append([]float64(nil), fit.Theta...)
	sort.Float64s(th)
	res := &ICCResult{Edges: make([]float64, c.Bins+1), Mid: make([]float64, c.Bins), Count: map[string]int{}}
	res.Edges[0], res.Edges[c.Bins] = math.Inf(-1), math.Inf(1)
	for k := 1; k < c.Bins; k++ {
		res.Edges[k] = th[k*N/c.Bins]
	}
	for k := 0; k < c.Bins; k++ {
		lo, hi := k*N/c.Bins, (k+1)*N/c.Bins
		res.Mid[k] = th[(lo+hi)/2]
	}
	binOf := func(t float64) int {
		return sort.Search(c.Bins-1, func(k int) bool { return t < res.Edges[k+1] })
	}
	J := len(fit.Items)
	type cell struct {
		theta float64
		y     float64
	}
	cells := make([][]cell, J)
	for x := range r.Label {
		i, ok1 := mi[r.Models[r.Model[x]]]
		j, ok2 := ii[r.Items[r.Item[x]]]
		if !ok1 || !ok2 {
			continue
		}
		cells[j] = append(cells[j], cell{fit.Theta[i], r.ScoreAt(x)}) // a score or k/n: the observed fraction
	}
	for j := 0; j < J; j++ {
		it := ICCItem{ID: fit.Items[j], A: fit.A[j], D: fit.B[j], N: make([]int, c.Bins),
			Empirical: make([]float64, c.Bins), Fitted: make([]float64, c.Bins), SlopeZ: math.NaN(), DropZ: math.NaN()}
		right := make([]float64, c.Bins)
		for _, x := range cells[j] {
			k := binOf(x.theta)
			it.N[k]++
			right[k] += x.y
			it.Fitted[k] += fit.Guessing(j, model.Sigmoid((fit.A[j]*x.theta+fit.B[j])/sigma))
		}
		for k := range it.N {
			if it.N[k] == 0 {
				it.Empirical[k], it.Fitted[k] = math.NaN(), math.NaN()
				continue
			}
			it.Empirical[k] = right[k] / float64(it.N[k])
			it.Fitted[k] /= float64(it.N[k])
		}
		for k := 0; k+1 < c.Bins; k++ {
			n1, n2 := it.N[k], it.N[k+1]
			if n1 < c.MinCount || n2 < c.MinCount {
				continue
			}
			drop := it.Empirical[k] - it.Empirical[k+1]
			p := (right[k] + right[k+1]) / float64(n1+n2)
			se := math.Sqrt(p * (1 - p) * (1/float64(n1) + 1/float64(n2)))
			if drop > it.MaxDrop {
				it.MaxDrop = drop
				if se > 0 {
					it.DropZ = drop / se
				}
			}
		}
		if it.DropZ > c.Z {
			it.Flags = append(it.Flags, FlagNonMonotone)
		}
		xs, ys := make([]float64, len(cells[j])), make([]float64, len(cells[j]))
		for k, x := range cells[j] {
			xs[k], ys[k] = x.theta, x.y
		}
		it.Slope, it.SlopeZ = logisticSlope(xs, ys)
		if it.SlopeZ < -c.Z {
			it.Flags = append(it.Flags, FlagNegativeSlope)
		}
		for _, f := range it.Flags {
			res.Count[f]++
		}
		res.Items = append(res.Items, it)
	}
	return res, nil
}

func indexByName(names []string) map[string]int {
	m := make(map[string]int, len(names))
	for k, n := range names {
		m[n] = k
	}
	return m
}

// logisticSlope fits P(y = 1) = sigmoid(α + βx) by Newton's method with a
// tiny ridge (1e-6) that keeps separable data finite, and returns β and its
// Wald z = β/SE(β) from the inverse Fisher information (NaN when singular or
// when the item is all right or all wrong).
func logisticSlope(x, y []float64) (beta, z float64) {
	n := len(x)
	if n < 3 {
		return math.NaN(), math.NaN()
	}
	s := 0.0
	for _, v := range y {
		s += v
	}
	if s == 0 || s == float64(n) {
		return 0, math.NaN()
	}
	alpha := math.Log(s / (float64(n) - s))
	const ridge = 1e-6
	var h00, h01, h11 float64
	for it := 0; it < 50; it++ {
		var g0, g1 float64
		h00, h01, h11 = ridge, 0, ridge
		for k := range x {
			p := model.Sigmoid(alpha + beta*x[k])
			w := p * (1 - p)
			g0 += y[k] - p
			g1 += (y[k] - p) * x[k]
			h00 += w
			h01 += w * x[k]
			h11 += w * x[k] * x[k]
		}
		g0 -= ridge * alpha
		g1 -= ridge * beta
		det := h00*h11 - h01*h01
		if !(det > 0) {
			return beta, math.NaN()
		}
		da, db := (h11*g0-h01*g1)/det, (h00*g1-h01*g0)/det
		alpha, beta = alpha+da, beta+db
		if math.Abs(da)+math.Abs(db) < 1e-10 {
			break
		}
	}
	det := h00*h11 - h01*h01
	if !(det > 0) {
		return beta, math.NaN()
	}
	return beta, beta / math.Sqrt(h00/det)
}
