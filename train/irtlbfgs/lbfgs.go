package irtlbfgs

import (
	"context"
	"fmt"
	"math"
	"runtime"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/backend"
	"github.com/jeirt/jeirt/train/irt"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/optimize"
)

// LBFGS2PL is the quasi-Newton baseline for the cBMM objective: rank-1 2PL
// joint maximum likelihood, ℓ = Σ_Ω log(1 + exp(−y_ij(θ_i a_j + b_j)/σ)),
// minimised with gonum's L-BFGS (Nocedal and Wright, Numerical Optimization,
// ch. 7) over (θ, α, b) with a_j = softplus(α_j), which keeps a > 0. It starts
// from the same SVD start as irt.CBMM. It exists for benchmarks; irt.CBMM is the fitter.
type LBFGS2PL struct {
	Sigma   float64 // σ; 0 means 1
	Tol     float64 // stop when ℓ improves by less than Tol (relative) in an iteration; 0 means 1e-6
	MaxIter int     // 0 means 10000
	Threads int     // 0 means GOMAXPROCS
	Store   int     // L-BFGS memory; 0 means gonum's default (15)
	// Trace, when non-nil, is called with ℓ at every major iteration.
	Trace func(loss float64)
	// Start, when non-nil, is the starting point instead of the SVD start
	// (rank 1, the same models and items; a below 1e-3 starts at 1e-3).
	Start *model.IRT
	// Prior makes the objective the negative log posterior (irt.CBMM.Prior);
	// the fit is then returned as fitted, not in StandardGauge.
	Prior model.Prior
}

