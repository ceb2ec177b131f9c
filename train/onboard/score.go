package onboard

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
)

// scoreDraws is the number of posterior draws of a new row behind its score.
const scoreDraws = 64

// Score estimates a new model's score on the items on of the map m (indices
// of m's items; nil: every item; m's rows are not used) from its fitted
// answers data (answered: the observed fraction correct by item index of m,
// each in on), by the difference estimator of
// survey sampling (Särndal, Swensson and Wretman, Model Assisted Survey
// Sampling, 1992, §6.3) with the row's predictions as the auxiliary model:
//
//	score = (Σ_A y_j + Σ_U p̄_j + (N−n)·ē) / N
//
// A the n answered items, counted as they are; U the N−n others, each its
// mean P(correct) p̄_j over draws of the row's Laplace posterior
// (Posterior); ē the mean over A of the leave-one-out residuals
// e_j = y_j − σ(z_{−j}), the answered items' misfit of the frozen map for
// this model (z_{−j}, the logit of item j from the row fitted without it,
// is one Newton step from the MAP row with the Sherman-Morrison update:
// z_{−j} = z_j + a_j/(1 − w_j a_j)·n_j(p_j − y_j), a_j = u_jᵀH⁻¹u_j,
// w_j = n_j p_j(1−p_j)), shrunk by β = τ²/(τ²+v) with v = s²_e/n its
// noise (s²_e the sample variance of the e_j) and τ² = (ē²−v)₊, so that a
// residual within its noise moves the score little. (The unanswered
// items' corrected mean is kept in [0, 1].) The level-interval is the
// normal one, clipped to [all of U wrong, all of U right], of variance
//
//	max(Var_post Σ_U p_j, (N−n)²·v)/N² + Σ_U p̄_j(1−p̄_j)/N²:
//
// the larger of two estimates of the uncertainty of the unanswered items'
// mean (the spread of the row's posterior, and the noise of ē, which also
// holds the map's misfit), plus their own Bernoulli noise. With fewer than
// two answers ē is 0 and only the posterior spread is left. With the
// posterior spread alone, intervals on a map that was off for the new
// models covered their true score well below their level (the in-sample
// residuals of the fitted row are near zero by construction).
func (o Onboard) Score(m *model.JEIRT, on []int, data *RowData, prior Gaussian, answered map[int]float64, level float64) (*checkpoint.ScoreEstimate, error) {
	post, err := o.WithDefaults().Posterior(data, prior)
	if err != nil {
		return nil, err
	}
	d := m.Dim
	if on == nil {
		on = make([]int, m.NumItems())
		for j := range on {
			on[j] = j
		}
	}
	J := len(on)
	var ch mat.Cholesky
	if !ch.Factorize(mat.NewSymDense(d, post.Precision)) {
		return nil, fmt.Errorf("onboard: the row's posterior precision is not positive definite")
	}
	var U mat.TriDense
	ch.UTo(&U)
	// Σ_U p over each draw: its mean (eu), mean square (eu2), and the mean
	// Bernoulli variance Σ_U p(1−p) (ev).
	var eu, eu2, ev float64
	row := make([]float32, d)
	x := mat.NewVecDense(d, nil)
	z := mat.NewVecDense(d, nil)
	for s := 0; s < scoreDraws; s++ {
		for k := 0; k < d; k++ {
			z.SetVec(k, fixedNormal(s, k))
		}
		// x ~ N(0, Precision⁻¹): solve U x = z with Precision = UᵀU.
		if err := x.SolveVec(&U, z); err != nil {
			return nil, err
		}
		for k := range row {
			row[k] = float32(post.Mean[k] + x.AtVec(k))
		}
		var u, v float64
		for _, j := range on {
			if _, ok := answered[j]; ok {
				continue
			}
			p := model.Sigmoid(model.Logit(m.ItemEmbedding(j), row))
			u += p
			v += p * (1 - p)
		}
		eu, eu2, ev = eu+u/scoreDraws, eu2+u*u/scoreDraws, ev+v/scoreDraws
	}
	var obs float64
	for _, y := range answered {
		obs += y
	}
	N, n := float64(J), float64(len(answered))
	resid, s2, err := looResiduals(data, post, &ch)
	if err != nil {
		return nil, err
	}
	est := &checkpoint.ScoreEstimate{Items: J, Answered: len(answered)}
	// varU: the variance of Σ_U p, the larger of its spread over the row's
	// posterior and (N−n)² times ē's noise.
	varU := math.Max(eu2-eu*eu, 0)
	if data.Len() >= 2 {
		// ē's noise v; its shrinkage factor β = τ²/(τ²+v) with τ² = (ē²−v)₊,
		// so that a residual within its own noise moves the score little.
		v := s2 / float64(data.Len())
		if t2 := resid*resid - v; t2 > 0 {
			est.Residual = resid * t2 / (t2 + v)
		}
		varU = math.Max(varU, (N-n)*(N-n)*v)
	}
	// The unanswered items' mean, corrected, stays a fraction.
	unans := 0.0
	if N > n {
		unans = math.Min(math.Max(eu/(N-n)+est.Residual, 0), 1)
	}
	est.Score = (obs + (N-n)*unans) / N
	if !(level > 0 && level < 1) {
		level = 0.95
	}
	h := math.Sqrt2 * math.Erfinv(level) * math.Sqrt(varU+ev) / N
	est.Lo, est.Hi = math.Max(obs/N, est.Score-h), math.Min((obs+N-n)/N, est.Score+h)
	if !model.Finite(est.Score) || !model.Finite(est.Lo) || !model.Finite(est.Hi) {
		return nil, fmt.Errorf("onboard: score %v [%v, %v] is not finite", est.Score, est.Lo, est.Hi)
	}
	return est, nil
}

