package irt

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"time"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/machine"
	"github.com/jeirt/jeirt/model/progress"
	"github.com/jeirt/jeirt/train/backend"
	"github.com/jeirt/jeirt/train/irt/rotate"
)

// CBMM fits (multidimensional) two-parameter logistic IRT by joint maximum
// likelihood with constrained block majorization-minimization (cBMM; Qu,
// Heng, Zeng and Liu 2026, arXiv:2605.07046).
//
// With Y ∈ {−1, 1} on the observed cells Ω, X = θAᵀ + 1bᵀ (θ: N x r,
// A: J x r) and P(y_ij = 1) = sigmoid(x_ij/σ), it minimises
//
//	ℓ(X) = Σ_Ω log(1 + exp(−y_ij x_ij/σ))  subject to A ≥ 0.
//
// Each iteration builds the quadratic majorizer of ℓ at X (curvature 1/(4σ²)
// in every cell), whose minimiser is Ỹ = X + 4σ·Y ⊙ sigmoid(−Y ⊙ X/σ), and
// decreases ‖θAᵀ + 1bᵀ − Ỹ‖²_Ω by exact block updates: per item, (a_j, b_j)
// with a_j ≥ 0 (closed form at rank 1, active-set NNLS at rank r); then per
// model, θ_i by an r x r solve. ℓ therefore never increases. It starts from a
// truncated SVD of Y with missing cells as 0 and stops when the relative change
// of ℓ falls below Tol.
//
// The zero value is ready to use: σ = 1, rank 1, Tol 1e-6, 1000 iterations,
// GOMAXPROCS threads, the "auto" device.
type CBMM struct {
	Sigma   float64 // σ, the logistic scale; 0 means 1
	Rank    int     // r, ability dimensions; 0 means 1
	Tol     float64 // stop when |ℓ_k − ℓ_{k−1}| / |ℓ_{k−1}| < Tol; 0 means 1e-6
	MaxIter int     // iteration cap; 0 means 1000
	Threads int     // goroutines; 0 means runtime.GOMAXPROCS(0)
	// Accelerate extrapolates each MM step, θ ← M(θ) + β(M(θ) − θ) (and so for A,
	// b, with A clipped at 0), accepting the extrapolated point only when ℓ does
	// not increase, otherwise taking the plain MM step: the loss stays monotone.
	Accelerate bool
	// Signed (rank ≥ 2) lifts the constraint A ≥ 0: the item block becomes
	// unconstrained least squares, so an item may load negatively on a
	// dimension (BenchMIRT's finding). The loss is invariant under θ ↦ θR,
	// A ↦ AR⁻ᵀ, so the fit is identified afterwards by rotate.SignedGauge: θ
	// uncorrelated with sd 1, A varimax-rotated, each dimension's loadings
	// summing positive. A backend without signed fits (backend.CBMMSigned)
	// is replaced by the CPU one under "auto" and is an error when named.
	Signed bool
	// Model is the response function (model.IRT.Family): model.TwoPL (also
	// "", the default), model.OnePL (rank 1: one common discrimination,
	// only θ and the intercepts move) or model.ThreePL (a lower asymptote c_j per item:
	// P = c_j + (1 − c_j)·sigmoid(x/σ), fitted by an EM step inside each MM
	// iteration, see passAFamily). The 3PL's c_j are fixed when Guess > 0
	// (every item) or ItemGuess is given (problem k's c_j item by item;
	// one slice serves every problem), and fitted in [0, MaxGuess]
	// otherwise, from StartGuess.
	Model     model.Family
	Guess     float64
	ItemGuess [][]float64
	MaxGuess  float64 // 0 means DefaultMaxGuess
	// GuessPrior is the Beta(α, β) prior on fitted c_j; zero means
	// DefaultGuessPrior, {1, 1} none (plain maximum likelihood).
	GuessPrior [2]float64
	// Prior on θ, the intercepts and the slopes (model.Prior): with one the
	// fit is maximum a posteriori, its loss the negative log posterior,
	// which cBMM lowers as it lowers ℓ (each block a ridge solve, see
	// ridge), and its optimum finite for every data set. The zero Prior is
	// joint maximum likelihood (the cBMM paper's objective); commands use
	// model.DefaultPrior unless told otherwise. A fit with a prior is
	// returned as fitted, not in StandardGauge (the prior fixes the gauge).
	Prior      model.Prior
	StartGuess float64       // 0 means DefaultStartGuess
	Device     string        // "auto" (or ""), "cpu" or "cuda": see backend.Resolve
	Log        progress.Logf // when non-nil, a progress line every few seconds
	// Trace, when non-nil, is called after each recorded loss of problem k
	// (benchmarks use it to time the approach to the optimum).
	Trace func(k, iter int, loss float64)
	// Watch, when non-nil, is called every WatchEvery iterations with the
	// iteration, which problems are still running and a view of problem
	// k's current parameters (θ, A, b as fitted, before any gauge); the
	// problems it returns stop where they are, not converged, with its
	// reason as their note. irtguard stops a start this way once it
	// agrees with another.
	Watch func(iter int, active []bool, loss []float64, params func(k int) *model.IRT) (stop []int, why []string)
}

