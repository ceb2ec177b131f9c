// Package irtmml fits the 2PL by marginal maximum likelihood (EM over a
// quadrature grid, mirt's estimator), with the item priors of model.Prior
// as maximum a posteriori in the M step: irtmml.MML2PL, registered as the
// irt.Fitter of irt.MethodMML (imported by train/irtguard).
package irtmml

import (
	"context"
	"fmt"
	"math"
	"runtime"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/limits"
	"github.com/jeirt/jeirt/train/irt"
)

// MML2PL fits the rank-1 2PL, P = sigmoid(a_j θ + b_j), by marginal maximum
// likelihood with θ ~ N(0, 1) integrated out on a fixed grid (the EM
// algorithm of Bock and Aitkin, Psychometrika 46, 1981), the way R's mirt
// does by default (61 equally spaced points on [−6, 6]). It is the estimator
// for data with many respondents and few items (LSAT-like), where joint
// maximum likelihood (cBMM) is inconsistent and diverges for perfect scores.
// Abilities are EAP estimates; the gauge is the prior's (θ ~ N(0,1)), and a is
// not constrained. Cost per iteration: |Ω| x Points additions (the E step
// and the expected counts) plus Items x Points log-sigmoids per Newton step
// of the M step, on Threads goroutines; the result does not depend on their
// number.
//
// With Prior on, the item estimates are maximum a posteriori (as mirt's and
// py-irt's item priors make them): a_j ~ N(AMean, A²) and the intercept
// b_j = d_j ~ N(DMean, D²) (σ is 1 here; a term with a zero sd is left
// out; a is not truncated, MML's slopes being unconstrained). EM then
// maximises the marginal likelihood times the item prior, and every item has
// a finite estimate, perfectly separated and unanimous items included.
// Prior.Theta is ignored: θ's prior is N(0, 1) by construction (the grid's
// weights).
type MML2PL struct {
	Points  int     // quadrature points; 0 means 61
	Limit   float64 // grid on [−Limit, Limit]; 0 means 6
	Tol     float64 // stop when no parameter moves more than Tol; 0 means 1e-7
	MaxIter int     // EM iterations; 0 means 5000
	// GradTol: converged also needs the marginal log-likelihood's gradient
	// (with Prior on, the log posterior's) in each item's (a, d), per answer,
	// at most GradTol; items answered only right or only wrong are left out,
	// unless Prior.D > 0 makes their optimum finite. 0 means 1e-3.
	GradTol float64
	// Prior: the item parameters' prior (its A, AMean, D, DMean; Theta is
	// ignored); the zero Prior is marginal maximum likelihood.
	Prior model.Prior
	// PlainEM: with Prior on, plain EM instead of EM accelerated by SQUAREM
	// (Varadhan and Roland, Scand. J. Stat. 35, 2008), whose extrapolations
	// are kept only where they lower the loss, so the loss history still
	// never rises. Without a prior EM is always plain (it is the historic
	// fit, bit for bit, and extrapolation would only speed the run-off
	// slopes of perfectly separated items).
	PlainEM bool
	Threads int // goroutines; 0 means runtime.GOMAXPROCS(0). The fit does not depend on it.
}

// Fit returns a, b (as model.IRT.A, B), EAP θ, the loss history (the
// marginal negative log-likelihood, plus the item prior's penalties
// Σ (a−AMean)²/(2A²) + (b−DMean)²/(2D²) with Prior on: the items' negative
// log posterior; one entry per E step whose point EM kept) and whether EM
// converged. Iterations counts M steps.
func (c MML2PL) Fit(ctx context.Context, r *model.Responses) (*model.IRT, error) {
	m, _, err := c.FitCertified(ctx, r)
	return m, err
}

// FitCertified is Fit with the first-order certificate of the returned
// items (Certificate): converged is true only when EM stopped moving and
// the certificate is at most GradTol there.
func (c MML2PL) FitCertified(ctx context.Context, r *model.Responses) (*model.IRT, Certificate, error) {
	m, f, err := c.fit(ctx, r)
	if err != nil {
		return nil, Certificate{}, err
	}
	cert, err := f.certify(c.GradTol)
	if err != nil {
		return nil, Certificate{}, err
	}
	if m.Converged && !(cert.MaxGradient <= cert.GradTol) {
		m.Converged = false
		m.Note = fmt.Sprintf("EM stopped moving (less than %g per iteration), but at the items it returns the %s's gradient is %.3g per answer (%s), above %g",
			f.tol, f.what(), cert.MaxGradient, cert.Where, cert.GradTol)
	}
	return m, cert, nil
}

