package irt

import (
	"math"

	"github.com/jeirt/jeirt/model"
)

// ridge is a prior (model.Prior) as cBMM's blocks see it. The majorizer of
// the loss at X is ‖X − Ỹ‖²_Ω/(8σ²) plus a constant, so 8σ² times the
// negative log prior joins each block's least squares as a ridge term
// λ(v − target)²: the θ, intercept and slope blocks stay closed-form (a
// ridge solve, a ridge-NNLS) and the negative log posterior never
// increases. The 1PL's common slope is then a block of its own (commonA).
type ridge struct {
	on      bool
	theta   float64 // λ_θ = 4σ²/sd_θ² (0: no prior)
	a, aT   float64 // λ_a = 4/sd_a², target σ·mean_a (per dimension: mean_a/√r)
	b, bT   float64 // λ_b = 4/sd_d², target σ·mean_d
	toLoss  float64 // 1/(8σ²): surrogate units to loss units
	commonA bool    // the 1PL with a prior: its common slope is fitted (a block of its own)
	// autoA, autoB: the targets aT, bT are the prior's fitted means
	// (model.Prior.AAuto, DAuto), a block of their own: after the items,
	// each becomes the mean of its parameters, its exact minimiser.
	autoA, autoB bool
}

func newRidge(p model.Prior, sigma float64, rank int, signed, fixedA bool) ridge {
	if !p.On() {
		return ridge{}
	}
	rg := ridge{on: true, toLoss: 1 / (8 * sigma * sigma), commonA: fixedA && p.Theta > 0}
	if p.Theta > 0 {
		rg.theta = 4 * sigma * sigma / (p.Theta * p.Theta)
	}
	if p.A > 0 {
		rg.a = 4 / (p.A * p.A)
		mean := p.AMean / math.Sqrt(float64(rank))
		if signed {
			mean = 0 // signed loadings: the prior is centred, so rotations keep it
		}
		rg.aT = sigma * mean
	}
	if p.D > 0 {
		rg.b, rg.bT = 4/(p.D*p.D), sigma*p.DMean
	}
	rg.autoA, rg.autoB = p.AAuto && p.A > 0 && !signed, p.DAuto && p.D > 0
	return rg
}

// fitMeans is the block of the prior's fitted means: the mean of the
// slopes a (every loading) and of the intercepts b, each its prior's
// target's exact minimiser given them.
func (rg *ridge) fitMeans(a, b []float64) {
	if rg.autoA && len(a) > 0 {
		s := 0.0
		for _, v := range a {
			s += v
		}
		rg.aT = s / float64(len(a))
	}
	if rg.autoB && len(b) > 0 {
		s := 0.0
		for _, v := range b {
			s += v
		}
		rg.bT = s / float64(len(b))
	}
}

// itemLoss is the negative log prior of one item's slopes a and intercept b.
func (rg *ridge) itemLoss(a []float64, b float64) float64 {
	s := rg.b * (b - rg.bT) * (b - rg.bT)
	for _, v := range a {
		s += rg.a * (v - rg.aT) * (v - rg.aT)
	}
	return s * rg.toLoss
}

// thetaLoss is the negative log prior of the abilities theta.
func (rg *ridge) thetaLoss(theta []float64) float64 {
	s := 0.0
	for _, v := range theta {
		s += v * v
	}
	return rg.theta * s * rg.toLoss
}

// sums1 is backend.ItemSolve1's sums with the prior's ridge added: the
// minimiser over a ≥ 0 and b of Σ(θa + b − ỹ)² + λ_a(a − a_T)² + λ_b(b − b_T)².
func (rg *ridge) sums1(n, stt, sy, sty float64) (float64, float64, float64, float64) {
	return n + rg.b, stt + rg.a, sy + rg.b*rg.bT, sty + rg.a*rg.aT
}

// addItem adds the ridge to an item's normal equations G (m x m, the
// loadings then the intercept) and h.
func (rg *ridge) addItem(G, h []float64, m int) {
	r := m - 1
	for d := 0; d < r; d++ {
		G[d*m+d] += rg.a
		h[d] += rg.a * rg.aT
	}
	G[r*m+r] += rg.b
	h[r] += rg.b * rg.bT
}

// PriorGrad is the gradient of a fit's negative log prior (CBMM.Prior, as
// its blocks apply it) in each kind of parameter, in loss units: what a
// first-order certificate adds to the likelihood's gradient (and, with its
// value, what train/irtlbfgs adds to its objective).
type PriorGrad struct{ rg ridge }

// NewPriorGrad is the prior gradient of the fitter c's prior at the fit f,
// whose slopes and intercepts give the prior's means where the prior fits
// them (model.Prior.DAuto, AAuto; f may be nil where it does not).
func NewPriorGrad(c CBMM, f *model.IRT) PriorGrad {
	c = c.withDefaults()
	rg := newRidge(c.Prior, c.Sigma, c.Rank, c.Signed, c.Model.CommonSlope())
	if f != nil {
		rg.fitMeans(f.A, f.B)
	}
	return PriorGrad{rg}
}

// On reports whether there is a prior.
func (g PriorGrad) On() bool { return g.rg.on }

// FitsMeans reports whether the prior fits its means (model.Prior.AAuto,
// DAuto); FitMeans sets them to their exact minimisers given a and b.
func (g PriorGrad) FitsMeans() bool          { return g.rg.autoA || g.rg.autoB }
func (g *PriorGrad) FitMeans(a, b []float64) { g.rg.fitMeans(a, b) }

// ItemLoss and ThetaLoss are the negative log prior of one item's slopes a
// and intercept b, and of the abilities theta, in loss units.
func (g PriorGrad) ItemLoss(a []float64, b float64) float64 { return g.rg.itemLoss(a, b) }
func (g PriorGrad) ThetaLoss(theta []float64) float64       { return g.rg.thetaLoss(theta) }

// Theta, A and B are ∂/∂θ, ∂/∂a and ∂/∂b of the negative log prior at v.
func (g PriorGrad) Theta(v float64) float64 { return 2 * g.rg.theta * v * g.rg.toLoss }
func (g PriorGrad) A(v float64) float64     { return 2 * g.rg.a * (v - g.rg.aT) * g.rg.toLoss }
func (g PriorGrad) B(v float64) float64     { return 2 * g.rg.b * (v - g.rg.bT) * g.rg.toLoss }

// Bounded reports which parameters the prior keeps finite however the data
// fall: the abilities (a prior on θ), the intercepts (on d) and the slopes
// (on a).
func (g PriorGrad) Bounded() (theta, d, a bool) { return g.rg.theta > 0, g.rg.b > 0, g.rg.a > 0 }
