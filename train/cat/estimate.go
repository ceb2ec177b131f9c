package cat

import (
	"fmt"
	"math"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/backend"
)

// Estimators of θ.
const (
	// MAP is the posterior mode under the prior, by damped Newton; its
	// standard errors are the square roots of the diagonal of the inverse
	// negative Hessian of the log posterior at the mode (the Laplace
	// posterior; for the logistic model the observed and expected
	// information agree).
	MAP = "map"
	// EAP (rank 1) is the posterior mean on 241 points of the prior mean
	// ± 6 prior sd (Bock and Mislevy 1982), its standard error the
	// posterior sd.
	EAP = "eap"
)

// eapPoints is the size of EAP's grid.
const eapPoints = 241

// Estimate is θ and its standard errors from the answers y[k] to the items
// items[k] of bank under prior, by estimator (MAP when "").
func Estimate(b *Bank, prior Prior, estimator string, items []int, y []uint8) (theta, se []float64, err error) {
	theta, cov, err := EstimateCov(b, prior, estimator, items, y)
	if err != nil {
		return nil, nil, err
	}
	return theta, seOf(cov, b.Rank), nil
}

// EstimateCov is Estimate with θ's posterior covariance (Rank x Rank,
// row-major: at the mode, the inverse of the negative Hessian, for MAP) in
// place of its standard errors.
func EstimateCov(b *Bank, prior Prior, estimator string, items []int, y []uint8) (theta, cov []float64, err error) {
	if err := b.Check(); err != nil {
		return nil, nil, err
	}
	if err := prior.check(b.Rank); err != nil {
		return nil, nil, err
	}
	if len(items) != len(y) {
		return nil, nil, fmt.Errorf("cat: %d items and %d answers", len(items), len(y))
	}
	for k, j := range items {
		if j < 0 || j >= b.NumItems() || y[k] > 1 {
			return nil, nil, fmt.Errorf("cat: answer %d: item %d (of %d), answer %d", k, j, b.NumItems(), y[k])
		}
	}
	est, err := newEstimator(b, prior, estimator)
	if err != nil {
		return nil, nil, err
	}
	for k, j := range items {
		est.add(j, y[k])
	}
	theta, cov = est.estimate()
	return theta, cov, nil
}

// estimator keeps the answers so far and gives θ and its posterior
// covariance after each one.
type estimator interface {
	add(item int, y uint8)
	estimate() (theta, cov []float64)
	// precision is the posterior precision at θ (for the D-optimal rule).
	precision(theta []float64) []float64
}

func newEstimator(b *Bank, prior Prior, name string) (estimator, error) {
	r := b.Rank
	lam, ok := invertSPD(prior.Cov, r)
	if !ok {
		return nil, fmt.Errorf("cat: the prior covariance is not positive definite")
	}
	switch name {
	case "", MAP:
		return &mapEst{b: b, mu: prior.Mean, lam: lam, theta: append([]float64(nil), prior.Mean...)}, nil
	case EAP:
		if r != 1 {
			return nil, model.FieldErrorf("Estimator", "cat: {Estimator} eap is rank 1 only (the fit has rank %d); use map", r)
		}
		return newEAP(b, prior), nil
	}
	return nil, fmt.Errorf("cat: estimator %q: want map or eap", name)
}

func seOf(cov []float64, r int) []float64 {
	se := make([]float64, r)
	for k := range se {
		se[k] = math.Sqrt(cov[k*r+k])
	}
	return se
}

// mapEst is the posterior mode: maximise
//
//	ℓ(θ) = Σ_k log P(y_k | θ) − ½(θ − μ)ᵀΛ(θ − μ)
//
// with gradient Σ_k (y_k − p_k) α_k − Λ(θ − μ) and negative Hessian
// H = Λ + Σ_k p_k(1 − p_k) α_k α_kᵀ (α_k = a_k/σ), by Newton steps halved
// until ℓ does not fall, started from the previous mode.
type mapEst struct {
	b       *Bank
	mu, lam []float64
	items   []int
	y       []uint8
	theta   []float64
}

func (m *mapEst) add(item int, y uint8) {
	m.items = append(m.items, item)
	m.y = append(m.y, y)
}

func (m *mapEst) objective(theta []float64) float64 {
	r := m.b.Rank
	s := 0.0
	for k, j := range m.items {
		x := m.b.logit(j, theta)
		if m.y[k] == 1 {
			s -= model.Softplus(-x)
		} else {
			s -= model.Softplus(x)
		}
	}
	for k := 0; k < r; k++ {
		for l := 0; l < r; l++ {
			s -= 0.5 * (theta[k] - m.mu[k]) * m.lam[k*r+l] * (theta[l] - m.mu[l])
		}
	}
	return s
}