// fit is Fit without the certificate, and the state it ended in.
func (c MML2PL) fit(ctx context.Context, r *model.Responses) (*model.IRT, *mmlFit, error) {
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
	if c.Threads <= 0 {
		c.Threads = runtime.GOMAXPROCS(0)
	}
	if r.Len() == 0 || c.Points < 2 {
		return nil, nil, fmt.Errorf("mml: no observed cells")
	}
	f := newMMLFit(ctx, c, r)
	if err := f.fillTables(); err != nil {
		return nil, nil, err
	}
	N, J, Q := f.N, f.J, f.Q
	post, theta := make([]float64, N*Q), make([]float64, N)
	var hist []float64
	record := func(loss float64) error {
		hist = append(hist, loss)
		if math.IsNaN(loss) || math.IsInf(loss, 0) || loss > hist[0]+0.01*math.Abs(hist[0]) {
			return model.FieldErrorf("Method", "mml: diverged at EM iteration %d: the marginal loss is %.4g, up from %.4g at the start (items answered all right or all wrong by groups of models separate perfectly, and their discrimination runs off); use {Method} cbmm, whose prior keeps a finite, or a prior on the items", len(hist), loss, hist[0])
		}
		return nil
	}
	estep := func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		loss, err := f.estep(post, theta)
		if err != nil {
			return err
		}
		return record(loss)
	}
	iter, converged, stopped, lastGrad := 0, false, false, math.NaN()
	// mstep applies the EM map once, from the E step in post; done: stop.
	mstep := func() (done bool, err error) {
		iter++
		move, grad, bad, err := f.mstep(post)
		if err != nil {
			return true, err
		}
		if bad >= 0 {
			return true, model.FieldErrorf("Method", "mml: diverged at EM iteration %d: item %q's parameters became non-finite (a %v, b %v); use {Method} cbmm, or a prior on the items", iter, limits.Clip(r.Items[bad]), f.a[bad], f.b[bad])
		}
		lastGrad = grad
		if move < c.Tol {
			converged, stopped = grad <= c.GradTol, true
			return true, nil
		}
		return iter >= c.MaxIter, nil
	}
	if err := estep(); err != nil {
		return nil, nil, err
	}
	if !f.pr.on() || c.PlainEM {
		for {
			if done, err := mstep(); err != nil {
				return nil, nil, err
			} else if done {
				break
			}
			if err := estep(); err != nil {
				return nil, nil, err
			}
		}
	} else {
		// SQUAREM (its SqS3 step length, with R's SQUAREM's step bound):
		// two EM steps x0 → x1 → x2, then the extrapolation
		// x' = x0 − 2α(x1 − x0) + α²(x2 − 2x1 + x0), α ≤ −1, kept when its
		// loss is at most x2's, else α halved towards −1 (x2) a few times.
		// The next EM step from the point kept stabilises it.
		x0, x1, x2 := make([]float64, 2*J), make([]float64, 2*J), make([]float64, 2*J)
		save := func(x []float64) { copy(x[:J], f.a); copy(x[J:], f.b) }
		postX, thetaX := make([]float64, N*Q), make([]float64, N)
		stepMax := 1.0
	squarem:
		for {
			save(x0)
			for _, x := range [][]float64{x1, x2} {
				if done, err := mstep(); err != nil {
					return nil, nil, err
				} else if done {
					break squarem
				}
				if err := estep(); err != nil {
					return nil, nil, err
				}
				save(x)
			}
			rr, vv := 0.0, 0.0
			for p := range x0 {
				d1, d2 := x1[p]-x0[p], x2[p]-2*x1[p]+x0[p]
				rr += d1 * d1
				vv += d2 * d2
			}
			alpha := math.Max(-math.Sqrt(rr/vv), -stepMax)
			if alpha == -stepMax {
				stepMax *= 4
			}
			if !(alpha < -1) { // no step longer than EM's (or NaN): keep x2
				continue
			}
			loss2 := hist[len(hist)-1]
			for try := 0; ; try++ {
				for p := range x0 {
					v := x0[p] - 2*alpha*(x1[p]-x0[p]) + alpha*alpha*(x2[p]-2*x1[p]+x0[p])
					if p < J {
						f.a[p] = v
					} else {
						f.b[p-J] = v
					}
				}
				if err := f.fillTables(); err != nil {
					return nil, nil, err
				}
				if err := ctx.Err(); err != nil {
					return nil, nil, err
				}
				loss, err := f.estep(postX, thetaX)
				if err != nil {
					return nil, nil, err
				}
				if loss <= loss2 { // false for NaN
					post, postX, theta, thetaX = postX, post, thetaX, theta
					if err := record(loss); err != nil {
						return nil, nil, err
					}
					break
				}
				if alpha = (alpha - 1) / 2; try == 3 || alpha > -1.01 {
					// Back to x2, whose E step is in post; the next M
					// step refreshes the tables.
					copy(f.a, x2[:J])
					copy(f.b, x2[J:])
					stepMax = math.Max(1, stepMax/4)
					break
				}
			}
		}
	}
	m := &model.IRT{Models: r.Models, Items: r.Items, Rank: 1, Sigma: 1, Theta: theta, A: f.a, B: f.b,
		LossHistory: hist, Iterations: iter, Converged: converged}
	what := f.what()
	switch {
	case !converged && stopped:
		m.Note = fmt.Sprintf("EM stopped moving (less than %g) but the %s's gradient is %.3g per answer, above %g", c.Tol, what, lastGrad, c.GradTol)
	case !converged:
		m.Note = fmt.Sprintf("EM iteration limit %d reached while a parameter still moved more than %g per iteration", c.MaxIter, c.Tol)
	}
	f.tol = c.Tol
	return m, f, nil
}

