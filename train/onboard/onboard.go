package onboard

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/jeirt/jeirt/model"
)

// Onboard places a new model on a trained JE-IRT map: with the adapter, the
// question embeddings and every other model row frozen, the new row m is the
// maximum a posteriori estimate of the d-dimensional logistic regression
//
//	y_j ~ Bernoulli(σ(u_j·m − ‖q_j‖)),  u_j = q_j/(‖q_j‖+1e-8)
//
// (the JE-IRT link of Yao et al. 2025, arXiv:2509.22888, with q fixed is
// linear in m: the paper adds a new model by fitting its embedding alone),
// under a Gaussian prior
// m ~ N(μ, Λ⁻¹). The objective
//
//	f(m) = Σ_j [log(1+e^{z_j}) − y_j z_j] + ½ (m−μ)ᵀ Λ (m−μ),  z_j = u_j·m − ‖q_j‖
//
// is strictly convex, so a damped Newton method (Boyd and Vandenberghe,
// Convex Optimization, §9.5: Newton step −H⁻¹g by Cholesky, backtracking line
// search with α = 1/4, β = 1/2, stopping when the Newton decrement λ²/2 falls
// below Tol) converges from the prior mean in a handful of iterations.
//
// Two priors:
//
//   - "population" (the default): μ is the mean of the checkpoint's model rows
//     and Λ⁻¹ = S + Shrink·(tr S/d)·I, with S their sample covariance. A new
//     model is assumed to look like the models already on the map; with few
//     responses its row stays near the population, moving along the
//     directions in which known models differ. Shrink defaults to 0.1.
//   - "l2": μ = 0 and Λ = L2·I, a plain ridge penalty (L2 defaults to 1).
type Onboard struct {
	Prior   string  // "population" (default) or "l2"
	Shrink  float64 // population prior: ridge added to the covariance, relative to its mean variance (0: 0.1)
	L2      float64 // l2 prior: precision (0: 1)
	MaxIter int     // Newton iterations (0: 50)
	Tol     float64 // stop when λ²/2 < Tol (0: 1e-9)
}

// Gaussian is a prior N(Mean, Precision⁻¹) on a d-dimensional model row;
// Precision is d x d, row-major and symmetric.
type Gaussian struct {
	Mean      []float64
	Precision []float64
}

// NewtonInfo says how a row fit went.
type NewtonInfo struct {
	Iterations int
	Converged  bool
	Objective  float64 // f at the solution
}

// WithDefaults is o with each zero field set to its default (prior
// population, shrink 0.1, l2 1, at most 50 Newton steps to tolerance 1e-9).
func (o Onboard) WithDefaults() Onboard {
	if o.Prior == "" || o.Prior == "default" {
		o.Prior = "population"
	}
	if o.Shrink == 0 {
		o.Shrink = 0.1
	}
	if o.L2 == 0 {
		o.L2 = 1
	}
	if o.MaxIter == 0 {
		o.MaxIter = 50
	}
	if o.Tol == 0 {
		o.Tol = 1e-9
	}
	return o
}

// PriorFor returns the prior Onboard uses for new rows of m.
func (o Onboard) PriorFor(m *model.JEIRT) (Gaussian, error) {
	o = o.WithDefaults()
	d := m.Dim
	population, sd, err := model.ParseRowPrior(o.Prior)
	if err != nil && !strings.Contains(o.Prior, "=") {
		return Gaussian{}, fmt.Errorf("onboard: unknown prior %q (want default, population, theta=normal(0,SD) or l2)", o.Prior)
	}
	if err != nil {
		return Gaussian{}, fmt.Errorf("onboard: %w", err)
	}
	if sd > 0 {
		o.L2 = 1 / (sd * sd)
	}
	switch {
	case !population:
		if !(o.L2 > 0) {
			return Gaussian{}, fmt.Errorf("onboard: l2 prior precision %v must be positive", o.L2)
		}
		g := Gaussian{Mean: make([]float64, d), Precision: make([]float64, d*d)}
		for k := 0; k < d; k++ {
			g.Precision[k*d+k] = o.L2
		}
		return g, nil
	}
	if !(o.Shrink > 0) {
		return Gaussian{}, fmt.Errorf("onboard: shrink %v must be positive", o.Shrink)
	}
	n := m.NumModels()
	if n == 0 {
		return Gaussian{}, fmt.Errorf("onboard: the checkpoint has no models to take a population prior from (use the l2 prior)")
	}
	mean := make([]float64, d)
	for i := 0; i < n; i++ {
		for k, v := range m.ModelEmbedding(i) {
			mean[k] += float64(v) / float64(n)
		}
	}
	// S = (1/(n−1)) Σ (m_i−μ)(m_i−μ)ᵀ, then Σ = S + Shrink·(tr S/d)·I.
	cov := make([]float64, d*d)
	if n > 1 {
		centred := make([]float64, n*d)
		for i := 0; i < n; i++ {
			for k, v := range m.ModelEmbedding(i) {
				centred[i*d+k] = float64(v) - mean[k]
			}
		}
		blas64.Syrk(blas.Trans, 1/float64(n-1), blas64.General{Rows: n, Cols: d, Stride: d, Data: centred},
			0, blas64.Symmetric{Uplo: blas.Upper, N: d, Stride: d, Data: cov})
	}
	var tr float64
	for k := 0; k < d; k++ {
		tr += cov[k*d+k]
	}
	tau2 := tr / float64(d)
	if !(tau2 > 0) {
		tau2 = 1
	}
	for k := 0; k < d; k++ {
		cov[k*d+k] += o.Shrink * tau2
	}
	var chol mat.Cholesky
	if !chol.Factorize(mat.NewSymDense(d, cov)) {
		return Gaussian{}, fmt.Errorf("onboard: the population covariance is not positive definite")
	}
	var prec mat.SymDense
	if err := chol.InverseTo(&prec); err != nil {
		return Gaussian{}, fmt.Errorf("onboard: inverting the population covariance: %w", err)
	}
	g := Gaussian{Mean: mean, Precision: make([]float64, d*d)}
	for a := 0; a < d; a++ {
		for b := 0; b < d; b++ {
			g.Precision[a*d+b] = prec.At(a, b)
		}
	}
	return g, nil
}