// WatchEvery is how often, in iterations, CBMM.Watch is called.
const WatchEvery = 10

func (c CBMM) withDefaults() CBMM {
	if c.Sigma == 0 {
		c.Sigma = 1
	}
	if c.Rank == 0 {
		c.Rank = 1
	}
	if c.Tol == 0 {
		c.Tol = 1e-6
	}
	if c.MaxIter == 0 {
		c.MaxIter = 1000
	}
	if c.Threads <= 0 {
		c.Threads = runtime.GOMAXPROCS(0)
	}
	if c.Model == "" {
		c.Model = model.TwoPL
	}
	if c.MaxGuess == 0 {
		c.MaxGuess = DefaultMaxGuess
	}
	if c.StartGuess == 0 {
		c.StartGuess = DefaultStartGuess
	}
	if c.GuessPrior == [2]float64{} {
		c.GuessPrior = DefaultGuessPrior
	}
	return c
}

// DefaultStartGuess is where fitted lower asymptotes start. c = 0 is a
// fixed point of the EM step (no success is ever put down to guessing), so
// the fit starts above it.
const DefaultStartGuess = 0.1

// DefaultGuessPrior is the Beta prior on fitted lower asymptotes.
var DefaultGuessPrior = [2]float64{5, 17}

// fitsGuess reports whether a 3PL fit fits its c_j (none given).
func (c CBMM) fitsGuess() bool { return c.Guess == 0 && c.ItemGuess == nil }

// FitsGuess reports whether c is a 3PL whose lower asymptotes are fitted.
func (c CBMM) FitsGuess() bool { return c.withDefaults().Model.HasAsymptote() && c.fitsGuess() }

// WithDefaults is c with every zero setting replaced by its default.
func (c CBMM) WithDefaults() CBMM { return c.withDefaults() }

// guessFor returns the given (or, when fitted, the starting) c_j of problem
// k with J items.
func (c CBMM) guessFor(k, J int) ([]float64, error) {
	out := make([]float64, J)
	switch {
	case c.ItemGuess != nil:
		g := c.ItemGuess[0]
		if len(c.ItemGuess) > 1 {
			g = c.ItemGuess[k]
		}
		if len(g) != J {
			return nil, fmt.Errorf("cbmm: response matrix %d: %d lower asymptotes for %d items", k, len(g), J)
		}
		for j, v := range g {
			if !(v >= 0 && v < 1) {
				return nil, fmt.Errorf("cbmm: response matrix %d: lower asymptote %v of item %d is not in [0, 1)", k, v, j)
			}
		}
		copy(out, g)
	case c.Guess > 0:
		for j := range out {
			out[j] = c.Guess
		}
	default:
		for j := range out {
			out[j] = math.Min(c.StartGuess, c.MaxGuess)
		}
	}
	return out, nil
}

// Fit fits one response matrix. The result is in the gauge stated on
// model.IRT: each θ column has mean 0 and sd 1, A ≥ 0, X unchanged.
func (c CBMM) Fit(ctx context.Context, r *model.Responses) (*model.IRT, error) {
	fits, err := c.FitBatch(ctx, []*model.Responses{r})
	if err != nil {
		return nil, err
	}
	return fits[0], nil
}

// FitBatch fits many response matrices in one run of the backend's batched
// hot loop (one benchmark per matrix, or bootstrap replicates). Each problem
// stops on its own criterion; the results equal those of separate Fit calls.
func (c CBMM) FitBatch(ctx context.Context, rs []*model.Responses) ([]*model.IRT, error) {
	return c.FitBatchFrom(ctx, rs, nil)
}