// mmlFit is the state of an MML2PL fit.
type mmlFit struct {
	ctx                   context.Context
	r                     *model.Responses
	Q, N, J               int
	threads               int
	itemChunk, modelChunk int
	grid, logPrior        []float64
	pr                    mmlPrior
	autoA, autoD          bool      // the prior's means are fitted (model.Prior.AAuto, DAuto)
	a, b                  []float64 // the item parameters
	answered, right       []float64 // per item
	byModel               *model.Index
	itemStart, itemAns    []int32
	nlp1, nlp0            []float64 // per item and point
	n, k                  []float64 // per item and point
	nllPart               []float64 // per model
	itemMove, itemGrad    []float64
	itemBad               []bool
	tol                   float64 // MML2PL.Tol, for the certificate's note
}

func newMMLFit(ctx context.Context, c MML2PL, r *model.Responses) *mmlFit {
	Q, N, J := c.Points, r.NumModels(), r.NumItems()
	f := &mmlFit{ctx: ctx, r: r, Q: Q, N: N, J: J, threads: c.Threads,
		itemChunk: max(1, J/(8*c.Threads)), modelChunk: max(1, N/(8*c.Threads))}
	f.grid, f.logPrior = make([]float64, Q), make([]float64, Q)
	norm := 0.0
	for q := range f.grid {
		f.grid[q] = -c.Limit + 2*c.Limit*float64(q)/float64(Q-1)
		norm += math.Exp(-f.grid[q] * f.grid[q] / 2)
	}
	for q := range f.grid {
		f.logPrior[q] = -f.grid[q]*f.grid[q]/2 - math.Log(norm)
	}
	f.a, f.b = make([]float64, J), make([]float64, J)
	for j, p := range r.ItemAccuracy() {
		f.a[j] = 1
		if !math.IsNaN(p) {
			p = math.Min(math.Max(p, 0.01), 0.99)
			f.b[j] = math.Log(p / (1 - p))
		}
	}
	f.answered, f.right = make([]float64, J), make([]float64, J)
	for cell, y := range r.Label {
		f.answered[r.Item[cell]]++
		f.right[r.Item[cell]] += float64(y)
	}
	// The item prior's precisions, 0 where it has no term.
	f.pr = mmlPrior{aMean: c.Prior.AMean, dMean: c.Prior.DMean}
	if c.Prior.A > 0 {
		f.pr.ia = 1 / (c.Prior.A * c.Prior.A)
	}
	if c.Prior.D > 0 {
		f.pr.id = 1 / (c.Prior.D * c.Prior.D)
	}
	f.autoA, f.autoD = c.Prior.AAuto && c.Prior.A > 0, c.Prior.DAuto && c.Prior.D > 0
	// Each model's cells, and each item's answers in model order (the order
	// the historic E step summed them in), as model<<1 | label.
	f.byModel = r.ByModel()
	f.itemStart = make([]int32, J+1)
	for _, j := range r.Item {
		f.itemStart[j+1]++
	}
	for j := 0; j < J; j++ {
		f.itemStart[j+1] += f.itemStart[j]
	}
	f.itemAns = make([]int32, r.Len())
	next := append([]int32(nil), f.itemStart[:J]...)
	for i := 0; i < N; i++ {
		for _, cell := range f.byModel.Row(i) {
			j := r.Item[cell]
			f.itemAns[next[j]] = int32(i)<<1 | int32(r.Label[cell]&1)
			next[j]++
		}
	}
	f.nlp1, f.nlp0 = make([]float64, J*Q), make([]float64, J*Q)
	f.n, f.k = make([]float64, J*Q), make([]float64, J*Q)
	f.nllPart = make([]float64, N)
	f.itemMove, f.itemGrad, f.itemBad = make([]float64, J), make([]float64, J), make([]bool, J)
	return f
}

