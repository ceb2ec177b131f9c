package irt

import (
	"context"
	"fmt"
	"math"

	"github.com/jeirt/jeirt/model"
)

// MML2PL fits the rank-1 2PL, P = sigmoid(a_j θ + b_j), by marginal maximum
// likelihood with θ ~ N(0, 1) integrated out on a fixed grid (the EM
// algorithm of Bock and Aitkin, Psychometrika 46, 1981), the way R's mirt
// does by default (61 equally spaced points on [−6, 6]). It is the estimator
// for data with many respondents and few items (LSAT-like), where joint
// maximum likelihood (cBMM) is inconsistent and diverges for perfect scores.
// Abilities are EAP estimates; the gauge is the prior's (θ ~ N(0,1)), and a is
// not constrained. Cost per iteration: |Ω| x Points.
type MML2PL struct {
	Points  int     // quadrature points; 0 means 61
	Limit   float64 // grid on [−Limit, Limit]; 0 means 6
	Tol     float64 // stop when no parameter moves more than Tol; 0 means 1e-7
	MaxIter int     // EM iterations; 0 means 5000
	// GradTol: converged also needs the marginal log-likelihood's gradient
	// in each item's (a, d), per answer, at most GradTol (items answered
	// only right or only wrong left out); 0 means 1e-3.
	GradTol float64
}