// FitBatchFrom is FitBatch with starting values: problem k starts from
// start[k] (same models, items and rank) instead of the SVD start when
// start is non-nil and start[k] is non-nil. Bootstrap replicates start from
// the full fit and so need far fewer iterations.
func (c CBMM) FitBatchFrom(ctx context.Context, rs []*model.Responses, start []*model.IRT) ([]*model.IRT, error) {
	c = c.withDefaults()
	entered, enteredCPU := time.Now(), machine.CPUSeconds()
	if c.Sigma < 0 || math.IsNaN(c.Sigma) || math.IsInf(c.Sigma, 0) {
		return nil, fmt.Errorf("cbmm: sigma %v must be positive", c.Sigma)
	}
	if c.Rank < 0 {
		return nil, fmt.Errorf("cbmm: rank %d must be at least 1", c.Rank)
	}
	if c.Tol < 0 {
		return nil, fmt.Errorf("cbmm: tol %v must not be negative", c.Tol)
	}
	if c.MaxIter < 0 {
		return nil, fmt.Errorf("cbmm: max-iter %d must not be negative", c.MaxIter)
	}
	if c.Signed && c.Rank < 2 {
		return nil, fmt.Errorf("cbmm: signed loadings need rank 2 or more (rank 1 is only a sign flip), got rank %d", c.Rank)
	}
	if _, err := model.ParseFamily(string(c.Model)); err != nil {
		return nil, fmt.Errorf("cbmm: %w", err)
	}
	if c.Model.CommonSlope() && c.Rank != 1 {
		return nil, fmt.Errorf("cbmm: the 1PL is unidimensional (one common discrimination); got rank %d", c.Rank)
	}
	if !(c.Guess >= 0 && c.Guess < 1) || !(c.MaxGuess > 0 && c.MaxGuess < 1) || !(c.StartGuess > 0 && c.StartGuess < 1) {
		return nil, fmt.Errorf("cbmm: guess %v, max guess %v and start guess %v must be in [0, 1)", c.Guess, c.MaxGuess, c.StartGuess)
	}
	if (c.Guess > 0 || c.ItemGuess != nil) && !c.Model.HasAsymptote() {
		return nil, fmt.Errorf("cbmm: lower asymptotes (guess) need the 3PL, not the %s", c.Model)
	}
	weighted := false
	for _, r := range rs {
		weighted = weighted || r != nil && r.Weighted()
	}
	// Weighted cells, the 1PL and the 3PL need a backend of the whole
	// family, and signed loadings one that fits them; "auto" falls back to
	// the CPU, a named device that lacks them is an error.
	family := weighted || c.Model != model.TwoPL || c.Prior.On()
	be, _, err := backend.Lookup[backend.CBMMDevice](c.Device)
	if err != nil {
		return nil, err
	}
	_, signedOK := be.(backend.CBMMSigned)
	_, familyOK := be.(backend.CBMMFamily)
	if c.Signed && !signedOK || family && !familyOK {
		if c.Device != "" && c.Device != "auto" {
			what := "signed loadings"
			if family && !familyOK {
				what = "cells of several trials, graded scores, the 1PL, the 3PL or a prior"
			}
			return nil, model.FieldErrorf("Device", "cbmm: device %s cannot fit %s; use {Device} cpu", be.Name(), what)
		}
		if be, _, err = backend.Lookup[backend.CBMMDevice](backend.CPU); err != nil {
			return nil, err
		}
	}
	if len(rs) == 0 {
		return nil, nil
	}
	probs := make([]*backend.CBMMProblem, len(rs))
	for k, r := range rs {
		if r == nil || r.NumModels() == 0 || r.NumItems() == 0 || r.Len() == 0 {
			return nil, fmt.Errorf("cbmm: response matrix %d has no observed cells", k)
		}
		if r.NumModels() >= 1<<31 {
			return nil, fmt.Errorf("cbmm: response matrix %d has too many models", k)
		}
		if probs[k], err = layoutCells(r, c.Threads); err != nil {
			return nil, fmt.Errorf("cbmm: response matrix %d: %w", k, err)
		}
	}
	var batch backend.CBMMBatch
	switch {
	case family:
		batch, err = be.(backend.CBMMFamily).LoadFamily(probs, c.Rank, c.Sigma, c.Threads, backend.CBMMModel{Signed: c.Signed,
			FixedA: c.Model.CommonSlope(), Guess: c.Model.HasAsymptote(), FitGuess: c.fitsGuess(), MaxGuess: c.MaxGuess, GuessPrior: c.GuessPrior,
			Prior: c.Prior})
	case c.Signed:
		batch, err = be.(backend.CBMMSigned).LoadSigned(probs, c.Rank, c.Sigma, c.Threads)
	default:
		batch, err = be.Load(probs, c.Rank, c.Sigma, c.Threads)
	}
	if err != nil {
		return nil, fmt.Errorf("cbmm: device %s: %w", be.Name(), err)
	}
	defer batch.Close()

	K := len(rs)
	st := make([]*fitState, K)
	// Starting values: a few problems run one after another with all threads;
	// many run side by side.
	startThreads := c.Threads
	if K >= c.Threads {
		startThreads = 1
	}
	for k, s := range start {
		if s == nil {
			continue
		}
		if k >= K || s.Rank != c.Rank || len(s.Theta) != probs[k].N*c.Rank || len(s.A) != probs[k].J*c.Rank || len(s.B) != probs[k].J ||
			s.C != nil && len(s.C) != probs[k].J {
			return nil, fmt.Errorf("cbmm: starting values %d do not match response matrix %d and rank %d", k, k, c.Rank)
		}
	}
	var guessing backend.CBMMGuessing
	if c.Model.HasAsymptote() {
		if guessing, _ = batch.(backend.CBMMGuessing); guessing == nil {
			return nil, fmt.Errorf("cbmm: device %s: a 3PL batch without lower asymptotes", be.Name())
		}
	}
	err = parallel(ctx, K, c.Threads/startThreads, func(k int) {
		if k < len(start) && start[k] != nil {
			s := start[k]
			st[k] = &fitState{theta: append([]float64(nil), s.Theta...), a: append([]float64(nil), s.A...),
				b: append([]float64(nil), s.B...)}
			if !c.Signed {
				for j, v := range st[k].a {
					st[k].a[j] = math.Max(v, 0)
				}
			}
			return
		}
		th, a, b, e := SVDStart(ctx, probs[k], c.Rank, c.Sigma, startThreads, !c.Signed)
		if e != nil {
			return
		}
		if c.Model.CommonSlope() {
			// One common a: the mean of the start's (θ's scale is free).
			mean := 0.0
			for _, v := range a {
				mean += v / float64(len(a))
			}
			for j := range a {
				a[j] = mean
			}
		}
		st[k] = &fitState{theta: th, a: a, b: b}
	})
	if err != nil {
		return nil, err
	}
	if c.Model.HasAsymptote() {
		for k, s := range st {
			if k < len(start) && start[k] != nil && start[k].C != nil && c.ItemGuess == nil && c.Guess == 0 {
				s.c = append([]float64(nil), start[k].C...)
			} else if s.c, err = c.guessFor(k, probs[k].J); err != nil {
				return nil, err
			}
			guessing.SetC(k, s.c)
			if c.Accelerate {
				s.mC = append([]float64(nil), s.c...)
			}
		}
	}
	// A backend that iterates on its device (backend.CBMMIterator) keeps the
	// parameters there from the first Set to the last Get: only the losses and
	// the outcomes of the steps come back, and the host replays each
	// problem's decisions to keep its history.
	it, _ := batch.(backend.CBMMIterator)
	for k, s := range st {
		batch.Set(k, s.theta, s.a, s.b)
		s.ctl = backend.NewCBMMControl()
		if c.Accelerate && it == nil {
			s.mTheta, s.mA, s.mB = make([]float64, len(s.theta)), make([]float64, len(s.a)), make([]float64, len(s.b))
		}
	}

	active := make([]bool, K)
	for k := range active {
		active[k] = true
	}
	loss := make([]float64, K)
	outcome := make([]backend.CBMMOutcome, K)
	nActive := K
	began, lastLog, beganCPU := time.Now(), time.Now(), machine.CPUSeconds()
	c.Log.Printf("cbmm: layout and start in %.2fs (%.2fs CPU)", began.Sub(entered).Seconds(), beganCPU-enteredCPU)
	for iter := 1; iter <= c.MaxIter && nActive > 0; iter++ {
		var err error
		if it != nil {
			err = it.Iterate(ctx, active, c.Tol, c.Accelerate, loss, outcome)
		} else {
			err = batch.Step(ctx, active, loss)
		}
		if err != nil {
			return nil, err
		}
		for k, s := range st {
			if !active[k] {
				continue
			}
			out := s.ctl.Next(loss[k], c.Tol, c.Accelerate)
			if it != nil && outcome[k] != out {
				return nil, fmt.Errorf("cbmm: device %s: response matrix %d: the device's step outcome %d differs from the host's %d at iteration %d", be.Name(), k, outcome[k], out, iter)
			}
			if out != backend.CBMMRejected && (math.IsNaN(loss[k]) || math.IsInf(loss[k], 0)) {
				return nil, fmt.Errorf("cbmm: response matrix %d: loss became %v at iteration %d", k, loss[k], iter)
			}
			if out == backend.CBMMRejected {
				s.rejected++
			} else {
				s.hist = append(s.hist, loss[k])
				if c.Trace != nil {
					c.Trace(k, s.ctl.Iters, loss[k])
				}
			}
			if out == backend.CBMMConverged {
				s.converged = true
				active[k] = false
				nActive--
			}
			if it == nil {
				s.apply(batch, guessing, k, out, !c.Signed)
			}
		}
		if c.Watch != nil && iter%WatchEvery == 0 && nActive > 0 {
			view := func(k int) *model.IRT {
				m := &model.IRT{Models: rs[k].Models, Items: rs[k].Items, Rank: c.Rank, Sigma: c.Sigma, Family: c.Model,
					Theta: make([]float64, len(st[k].theta)), A: make([]float64, len(st[k].a)), B: make([]float64, len(st[k].b))}
				batch.Get(k, m.Theta, m.A, m.B)
				if guessing != nil {
					m.C = make([]float64, len(m.B))
					guessing.GetC(k, m.C)
				}
				return m
			}
			stop, why := c.Watch(iter, active, loss, view)
			for n, k := range stop {
				if active[k] {
					active[k] = false
					nActive--
					st[k].stopped = why[n]
				}
			}
		}
		if c.Log != nil && time.Since(lastLog) > 2*time.Second {
			lastLog = time.Now()
			if K == 1 {
				s := st[0]
				c.Log("cbmm: iteration %d, loss %.6g, %.1fs (%.1fs CPU)", s.ctl.Iters, s.last(), time.Since(began).Seconds(), machine.CPUSeconds()-beganCPU)
			} else {
				c.Log("cbmm: iteration %d, %d of %d fits still running, %.1fs", iter, nActive, K, time.Since(began).Seconds())
			}
		}
	}
	// Record ℓ at the returned parameters (the last step moved past the last
	// recorded loss).
	all := make([]bool, K)
	for k := range all {
		all[k] = true
	}
	if err := batch.Loss(ctx, all, loss); err != nil {
		return nil, err
	}
	// Only an extrapolated point whose step was never evaluated can be worse
	// than the last kept loss (c.Accelerate with the iteration cap); such a
	// point is not kept, and ℓ is evaluated again where it returns to.
	worse := make([]bool, K)
	nWorse := 0
	for k, s := range st {
		if c.Accelerate && s.ctl.Extrapolated && loss[k] > s.last() {
			if it != nil {
				err = it.Revert(k)
			} else {
				batch.Set(k, s.mTheta, s.mA, s.mB)
				if guessing != nil {
					guessing.SetC(k, s.mC)
				}
			}
			if err != nil {
				return nil, err
			}
			worse[k] = true
			nWorse++
		}
	}
	if nWorse > 0 {
		if err := batch.Loss(ctx, worse, loss); err != nil {
			return nil, err
		}
	}
	out := make([]*model.IRT, K)
	for k, s := range st {
		s.hist = append(s.hist, loss[k])
		m := &model.IRT{Models: rs[k].Models, Items: rs[k].Items, Rank: c.Rank, Sigma: c.Sigma, Family: c.Model,
			Theta: s.theta, A: s.a, B: s.b, LossHistory: s.hist, Iterations: s.ctl.Iters, Converged: s.converged}
		if guessing != nil {
			m.C = make([]float64, len(m.B))
			guessing.GetC(k, m.C)
		}
		switch {
		case s.stopped != "":
			m.Note = s.stopped
		case !s.converged:
			m.Note = fmt.Sprintf("iteration limit %d reached before the relative loss change fell below %g", c.MaxIter, c.Tol)
		}
		batch.Get(k, m.Theta, m.A, m.B)
		switch {
		case c.Prior.On() && c.Signed:
			m.Signed = true
			rotate.VarimaxGauge(m) // a rotation: the centred prior is unchanged
		case c.Prior.On():
		case c.Signed:
			StandardGauge(m)
			m.Signed = true
			rotate.SignedGauge(m)
		default:
			StandardGauge(m)
		}
		out[k] = m
	}
	c.Log.Printf("cbmm: %d fit(s) done in %.2fs", K, time.Since(began).Seconds())
	return out, nil
}