// looResiduals is the mean and the sample variance of the leave-one-out
// residuals y_j − σ(z_{−j}) of data's cells under the Laplace posterior post
// (ch: its precision H factorized); see Score. With fewer than two cells
// the variance is 0.
func looResiduals(data *RowData, post Gaussian, ch *mat.Cholesky) (mean, variance float64, err error) {
	d, n := data.Dim, data.Len()
	e := make([]float64, n)
	hu := mat.NewVecDense(d, nil)
	for j := 0; j < n; j++ {
		u := data.U[j*d : (j+1)*d]
		var zj float64
		for k, v := range u {
			zj += v * post.Mean[k]
		}
		zj -= data.Norm[j]
		p := model.Sigmoid(zj)
		y, nt := data.target(j)
		if err := ch.SolveVecTo(hu, mat.NewVecDense(d, append([]float64(nil), u...))); err != nil {
			return 0, 0, fmt.Errorf("onboard: leave-one-out residuals: %w", err)
		}
		var a float64 // u_jᵀ H⁻¹ u_j
		for k, v := range u {
			a += v * hu.AtVec(k)
		}
		w := nt * p * (1 - p)
		// 1 − w a > 0: H − w u uᵀ is the precision without cell j, still positive definite.
		e[j] = y - model.Sigmoid(zj+a/(1-w*a)*nt*(p-y))
		mean += e[j] / float64(n)
	}
	if n < 2 {
		return mean, 0, nil
	}
	for _, v := range e {
		variance += (v - mean) * (v - mean) / float64(n-1)
	}
	return mean, variance, nil
}

// fixedNormal is a fixed standard normal number for draw s of coordinate k
// (Box-Muller on a Weyl sequence), so that scores are reproducible.
func fixedNormal(s, k int) float64 {
	u1 := math.Max(math.Mod(float64(s+1)*0.7548776662466927+float64(k)*0.3819660112501051, 1), 1e-12)
	u2 := math.Mod(float64(s+1)*0.5698402909980532+float64(k)*0.6180339887498949, 1)
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}