// RowData is one new model's observed cells in the form the row fit needs:
// the unit directions u_j (n x d, row-major), the norms ‖q_j‖ and the labels.
// Cells of several trials or graded scores have, in Frac and Trials, their
// fraction k/n and trials n (both nil while every cell is one 0/1 answer):
// the row fit then takes the trial-weighted cross-entropy of the fractions.
type RowData struct {
	Dim          int
	U            []float64
	Norm         []float64
	Y            []uint8
	Frac, Trials []float64
}

// Add appends a cell on question embedding q with label y.
func (r *RowData) Add(q []float32, y uint8) { r.AddCounts(q, float64(y), 1) }

// AddCounts appends a cell on question embedding q with fraction frac of n
// trials (a graded score: its score of one trial).
func (r *RowData) AddCounts(q []float32, frac float64, n int) {
	nrm := model.Norm(q)
	for _, v := range q {
		r.U = append(r.U, float64(v)/(nrm+model.LinkEps))
	}
	r.Norm = append(r.Norm, nrm)
	r.Y = append(r.Y, model.RoundedLabel(frac, 1))
	if r.Frac == nil && (n != 1 || frac != float64(r.Y[len(r.Y)-1])) {
		r.Frac, r.Trials = make([]float64, len(r.Y)-1, cap(r.Y)), make([]float64, len(r.Y)-1, cap(r.Y))
		for j, y := range r.Y[:len(r.Y)-1] {
			r.Frac[j], r.Trials[j] = float64(y), 1
		}
	}
	if r.Frac != nil {
		r.Frac, r.Trials = append(r.Frac, frac), append(r.Trials, float64(n))
	}
}

// AddCell appends cell c of responses r on question embedding q: a 0/1
// answer, or its fraction and trials.
func (r *RowData) AddCell(q []float32, resp *model.Responses, c int) {
	if !resp.Weighted() {
		r.Add(q, resp.Label[c])
		return
	}
	r.AddCounts(q, resp.ScoreAt(c), resp.TrialsAt(c))
}

// target is cell j's target and weight: its label and 1, or its fraction
// and trials.
func (r *RowData) target(j int) (y, w float64) {
	if r.Frac == nil {
		return float64(r.Y[j]), 1
	}
	return r.Frac[j], r.Trials[j]
}

// Len is the number of cells.
func (r *RowData) Len() int { return len(r.Y) }

