package fitstat

import (
	"math"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/irt"
)

// Likelihood says how a fit was estimated, for Stats: what its
// objective held besides the log-likelihood, and which parameters it
// estimated.
type Likelihood struct {
	// Prior is the prior the fit ran under, its scales as estimated
	// (model.Prior.Resolved); the zero Prior is joint maximum likelihood.
	// Means fitted with the rest (AAuto, DAuto) are taken from the fit.
	Prior model.Prior
	// Hyper is the number of the prior's hyperparameters estimated from
	// the data (fitted means, scales estimated by empirical Bayes): each
	// counts as a parameter.
	Hyper int
	// FitGuess: the 3PL's lower asymptotes were fitted (not given), under
	// the Beta(GuessPrior[0], GuessPrior[1]) prior (zero:
	// irt.DefaultGuessPrior; {1, 1}: none), as irt.CBMM fits them.
	FitGuess   bool
	GuessPrior [2]float64
	// Marginal: the fit is marginal maximum likelihood (irtmml.MML2PL, θ
	// integrated out over N(0, 1) on 61 points of [−6, 6]); its
	// log-likelihood is the marginal one, and θ is not a parameter.
	Marginal bool
}

// Stats are the log-likelihood of a fit at its estimate, the
// log-prior apart from it, and the information criteria where they are
// defined.
type Stats struct {
	// LogLikelihood is Σ over the observed cells of k·log P + (n − k)·log(1 − P)
	// at the estimate (θ and the items; marginal fits: the marginal
	// log-likelihood Σ_i log ∫ Π_j P(y_ij | θ) φ(θ) dθ). A cell of n trials
	// counts the likelihood of its n answers, without the binomial
	// coefficient (constant in the parameters). With graded scores (k
	// fractional) it is the quasi-log-likelihood of the fractional logit
	// model, and Quasi is set.
	LogLikelihood float64
	Quasi         bool
	// LogPrior is the log density of the fit's priors at the estimate,
	// without their normalising constants (those of θ, a and d, and the
	// 3PL's Beta prior on fitted c), so that the fit's objective (the last
	// loss of its history) is −(LogLikelihood + LogPrior); 0 with no prior.
	LogPrior float64
	// Parameters is k, the number of free parameters (see Count); N is
	// BIC's n: the observed answers (trials) of a joint fit, the models
	// of a marginal fit (mirt's convention, its respondents).
	Parameters, N int
	// AIC = −2·LogLikelihood + 2k and BIC = −2·LogLikelihood + k·ln N,
	// NaN with graded scores (no likelihood) or a non-finite LogLikelihood.
	AIC, BIC float64
}

// Statistics computes the fit statistics of fit on its responses r.
func (l Likelihood) Statistics(r *model.Responses, fit *model.IRT) Stats {
	st := Stats{Quasi: r.GradedCells() > 0, Parameters: l.Count(r, fit)}
	if l.Marginal {
		st.LogLikelihood, st.N = MarginalLogLikelihood(r, fit), r.NumModels()
	} else {
		st.LogLikelihood, st.N = LogLikelihood(r, fit), int(r.TotalTrials())
	}
	st.LogPrior = l.logPrior(fit)
	st.AIC, st.BIC = math.NaN(), math.NaN()
	if !st.Quasi && !math.IsNaN(st.LogLikelihood) && !math.IsInf(st.LogLikelihood, 0) {
		k := float64(st.Parameters)
		st.AIC = -2*st.LogLikelihood + 2*k
		st.BIC = -2*st.LogLikelihood + k*math.Log(float64(st.N))
	}
	return st
}

// Count is the number of free parameters k of the fit: the items'
// parameters (a slope per dimension, an intercept, and the 3PL's fitted
// lower asymptote; the 1PL's one common slope), plus, for a joint fit, the
// abilities θ (r per model), plus the prior's estimated hyperparameters.
// Items and models without an observed answer are not counted. A joint fit
// without a prior on θ is identified only up to the gauge (an affine map of
// θ that X = θAᵀ + 1dᵀ absorbs: r² + r directions), which Count subtracts; a
// prior on θ fixes the gauge but for the rotations of signed fits
// (r(r − 1)/2), which a centred prior leaves free.
func (l Likelihood) Count(r *model.Responses, fit *model.IRT) int {
	rk := fit.Rank
	models, items := make([]bool, r.NumModels()), make([]bool, r.NumItems())
	for c := range r.Label {
		models[r.Model[c]], items[r.Item[c]] = true, true
	}
	J, N := count(items), count(models)
	k := l.Hyper
	switch {
	case fit.Family.CommonSlope():
		k += J + 1
	default:
		k += J * (rk + 1)
	}
	if fit.Family.HasAsymptote() && l.FitGuess {
		k += J
	}
	if l.Marginal {
		return k
	}
	k += N * rk
	switch {
	case l.Prior.Theta == 0:
		k -= rk*rk + rk
	case fit.Signed:
		k -= rk * (rk - 1) / 2
	}
	return k
}

func count(b []bool) int {
	n := 0
	for _, v := range b {
		if v {
			n++
		}
	}
	return n
}