// fillTable sets item j's rows of nlp1 and nlp0: −log P(y = 1 | θ_q) =
// softplus(−x) and −log P(y = 0 | θ_q) = softplus(x), x = a_j θ_q + b_j, the
// E step's terms (exactly the historic per-cell model.Softplus values).
func (f *mmlFit) fillTable(j int) {
	aj, bj := f.a[j], f.b[j]
	t1, t0 := f.nlp1[j*f.Q:(j+1)*f.Q], f.nlp0[j*f.Q:(j+1)*f.Q]
	for q, th := range f.grid {
		t0[q], t1[q] = softplusPair(aj*th + bj)
	}
}

// forChunks runs fn over [0, n) in chunks of size on the fit's goroutines.
func (f *mmlFit) forChunks(n, size int, fn func(lo, hi int)) error {
	return irt.Parallel(f.ctx, (n+size-1)/size, f.threads, func(t int) { fn(t*size, min(n, (t+1)*size)) })
}

// fillTables refreshes every item's table.
func (f *mmlFit) fillTables() error {
	return f.forChunks(f.J, f.itemChunk, func(lo, hi int) {
		for j := lo; j < hi; j++ {
			f.fillTable(j)
		}
	})
}

// estep sets each model's posterior over the grid (post, normalised) and
// EAP ability (theta) at the current items, from the tables, and returns the
// loss there: the marginal negative log-likelihood plus the prior's
// penalties.
func (f *mmlFit) estep(post, theta []float64) (float64, error) {
	Q, grid, r := f.Q, f.grid, f.r
	if err := f.forChunks(f.N, f.modelChunk, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			w := post[i*Q : (i+1)*Q]
			copy(w, f.logPrior)
			for _, cell := range f.byModel.Row(i) {
				j := int(r.Item[cell])
				tab := f.nlp0[j*Q : (j+1)*Q]
				if r.Label[cell] == 1 {
					tab = f.nlp1[j*Q : (j+1)*Q]
				}
				tab = tab[:len(w)]
				for q := range w {
					w[q] -= tab[q]
				}
			}
			mx := math.Inf(-1)
			for _, l := range w {
				mx = math.Max(mx, l)
			}
			s, eap := 0.0, 0.0
			for q, l := range w {
				w[q] = math.Exp(l - mx)
				s += w[q]
				eap += w[q] * grid[q]
			}
			f.nllPart[i] = mx + math.Log(s)
			theta[i] = eap / s
			for q := range w {
				w[q] /= s
			}
		}
	}); err != nil {
		return 0, err
	}
	loss := 0.0
	for _, v := range f.nllPart {
		loss -= v
	}
	if f.pr.on() {
		for j := range f.a {
			loss += f.pr.penalty(f.a[j], f.b[j])
		}
	}
	return loss, nil
}