// fitState is the driver's per-problem bookkeeping.
type fitState struct {
	theta, a, b    []float64 // host copy of the point the last step started from
	mTheta, mA, mB []float64 // host copy of the plain MM point M(θ)
	c, mC          []float64 // the 3PL's lower asymptotes: at the start, and at M(θ)
	ctl            backend.CBMMControl
	hist           []float64
	converged      bool
	rejected       int
	stopped        string // why Watch stopped it
}

func (s *fitState) last() float64 {
	if len(s.hist) == 0 {
		return math.Inf(1)
	}
	return s.hist[len(s.hist)-1]
}

// apply carries out a step's outcome on a backend that does not iterate on
// its own (backend.CBMMIterator), through Get and Set: with acceleration,
// the MM point M(θ) is kept on the host, an extrapolation moves problem k to
// M(θ) + β(M(θ) − θ) (A ≥ 0 with clipA), and a rejected step returns it to
// the M(θ) it was extrapolated from.
func (s *fitState) apply(batch backend.CBMMBatch, guessing backend.CBMMGuessing, k int, out backend.CBMMOutcome, clipA bool) {
	// A 3PL's c_j are not extrapolated: they go with M(θ), and return to
	// it with a rejected step.
	switch out {
	case backend.CBMMRejected:
		batch.Set(k, s.mTheta, s.mA, s.mB)
		if guessing != nil {
			guessing.SetC(k, s.mC)
		}
		copy(s.theta, s.mTheta)
		copy(s.a, s.mA)
		copy(s.b, s.mB)
	case backend.CBMMAccepted:
		if s.mTheta == nil {
			return
		}
		batch.Get(k, s.mTheta, s.mA, s.mB)
		if guessing != nil {
			guessing.GetC(k, s.mC)
		}
		copy(s.theta, s.mTheta)
		copy(s.a, s.mA)
		copy(s.b, s.mB)
	case backend.CBMMExtrapolated:
		batch.Get(k, s.mTheta, s.mA, s.mB)
		if guessing != nil {
			guessing.GetC(k, s.mC)
		}
		beta := s.ctl.StepBeta
		backend.Extrapolate(s.theta, s.mTheta, beta, false)
		backend.Extrapolate(s.a, s.mA, beta, clipA)
		backend.Extrapolate(s.b, s.mB, beta, false)
		batch.Set(k, s.theta, s.a, s.b)
	}
}

// StandardGauge puts m in the stated gauge without changing X = θAᵀ + 1bᵀ:
// each θ column is centred and scaled to population sd 1 (b absorbs the mean,
// A the scale). A column of θ that is constant is only centred. A ≥ 0 is
// preserved (the scales are positive).
func StandardGauge(m *model.IRT) {
	r, n, J := m.Rank, len(m.Models), len(m.Items)
	if n == 0 {
		return
	}
	for d := 0; d < r; d++ {
		mu := 0.0
		for i := 0; i < n; i++ {
			mu += m.Theta[i*r+d]
		}
		mu /= float64(n)
		v := 0.0
		for i := 0; i < n; i++ {
			x := m.Theta[i*r+d] - mu
			v += x * x
		}
		sd := math.Sqrt(v / float64(n))
		if !(sd > 1e-300) {
			sd = 1
		}
		for i := 0; i < n; i++ {
			m.Theta[i*r+d] = (m.Theta[i*r+d] - mu) / sd
		}
		for j := 0; j < J; j++ {
			m.B[j] += m.A[j*r+d] * mu
			m.A[j*r+d] *= sd
		}
	}
}