// gradHess returns the gradient and the negative Hessian of ℓ at theta.
func (m *mapEst) gradHess(theta []float64) (g, H []float64) {
	r := m.b.Rank
	sig := m.b.sigma()
	g, H = make([]float64, r), append([]float64(nil), m.lam...)
	for k := 0; k < r; k++ {
		for l := 0; l < r; l++ {
			g[k] -= m.lam[k*r+l] * (theta[l] - m.mu[l])
		}
	}
	for n, j := range m.items {
		p := model.Sigmoid(m.b.logit(j, theta))
		res, w := float64(m.y[n])-p, p*(1-p)
		a := m.b.A[j*r : (j+1)*r]
		for k := 0; k < r; k++ {
			g[k] += res * a[k] / sig
			for l := 0; l < r; l++ {
				H[k*r+l] += w * a[k] * a[l] / (sig * sig)
			}
		}
	}
	return g, H
}

func (m *mapEst) estimate() (theta, cov []float64) {
	r := m.b.Rank
	th := m.theta
	f := m.objective(th)
	next := make([]float64, r)
	for it := 0; it < 100; it++ {
		g, H := m.gradHess(th)
		step, ok := solveSPD(H, g, r)
		if !ok {
			break
		}
		t, moved := 1.0, false
		for ; t > 1e-10; t /= 2 {
			for k := range next {
				next[k] = th[k] + t*step[k]
			}
			if fn := m.objective(next); fn >= f-1e-12*math.Abs(f) {
				f, moved = fn, true
				break
			}
		}
		if !moved {
			break
		}
		th, next = next, th
		size := 0.0
		for k := range step {
			size = math.Max(size, math.Abs(t*step[k]))
		}
		if size < 1e-10 {
			break
		}
	}
	m.theta = append(m.theta[:0], th...)
	_, H := m.gradHess(m.theta)
	cov, _ = invertSPD(H, r)
	return append([]float64(nil), m.theta...), cov
}

func (m *mapEst) precision(theta []float64) []float64 {
	_, H := m.gradHess(theta)
	return H
}

// eapEst is the posterior on a grid: log prior plus the log likelihood of
// each answer at each node, so that an answer costs one pass over the grid.
type eapEst struct {
	b       *Bank
	nodes   []float64
	logPost []float64
}

func newEAP(b *Bank, prior Prior) *eapEst {
	mu, sd := prior.Mean[0], math.Sqrt(prior.Cov[0])
	e := &eapEst{b: b, nodes: make([]float64, eapPoints), logPost: make([]float64, eapPoints)}
	for g := range e.nodes {
		z := -6 + 12*float64(g)/(eapPoints-1)
		e.nodes[g] = mu + z*sd
		e.logPost[g] = -z * z / 2
	}
	return e
}

func (e *eapEst) add(item int, y uint8) {
	th := []float64{0}
	for g, t := range e.nodes {
		th[0] = t
		x := e.b.logit(item, th)
		if y == 1 {
			e.logPost[g] -= model.Softplus(-x)
		} else {
			e.logPost[g] -= model.Softplus(x)
		}
	}
}

func (e *eapEst) estimate() (theta, cov []float64) {
	top := math.Inf(-1)
	for _, l := range e.logPost {
		top = math.Max(top, l)
	}
	var w0, w1, w2 float64
	for g, l := range e.logPost {
		w := math.Exp(l - top)
		w0 += w
		w1 += w * e.nodes[g]
		w2 += w * e.nodes[g] * e.nodes[g]
	}
	mean := w1 / w0
	v := math.Max(w2/w0-mean*mean, 0)
	return []float64{mean}, []float64{v}
}

// precision is the inverse of the posterior variance.
func (e *eapEst) precision([]float64) []float64 {
	_, v := e.estimate()
	return []float64{1 / math.Max(v[0], 1e-300)}
}

// cholesky factors the symmetric positive definite r x r matrix M (row-major)
// as L Lᵀ, returning L (lower triangle, zeros above), or false.
func cholesky(M []float64, r int) ([]float64, bool) {
	L := append([]float64(nil), M...)
	if !backend.Cholesky(L, r, 0) {
		return nil, false
	}
	for i := 0; i < r; i++ {
		for k := i + 1; k < r; k++ {
			L[i*r+k] = 0
		}
	}
	return L, true
}

// solveSPD solves M x = v for symmetric positive definite M.
func solveSPD(M, v []float64, r int) ([]float64, bool) {
	L, ok := cholesky(M, r)
	if !ok {
		return nil, false
	}
	return cholSolve(L, v, r), true
}

func cholSolve(L, v []float64, r int) []float64 {
	x := append([]float64(nil), v...)
	for i := 0; i < r; i++ {
		for k := 0; k < i; k++ {
			x[i] -= L[i*r+k] * x[k]
		}
		x[i] /= L[i*r+i]
	}
	for i := r - 1; i >= 0; i-- {
		for k := i + 1; k < r; k++ {
			x[i] -= L[k*r+i] * x[k]
		}
		x[i] /= L[i*r+i]
	}
	return x
}

// invertSPD is the inverse of a symmetric positive definite matrix.
func invertSPD(M []float64, r int) ([]float64, bool) {
	L, ok := cholesky(M, r)
	if !ok {
		return nil, false
	}
	inv := make([]float64, r*r)
	e := make([]float64, r)
	for c := 0; c < r; c++ {
		for k := range e {
			e[k] = 0
		}
		e[c] = 1
		col := cholSolve(L, e, r)
		for k := 0; k < r; k++ {
			inv[k*r+c] = col[k]
		}
	}
	return inv, true
}