// mstep is EM's M step from the posteriors in post: per item, the expected
// answers n and corrects k at each point, then Newton's method on the
// expected complete-data log-likelihood Σ_q k log p + (n − k) log(1 − p)
// plus the item prior's log density. The first Newton gradient is the
// marginal log-likelihood's (log posterior's) (Fisher's identity), the
// first-order certificate; each Newton step is halved until the objective
// does not fall, so EM stays monotone. It returns the largest parameter
// move, the largest certificate gradient per answer (items answered only
// right or only wrong left out, unless the prior on d makes their optimum
// finite) and the first item whose parameters became non-finite (−1: none).
func (f *mmlFit) mstep(post []float64) (move, grad float64, bad int, err error) {
	Q := f.Q
	legacy := !f.pr.on()
	if err := f.forChunks(f.J, f.itemChunk, func(lo, hi int) {
		ps := make([]float64, Q)
		for j := lo; j < hi; j++ {
			nj, kj := f.expected(j, post)
			certify := f.certifies(j)
			aj, bj, g, tabled := mmlNewton(f.grid, nj, kj, f.a[j], f.b[j], f.pr, legacy, f.nlp0[j*Q:(j+1)*Q], f.nlp1[j*Q:(j+1)*Q], ps)
			f.itemGrad[j] = -1 // left out of the certificate
			if certify && (g >= 0 || math.IsNaN(g)) {
				f.itemGrad[j] = g / f.answered[j]
			}
			f.itemBad[j] = math.IsNaN(aj) || math.IsInf(aj, 0) || math.IsNaN(bj) || math.IsInf(bj, 0)
			f.itemMove[j] = math.Max(math.Abs(aj-f.a[j]), math.Abs(bj-f.b[j]))
			f.a[j], f.b[j] = aj, bj
			if !tabled && !f.itemBad[j] {
				f.fillTable(j)
			}
		}
	}); err != nil {
		return 0, 0, -1, err
	}
	for j := 0; j < f.J; j++ {
		if f.itemBad[j] {
			return move, grad, j, nil
		}
		move = math.Max(move, f.itemMove[j])
		if g := f.itemGrad[j]; g >= 0 || math.IsNaN(g) {
			grad = math.Max(grad, g)
		}
	}
	// The prior's fitted means (model.Prior.AAuto, DAuto), a block of
	// their own after the items: each the mean of its parameters.
	if f.autoA {
		f.pr.aMean = mean(f.a)
	}
	if f.autoD {
		f.pr.dMean = mean(f.b)
	}
	return move, grad, -1, nil
}

// mean is the mean of v.
func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// mmlPrior is MML2PL's item prior: a ~ N(aMean, 1/ia), b ~ N(dMean, 1/id),
// a zero precision leaving its term out.
type mmlPrior struct {
	ia, aMean, id, dMean float64
}

func (p mmlPrior) on() bool { return p.ia > 0 || p.id > 0 }

// penalty is −log of the prior density of (a, b), up to a constant.
func (p mmlPrior) penalty(a, b float64) float64 {
	s := 0.0
	if p.ia > 0 {
		s += (a - p.aMean) * (a - p.aMean) * p.ia / 2
	}
	if p.id > 0 {
		s += (b - p.dMean) * (b - p.dMean) * p.id / 2
	}
	return s
}

// softplusPair returns model.Softplus(x) and model.Softplus(−x), bit for bit,
// from one exponential and one logarithm.
func softplusPair(x float64) (sp, sn float64) {
	l := math.Log1p(math.Exp(-math.Abs(x)))
	switch {
	case x > 0:
		return x + l, l
	case x < 0:
		return l, -x + l
	}
	return l, l
}