// Fit returns the fit in the standard gauge.
func (c LBFGS2PL) Fit(ctx context.Context, r *model.Responses) (*model.IRT, error) {
	if c.Sigma == 0 {
		c.Sigma = 1
	}
	if c.Tol == 0 {
		c.Tol = 1e-6
	}
	if c.MaxIter == 0 {
		c.MaxIter = 10000
	}
	if c.Threads <= 0 {
		c.Threads = runtime.GOMAXPROCS(0)
	}
	if r.Len() == 0 {
		return nil, fmt.Errorf("lbfgs: no observed cells")
	}
	p := backend.NewCBMMProblem(r)
	theta, a, b, err := irt.SVDStart(ctx, p, 1, c.Sigma, c.Threads, true)
	if err != nil {
		return nil, err
	}
	N, J := p.N, p.J
	if s := c.Start; s != nil {
		if s.Rank != 1 || len(s.Theta) != N || len(s.A) != J || len(s.B) != J {
			return nil, fmt.Errorf("lbfgs: the starting values do not match %d models and %d items at rank 1", N, J)
		}
		theta, a, b = s.Theta, s.A, s.B
	}
	x0 := make([]float64, N+2*J)
	copy(x0, theta)
	for j := 0; j < J; j++ {
		aj := math.Max(a[j], 1e-3)
		x0[N+j] = aj + math.Log(-math.Expm1(-aj)) // softplus⁻¹
		x0[N+J+j] = b[j]
	}
	chunks := irt.BalanceChunks(p.ItemStart, irt.NumChunks)
	gth := make([][]float64, len(chunks)-1)
	for k := range gth {
		gth[k] = make([]float64, N)
	}
	lossC := make([]float64, len(chunks)-1)
	rg := irt.NewPriorGrad(irt.CBMM{Prior: c.Prior, Sigma: c.Sigma, Rank: 1}, nil)
	lastX := make([]float64, len(x0))
	lastG := make([]float64, len(x0))
	lastF := math.NaN()
	eval := func(x []float64) float64 {
		if lastF == lastF && floats.Equal(x, lastX) {
			return lastF
		}
		inv := 1 / c.Sigma
		th, alpha, bb := x[:N], x[N:N+J], x[N+J:]
		if rg.FitsMeans() {
			// The prior's fitted means at their optimum given (a, b): by
			// the envelope theorem the gradient in (a, b) is then the
			// profiled posterior's.
			as := make([]float64, J)
			for j := range as {
				as[j] = model.Softplus(alpha[j])
			}
			rg.FitMeans(as, bb)
		}
		g := lastG
		clear(g)
		_ = irt.Parallel(ctx, len(chunks)-1, c.Threads, func(k int) {
			acc := gth[k]
			clear(acc)
			loss := 0.0
			for j := chunks[k]; j < chunks[k+1]; j++ {
				aj := model.Softplus(alpha[j])
				var ga, gb float64
				for _, cell := range p.Cells[p.ItemStart[j]:p.ItemStart[j+1]] {
					i := cell >> 1
					xij := th[i]*aj + bb[j]
					y := float64(cell&1)*2 - 1
					t := -y * xij * inv
					sp, sg := irt.SoftplusSigmoid(t)
					loss += sp
					d := -y * inv * sg // ∂ℓ/∂x_ij
					acc[i] += d * aj
					ga += d * th[i]
					gb += d
				}
				if rg.On() {
					loss += rg.ItemLoss([]float64{aj}, bb[j])
					ga += rg.A(aj)
					gb += rg.B(bb[j])
				}
				g[N+j] = ga * model.Sigmoid(alpha[j])
				g[N+J+j] = gb
			}
			lossC[k] = loss
		})
		f := 0.0
		for k, l := range lossC {
			f += l
			for i, v := range gth[k] {
				g[i] += v
			}
		}
		if rg.On() {
			f += rg.ThetaLoss(th)
			for i, v := range th {
				g[i] += rg.Theta(v)
			}
		}
		copy(lastX, x)
		lastF = f
		return f
	}
	prob := optimize.Problem{
		Func: eval,
		Grad: func(grad, x []float64) {
			eval(x)
			copy(grad, lastG)
		},
	}
	iters := 0
	var hist []float64
	rec := recorderFunc(func(loc *optimize.Location, op optimize.Operation) error {
		if (op == optimize.MajorIteration || op == optimize.InitIteration) && !math.IsInf(loc.F, 0) && !math.IsNaN(loc.F) {
			hist = append(hist, loc.F)
			if op == optimize.MajorIteration {
				iters++
			}
			if c.Trace != nil {
				c.Trace(loc.F)
			}
		}
		return ctx.Err()
	})
	settings := &optimize.Settings{
		Converger:       &optimize.FunctionConverge{Relative: c.Tol, Iterations: 1},
		MajorIterations: c.MaxIter,
		Recorder:        rec,
	}
	res, err := optimize.Minimize(prob, x0, settings, &optimize.LBFGS{Store: c.Store})
	if cerr := ctx.Err(); cerr != nil {
		return nil, cerr
	}
	if err != nil && res == nil {
		return nil, fmt.Errorf("lbfgs: %w", err)
	}
	m := &model.IRT{Models: r.Models, Items: r.Items, Rank: 1, Sigma: c.Sigma,
		Theta: make([]float64, N), A: make([]float64, J), B: make([]float64, J),
		LossHistory: hist, Iterations: iters, Converged: err == nil && res.Status == optimize.FunctionConvergence}
	if !m.Converged {
		m.Note = fmt.Sprintf("L-BFGS stopped with status %v before the relative loss change fell below %g", res.Status, c.Tol)
		if err != nil {
			m.Note += ": " + err.Error()
		}
	}
	copy(m.Theta, res.X[:N])
	for j := 0; j < J; j++ {
		m.A[j] = model.Softplus(res.X[N+j])
		m.B[j] = res.X[N+J+j]
	}
	if !c.Prior.On() {
		irt.StandardGauge(m)
	}
	return m, nil
}

type recorderFunc func(*optimize.Location, optimize.Operation) error

func (recorderFunc) Init() error { return nil }
func (f recorderFunc) Record(l *optimize.Location, op optimize.Operation, _ *optimize.Stats) error {
	return f(l, op)
}