// FitRow returns the MAP row m for the cells in data under prior, by damped
// Newton from the prior mean.
func (o Onboard) FitRow(data *RowData, prior Gaussian) ([]float64, NewtonInfo, error) {
	o = o.WithDefaults()
	d, n := data.Dim, data.Len()
	if len(prior.Mean) != d || len(prior.Precision) != d*d {
		return nil, NewtonInfo{}, fmt.Errorf("onboard: prior of dimension %d for rows of dimension %d", len(prior.Mean), d)
	}
	U := blas64.General{Rows: n, Cols: d, Stride: d, Data: data.U}
	m := append([]float64(nil), prior.Mean...)
	z := make([]float64, n)
	resid := make([]float64, n) // p_j − y_j
	scaled := make([]float64, n*d)
	g := make([]float64, d)
	diff := make([]float64, d)
	hess := make([]float64, d*d)
	step := make([]float64, d)
	trial := make([]float64, d)

	// objective evaluates f at x, leaving z = U x − s.
	objective := func(x []float64) float64 {
		if n > 0 {
			blas64.Gemv(blas.NoTrans, 1, U, blas64.Vector{N: d, Inc: 1, Data: x}, 0, blas64.Vector{N: n, Inc: 1, Data: z})
		}
		var f float64
		for j := range z {
			z[j] -= data.Norm[j]
			y, w := data.target(j)
			f += w * model.BCE(z[j], y)
		}
		for k := range diff {
			diff[k] = x[k] - prior.Mean[k]
		}
		var q float64
		for a := 0; a < d; a++ {
			var s float64
			for b := 0; b < d; b++ {
				s += prior.Precision[a*d+b] * diff[b]
			}
			q += diff[a] * s
		}
		return f + q/2
	}

	info := NewtonInfo{}
	f := objective(m)
	for info.Iterations < o.MaxIter {
		info.Iterations++
		// g = Uᵀ(p − y) + Λ(m − μ);  H = Uᵀ diag(p(1−p)) U + Λ (each cell
		// times its trials n, y its fraction).
		for j := range z {
			p := model.Sigmoid(z[j])
			y, n := data.target(j)
			resid[j] = n * (p - y)
			w := math.Sqrt(n * p * (1 - p))
			row := data.U[j*d : (j+1)*d]
			for k, v := range row {
				scaled[j*d+k] = w * v
			}
		}
		for a := 0; a < d; a++ {
			var s float64
			for b := 0; b < d; b++ {
				s += prior.Precision[a*d+b] * (m[b] - prior.Mean[b])
			}
			g[a] = s
		}
		if n > 0 {
			blas64.Gemv(blas.Trans, 1, U, blas64.Vector{N: n, Inc: 1, Data: resid}, 1, blas64.Vector{N: d, Inc: 1, Data: g})
			blas64.Syrk(blas.Trans, 1, blas64.General{Rows: n, Cols: d, Stride: d, Data: scaled},
				0, blas64.Symmetric{Uplo: blas.Upper, N: d, Stride: d, Data: hess})
		} else {
			clear(hess)
		}
		for a := 0; a < d; a++ {
			for b := a; b < d; b++ {
				hess[a*d+b] += prior.Precision[a*d+b]
			}
		}
		var chol mat.Cholesky
		if !chol.Factorize(mat.NewSymDense(d, hess)) {
			return nil, info, fmt.Errorf("onboard: Newton Hessian is not positive definite (is the prior precision?)")
		}
		sv := mat.NewVecDense(d, step)
		if err := chol.SolveVecTo(sv, mat.NewVecDense(d, g)); err != nil {
			return nil, info, fmt.Errorf("onboard: Newton step: %w", err)
		}
		var dec2 float64 // λ² = gᵀ H⁻¹ g
		for k := range step {
			dec2 += g[k] * step[k]
			step[k] = -step[k]
		}
		if dec2/2 < o.Tol {
			info.Converged = true
			break
		}
		// Backtracking (Armijo) line search on the exact objective.
		t := 1.0
		var ft float64
		for {
			for k := range trial {
				trial[k] = m[k] + t*step[k]
			}
			ft = objective(trial)
			if ft <= f-0.25*t*dec2 || t < 1e-12 {
				break
			}
			t /= 2
		}
		copy(m, trial)
		f = ft
	}
	info.Objective = f
	return m, info, nil
}

// float32Row is a fitted row in the precision model rows are kept in.
func float32Row(m []float64) []float32 {
	out := make([]float32, len(m))
	for k, v := range m {
		out[k] = float32(v)
	}
	return out
}

// Posterior returns the Laplace approximation of the posterior of a new row
// given data: a Gaussian at the MAP row of FitRow, with precision the
// Hessian there, Λ + Σ_j p_j(1−p_j) u_j u_jᵀ. With no cells it is the prior.
func (o Onboard) Posterior(data *RowData, prior Gaussian) (Gaussian, error) {
	if data.Len() == 0 {
		return prior, nil
	}
	row, _, err := o.FitRow(data, prior)
	if err != nil {
		return Gaussian{}, err
	}
	d, n := data.Dim, data.Len()
	scaled := make([]float64, n*d)
	for j := 0; j < n; j++ {
		u := data.U[j*d : (j+1)*d]
		var z float64
		for k, v := range u {
			z += v * row[k]
		}
		p := model.Sigmoid(z - data.Norm[j])
		_, nt := data.target(j)
		w := math.Sqrt(nt * p * (1 - p))
		for k, v := range u {
			scaled[j*d+k] = w * v
		}
	}
	prec := append([]float64(nil), prior.Precision...)
	blas64.Syrk(blas.Trans, 1, blas64.General{Rows: n, Cols: d, Stride: d, Data: scaled},
		1, blas64.Symmetric{Uplo: blas.Upper, N: d, Stride: d, Data: prec})
	for a := 0; a < d; a++ {
		for b := 0; b < a; b++ {
			prec[a*d+b] = prec[b*d+a]
		}
	}
	return Gaussian{Mean: row, Precision: prec}, nil
}
