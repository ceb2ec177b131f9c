package fitstat

import (
	"math"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/backend"
)

// FlagPersonMisfit marks a model whose answers fit the model badly: its lz*
// is below −PersonMisfitZ (it solves items harder than its ability and
// misses easier ones more than chance allows: contamination, a broken
// harness, a grading error).
const FlagPersonMisfit = "person_misfit"

// PersonMisfitZ is the threshold of FlagPersonMisfit: lz* < −2.326, the
// one-sided 1% point of N(0, 1), so that about 1 consistent model in 100 is
// flagged by chance.
const PersonMisfitZ = 2.326

// PersonMisfitMinItems is the fewest answered items a model needs to be
// flagged: lz*'s normal reference is asymptotic in the items answered, and
// on a short test it is far off (on LSAT7's 5 items, 5% of the respondents
// fall below the 1% point under the marginal fit).
const PersonMisfitMinItems = 20

// PersonFit is one model's person-fit statistics (NaN where undefined: no
// answers, a θ without a finite estimate, graded scores).
type PersonFit struct {
	// LZStar is Snijders' (2001) lz*, the standardised log-likelihood of
	// the model's answers corrected for θ being estimated from them: about
	// N(0, 1) for answers that follow the model, strongly negative for
	// answers against it (hard items solved, easy ones missed).
	LZStar float64
	// Infit and Outfit are the information-weighted and unweighted mean
	// squares of the model's standardised residuals (Wright and Masters
	// 1982), as items.csv's for items: expectation 1; above 1.5 erratic,
	// below 0.5 more predictable than the model (Linacre 2002).
	Infit, Outfit float64
}

// PersonFitOptions says how θ was estimated, for lz*'s correction.
type PersonFitOptions struct {
	// ThetaSD is the sd of θ's prior (model.Prior.Theta) for maximum a
	// posteriori θ; 0: maximum likelihood (joint, without a prior on θ),
	// where a model answering only right or only wrong has no finite θ
	// and no person fit.
	ThetaSD float64
}

// PersonFits computes each model's person fit at the fit's estimate.
//
// lz* follows Snijders (2001, "Asymptotic null distribution of person fit
// statistics with estimated person parameter", Psychometrika 66, 331-342,
// eqs. 9-13) for a θ solving r₀(θ) + Σ_j (y_j − P_j) r_j(θ) = 0, with the
// log-likelihood weights w_j = log(P_j/(1 − P_j)), r_j = P'_j/(P_j(1 − P_j))
// (a_j/σ for the 2PL; a vector at rank > 1) and r₀(θ) = −θ/ThetaSD² (MAP;
// 0 for ML):
//
//	c   = (Σ_j n_j P'_j r_jᵀ)⁻¹ Σ_j n_j P'_j w_j
//	w̃_j = w_j − c·r_j
//	lz* = (Σ_j (k_j − n_j P_j) w_j + c·r₀(θ)) / √(Σ_j n_j P_j(1 − P_j) w̃_j²)
//
// A cell of n trials (k right) counts as n answers with the same P. With
// graded scores (fractional k) no statistic is defined and all are NaN;
// lz* is NaN for a model with no more answered items than dimensions
// (the correction leaves no degree of freedom).
func PersonFits(r *model.Responses, fit *model.IRT, opt PersonFitOptions) []PersonFit {
	N, rk := r.NumModels(), fit.Rank
	out := make([]PersonFit, N)
	nan := math.NaN()
	for i := range out {
		out[i] = PersonFit{nan, nan, nan}
	}
	if r.GradedCells() > 0 {
		return out
	}
	sigma := fit.Sigma
	if sigma == 0 {
		sigma = 1
	}
	bm := r.ByModel()
	M, v, c := make([]float64, rk*rk), make([]float64, rk), make([]float64, rk)
	rj := make([]float64, rk)
	for i := 0; i < N; i++ {
		row := bm.Row(i)
		if len(row) == 0 {
			continue
		}
		clear(M)
		clear(v)
		var W, right, answers, infNum, infDen, outSum float64
		for _, cell := range row {
			j := int(r.Item[cell])
			p, dp := cellP(fit, i, j, sigma)
			k, n := r.SuccessesAt(int(cell)), float64(r.TrialsAt(int(cell)))
			right, answers = right+k, answers+n
			pq := p * (1 - p)
			w := math.Log(p) - math.Log1p(-p)
			W += (k - n*p) * w
			g := dp / pq // r_j = g·a_j/σ
			for d := 0; d < rk; d++ {
				rj[d] = g * fit.A[j*rk+d] / sigma
			}
			for d1 := 0; d1 < rk; d1++ {
				v[d1] += n * pq * rj[d1] * w
				for d2 := 0; d2 < rk; d2++ {
					M[d1*rk+d2] += n * pq * rj[d1] * rj[d2]
				}
			}
			res := k - n*p
			infNum += res * res
			infDen += n * pq
			outSum += res * res / (n * pq)
		}
		if opt.ThetaSD == 0 && (right == 0 || right == answers) {
			continue // no finite maximum-likelihood θ
		}
		out[i].Infit, out[i].Outfit = infNum/infDen, outSum/float64(len(row))
		if copy(c, v); !backend.CholSolve(M, c, rk) {
			continue
		}
		var V, V0 float64 // V0: the variance before the correction, the scale of V's rounding
		for _, cell := range row {
			j := int(r.Item[cell])
			p, dp := cellP(fit, i, j, sigma)
			n := float64(r.TrialsAt(int(cell)))
			pq := p * (1 - p)
			wt := math.Log(p) - math.Log1p(-p)
			g := dp / pq
			V0 += n * pq * wt * wt
			for d := 0; d < rk; d++ {
				wt -= c[d] * g * fit.A[j*rk+d] / sigma
			}
			V += n * pq * wt * wt
		}
		num := W
		if opt.ThetaSD > 0 {
			for d := 0; d < rk; d++ {
				num -= c[d] * fit.Theta[i*rk+d] / (opt.ThetaSD * opt.ThetaSD)
			}
		}
		// With no more answered items than dimensions the correction takes
		// every degree of freedom: w̃ is 0 but for rounding, and lz* is
		// undefined.
		if len(row) <= rk || !(V > 1e-9*V0) {
			continue
		}
		if z := num / math.Sqrt(V); !math.IsNaN(z) && !math.IsInf(z, 0) {
			out[i].LZStar = z
		}
	}
	return out
}

// cellP is P of model i on item j and its derivative in the logit's
// direction, P' = (1 − c)·s(1 − s)/σ per unit of a (s = sigmoid(x/σ)), so
// that ∂P/∂θ = P'·a_j.
func cellP(fit *model.IRT, i, j int, sigma float64) (p, dp float64) {
	s := model.Sigmoid(fit.Logit(i, j) / sigma)
	cj := 0.0
	if fit.C != nil {
		cj = fit.C[j]
	}
	p = cj + (1-cj)*s
	// Keep P off 0 and 1, where the weights log(P/(1 − P)) are infinite.
	p = math.Min(math.Max(p, 1e-12), 1-1e-12)
	return p, (1 - cj) * s * (1 - s)
}