// logPrior is the log density of the fit's priors at fit, without
// constants, as irt.CBMM's objective carries them: θ ~ N(0, Theta²), a/σ ~
// N(AMean/√r, A²) (0 for signed loadings; the slopes' mean where it is
// fitted), d/σ ~ N(DMean, D²) (the intercepts' mean where fitted), and
// Beta(α, β) on the 3PL's fitted c. A marginal fit has no prior on θ but
// its N(0, 1), which the marginal likelihood integrates.
func (l Likelihood) logPrior(fit *model.IRT) float64 {
	p, sigma := l.Prior, fit.Sigma
	if sigma == 0 {
		sigma = 1
	}
	lp := 0.0
	if p.Theta > 0 && !l.Marginal {
		for _, v := range fit.Theta {
			lp -= v * v / (2 * p.Theta * p.Theta)
		}
	}
	mean := func(v []float64) float64 {
		s := 0.0
		for _, x := range v {
			s += x
		}
		return s / float64(len(v))
	}
	if p.A > 0 && len(fit.A) > 0 {
		target := sigma * p.AMean / math.Sqrt(float64(fit.Rank))
		switch {
		case fit.Signed:
			target = 0
		case p.AAuto:
			target = mean(fit.A)
		}
		for _, v := range fit.A {
			lp -= (v - target) * (v - target) / (2 * sigma * sigma * p.A * p.A)
		}
	}
	if p.D > 0 && len(fit.B) > 0 {
		target := sigma * p.DMean
		if p.DAuto {
			target = mean(fit.B)
		}
		for _, v := range fit.B {
			lp -= (v - target) * (v - target) / (2 * sigma * sigma * p.D * p.D)
		}
	}
	if fit.C != nil && l.FitGuess {
		g := l.GuessPrior
		if g == [2]float64{} {
			g = irt.DefaultGuessPrior
		}
		if pa, pb := g[0]-1, g[1]-1; pa >= 0 && pb >= 0 {
			for _, c := range fit.C {
				if pa > 0 {
					lp += pa * math.Log(c)
				}
				lp += pb * math.Log1p(-c)
			}
		}
	}
	return lp
}

// logPQ is log P and log(1 − P) of a cell at logit x: P = sigmoid(x/σ), or
// c + (1 − c)·sigmoid(x/σ) with a lower asymptote c > 0, without
// cancellation on either side of 0.
func logPQ(x, sigma, c float64) (logP, logQ float64) {
	u := x / sigma
	logP, logQ = -model.Softplus(-u), -model.Softplus(u)
	if c > 0 {
		// log(c + (1 − c)s) = log s + log1p(c(1 − s)/s) = log s + log1p(c·e^−u)
		logP += math.Log1p(c * math.Exp(-u))
		if math.IsInf(logP, 0) || math.IsNaN(logP) { // u far below 0: P ≈ c
			logP = math.Log(c + (1-c)*model.Sigmoid(u))
		}
		logQ += math.Log1p(-c)
	}
	return logP, logQ
}

// LogLikelihood is the joint log-likelihood of fit on r at its estimate:
// Σ_c k_c·log P_c + (n_c − k_c)·log(1 − P_c) over the observed cells (the
// quasi-log-likelihood for graded scores).
func LogLikelihood(r *model.Responses, fit *model.IRT) float64 {
	sigma := fit.Sigma
	if sigma == 0 {
		sigma = 1
	}
	ll := 0.0
	for c := range r.Label {
		i, j := int(r.Model[c]), int(r.Item[c])
		cj := 0.0
		if fit.C != nil {
			cj = fit.C[j]
		}
		lp, lq := logPQ(fit.Logit(i, j), sigma, cj)
		k, n := r.SuccessesAt(c), float64(r.TrialsAt(c))
		if k > 0 {
			ll += k * lp
		}
		if n-k > 0 {
			ll += (n - k) * lq
		}
	}
	return ll
}

// MarginalPoints and MarginalLimit are the quadrature of
// MarginalLogLikelihood: irtmml.MML2PL's default grid.
const (
	MarginalPoints = 61
	MarginalLimit  = 6.0
)

// MarginalLogLikelihood is the marginal log-likelihood of the rank-1 fit's
// items on r, θ integrated out over N(0, 1) on MarginalPoints equally
// spaced points of [−MarginalLimit, MarginalLimit] with normalised weights
// (the objective of irtmml.MML2PL): Σ_i log Σ_q w_q Π_{c of i} P(y_c | θ_q).
func MarginalLogLikelihood(r *model.Responses, fit *model.IRT) float64 {
	Q := MarginalPoints
	grid, logw := make([]float64, Q), make([]float64, Q)
	norm := 0.0
	for q := range grid {
		grid[q] = -MarginalLimit + 2*MarginalLimit*float64(q)/float64(Q-1)
		norm += math.Exp(-grid[q] * grid[q] / 2)
	}
	for q := range grid {
		logw[q] = -grid[q]*grid[q]/2 - math.Log(norm)
	}
	sigma := fit.Sigma
	if sigma == 0 {
		sigma = 1
	}
	bm := r.ByModel()
	w := make([]float64, Q)
	ll := 0.0
	for i := 0; i < r.NumModels(); i++ {
		row := bm.Row(i)
		if len(row) == 0 {
			continue
		}
		copy(w, logw)
		for _, c := range row {
			j := int(r.Item[c])
			cj := 0.0
			if fit.C != nil {
				cj = fit.C[j]
			}
			k, n := r.SuccessesAt(int(c)), float64(r.TrialsAt(int(c)))
			for q, th := range grid {
				lp, lq := logPQ(th*fit.A[j]+fit.B[j], sigma, cj)
				if k > 0 {
					w[q] += k * lp
				}
				if n-k > 0 {
					w[q] += (n - k) * lq
				}
			}
		}
		mx := math.Inf(-1)
		for _, v := range w {
			mx = math.Max(mx, v)
		}
		s := 0.0
		for _, v := range w {
			s += math.Exp(v - mx)
		}
		ll += mx + math.Log(s)
	}
	return ll
}