// mmlObjective is one item's M-step objective at (a, b), the expected
// complete-data log-likelihood Σ_q k_q log p_q + (n_q − k_q) log(1 − p_q) plus
// the prior's log density, with its gradient (ga, gb) and the negated
// Hessian (haa, hab, hbb). Each term is computed as the historic code did
// with model.Softplus and model.Sigmoid, bit for bit, from one exponential
// and one logarithm. t0, t1 and ps receive softplus(x), softplus(−x) (the
// item's E-step table at (a, b)) and p = sigmoid(x) at every point.
func mmlObjective(grid, n, k []float64, a, b float64, pr mmlPrior, t0, t1, ps []float64) (f, ga, gb, haa, hab, hbb float64) {
	n, k, t0, t1, ps = n[:len(grid)], k[:len(grid)], t0[:len(grid)], t1[:len(grid)], ps[:len(grid)]
	for q, th := range grid {
		x := a*th + b
		e := math.Exp(-math.Abs(x))
		l := math.Log1p(e)
		sp, sn := l, l
		switch {
		case x > 0:
			sp = x + l
		case x < 0:
			sn = -x + l
		}
		var p float64
		if x >= 0 {
			p = 1 / (1 + e)
		} else {
			p = e / (1 + e)
		}
		t0[q], t1[q], ps[q] = sp, sn, p
		nq := n[q]
		if nq == 0 {
			continue
		}
		kq := k[q]
		f -= kq*sn + (nq-kq)*sp
		res := kq - nq*p
		w := nq * p * (1 - p)
		ga += res * th
		gb += res
		haa += w * th * th
		hab += w * th
		hbb += w
	}
	if pr.ia > 0 {
		d := a - pr.aMean
		f -= d * d * pr.ia / 2
		ga -= d * pr.ia
		haa += pr.ia
	}
	if pr.id > 0 {
		d := b - pr.dMean
		f -= d * d * pr.id / 2
		gb -= d * pr.id
		hbb += pr.id
	}
	return
}

// mmlNewton maximises one item's M-step objective from (a, b) by Newton's
// method, each step halved until the objective does not fall, and stops
// once a step is below 1e-12 (or, but with legacy, once its predicted gain
// is below what the objective resolves: that step is then taken without
// evaluating it). It returns the new (a, b), the objective's gradient at the
// start, max(|ga|, |gb|) (−1 when the Hessian there is not definite), and
// whether t0, t1 hold the item's table at the new (a, b). ps is scratch.
// legacy replays the historic search bit for bit, evaluating even steps
// whose gain the objective cannot resolve (their acceptance then decided by
// rounding, at the cost of many halvings).
func mmlNewton(grid, n, k []float64, a, b float64, pr mmlPrior, legacy bool, t0, t1, ps []float64) (float64, float64, float64, bool) {
	grad := -1.0
	f, ga, gb, haa, hab, hbb := mmlObjective(grid, n, k, a, b, pr, t0, t1, ps)
	ta, tb := a, b // where t0, t1 and ps were last written
	fresh := true  // f and its derivatives are at (a, b)
	for step := 0; step < 50; step++ {
		if !fresh {
			f, ga, gb, haa, hab, hbb = mmlObjective(grid, n, k, a, b, pr, t0, t1, ps)
			ta, tb = a, b
		}
		det := haa*hbb - hab*hab
		if !(det > 0) {
			break
		}
		if step == 0 {
			grad = math.Max(math.Abs(ga), math.Abs(gb))
		}
		da := (hbb*ga - hab*gb) / det
		db := (haa*gb - hab*ga) / det
		if !legacy && (ga*da+gb*db)/2 <= 1e-12*(1+math.Abs(f)) {
			// The step's predicted gain is below what f resolves (its
			// rounding is ~1e-14 |f|): evaluating it would only let rounding
			// halve it. Take it (the quadratic model is exact there to far
			// below 1e-12) and stop; the table follows by its second-order
			// Taylor expansion, exact to rounding (the step is ≲ 1e-5).
			if math.Abs(da)+math.Abs(db) >= 1e-12 {
				t0, t1, ps = t0[:len(grid)], t1[:len(grid)], ps[:len(grid)]
				for q, th := range grid {
					dx, p := da*th+db, ps[q]
					c := p * (1 - p) * dx * dx / 2
					t0[q] += p*dx + c
					t1[q] += c - (1-p)*dx
				}
				a += da
				b += db
				ta, tb = a, b
			}
			break
		}
		fresh = false
		for t := 0; t < 40; t++ {
			f1, ga1, gb1, haa1, hab1, hbb1 := mmlObjective(grid, n, k, a+da, b+db, pr, t0, t1, ps)
			ta, tb = a+da, b+db
			if !(f1 < f) {
				f, ga, gb, haa, hab, hbb, fresh = f1, ga1, gb1, haa1, hab1, hbb1, true
				break
			}
			da, db = da/2, db/2
		}
		a += da
		b += db
		if math.Abs(da)+math.Abs(db) < 1e-12 {
			break
		}
	}
	return a, b, grad, ta == a && tb == b
}