// Fit returns a, b (as model.IRT.A, B), EAP θ, the marginal negative
// log-likelihood history and whether EM converged.
func (c MML2PL) Fit(ctx context.Context, r *model.Responses) (*model.IRT, error) {
	if c.Points == 0 {
		c.Points = 61
	}
	if c.Limit == 0 {
		c.Limit = 6
	}
	if c.Tol == 0 {
		c.Tol = 1e-7
	}
	if c.MaxIter == 0 {
		c.MaxIter = 5000
	}
	if c.GradTol == 0 {
		c.GradTol = 1e-3
	}
	if r.Len() == 0 || c.Points < 2 {
		return nil, fmt.Errorf("mml: no observed cells")
	}
	Q, N, J := c.Points, r.NumModels(), r.NumItems()
	grid, logPrior := make([]float64, Q), make([]float64, Q)
	norm := 0.0
	for q := range grid {
		grid[q] = -c.Limit + 2*c.Limit*float64(q)/float64(Q-1)
		norm += math.Exp(-grid[q] * grid[q] / 2)
	}
	for q := range grid {
		logPrior[q] = -grid[q]*grid[q]/2 - math.Log(norm)
	}
	a, b := make([]float64, J), make([]float64, J)
	for j, p := range r.ItemAccuracy() {
		a[j] = 1
		if !math.IsNaN(p) {
			p = math.Min(math.Max(p, 0.01), 0.99)
			b[j] = math.Log(p / (1 - p))
		}
	}
	answered, right := make([]float64, J), make([]float64, J)
	for cell, y := range r.Label {
		answered[r.Item[cell]]++
		right[r.Item[cell]] += float64(y)
	}
	lastGrad := math.NaN()
	byModel := r.ByModel()
	n, k := make([]float64, J*Q), make([]float64, J*Q) // expected answers and corrects per item and point
	logL := make([]float64, Q)
	theta := make([]float64, N)
	var hist []float64
	converged := false
	iter := 0
	for iter = 1; iter <= c.MaxIter; iter++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// E step: posterior over the grid for each respondent.
		clear(n)
		clear(k)
		nll := 0.0
		for i := 0; i < N; i++ {
			copy(logL, logPrior)
			row := byModel.Row(i)
			for _, cell := range row {
				j := r.Item[cell]
				y := float64(r.Label[cell])*2 - 1
				for q, th := range grid {
					logL[q] -= model.Softplus(-(y * (a[j]*th + b[j])))
				}
			}
			mx := math.Inf(-1)
			for _, l := range logL {
				mx = math.Max(mx, l)
			}
			s, eap := 0.0, 0.0
			for q, l := range logL {
				logL[q] = math.Exp(l - mx)
				s += logL[q]
				eap += logL[q] * grid[q]
			}
			nll -= mx + math.Log(s)
			theta[i] = eap / s
			for _, cell := range row {
				j := int(r.Item[cell])
				for q := range grid {
					w := logL[q] / s
					n[j*Q+q] += w
					k[j*Q+q] += w * float64(r.Label[cell])
				}
			}
		}
		hist = append(hist, nll)
		if math.IsNaN(nll) || math.IsInf(nll, 0) || nll > hist[0]+0.01*math.Abs(hist[0]) {
			return nil, model.FieldErrorf("Method", "mml: diverged at EM iteration %d: the marginal loss is %.4g, up from %.4g at the start (items answered all right or all wrong by groups of models separate perfectly, and their discrimination runs off); use {Method} cbmm, whose prior keeps a finite", iter, nll, hist[0])
		}
		// M step: per item, Newton's method on the expected complete-data
		// log-likelihood Σ_q k log p + (n − k) log(1 − p).
		// The first Newton gradient is the marginal log-likelihood's
		// (Fisher's identity), the first-order certificate; each Newton
		// step is halved until Q does not fall, so EM stays monotone.
		move, grad := 0.0, 0.0
		for j := 0; j < J; j++ {
			aj, bj := a[j], b[j]
			qj := func(a, b float64) float64 {
				s := 0.0
				for q, th := range grid {
					if nq := n[j*Q+q]; nq > 0 {
						x := a*th + b
						s -= k[j*Q+q]*model.Softplus(-x) + (nq-k[j*Q+q])*model.Softplus(x)
					}
				}
				return s
			}
			for step := 0; step < 50; step++ {
				var ga, gb, haa, hab, hbb float64
				for q, th := range grid {
					nq := n[j*Q+q]
					if nq == 0 {
						continue
					}
					p := model.Sigmoid(aj*th + bj)
					res := k[j*Q+q] - nq*p
					w := nq * p * (1 - p)
					ga += res * th
					gb += res
					haa += w * th * th
					hab += w * th
					hbb += w
				}
				det := haa*hbb - hab*hab
				if !(det > 0) {
					break
				}
				if step == 0 && answered[j] > 0 && right[j] > 0 && right[j] < answered[j] {
					grad = math.Max(grad, math.Max(math.Abs(ga), math.Abs(gb))/answered[j])
				}
				da := (hbb*ga - hab*gb) / det
				db := (haa*gb - hab*ga) / det
				for q0, t := qj(aj, bj), 0; t < 40 && qj(aj+da, bj+db) < q0; t++ {
					da, db = da/2, db/2
				}
				aj += da
				bj += db
				if math.Abs(da)+math.Abs(db) < 1e-12 {
					break
				}
			}
			if math.IsNaN(aj) || math.IsInf(aj, 0) || math.IsNaN(bj) || math.IsInf(bj, 0) {
				return nil, model.FieldErrorf("Method", "mml: diverged at EM iteration %d: item %q's parameters became non-finite (a %v, b %v); use {Method} cbmm", iter, model.Clip(r.Items[j]), aj, bj)
			}
			move = math.Max(move, math.Max(math.Abs(aj-a[j]), math.Abs(bj-b[j])))
			a[j], b[j] = aj, bj
		}
		lastGrad = grad
		if move < c.Tol {
			converged = grad <= c.GradTol
			break
		}
	}
	m := &model.IRT{Models: r.Models, Items: r.Items, Rank: 1, Sigma: 1, Theta: theta, A: a, B: b,
		LossHistory: hist, Iterations: min(iter, c.MaxIter), Converged: converged}
	switch {
	case !converged && iter <= c.MaxIter:
		m.Note = fmt.Sprintf("EM stopped moving (less than %g) but the marginal log-likelihood's gradient is %.3g per answer, above %g", c.Tol, lastGrad, c.GradTol)
	case !converged:
		m.Note = fmt.Sprintf("EM iteration limit %d reached while a parameter still moved more than %g per iteration", c.MaxIter, c.Tol)
	}
	return m, nil
}
