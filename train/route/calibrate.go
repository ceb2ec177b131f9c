package route

import (
	"fmt"
	"math"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/train/backend"
)

// Calibration recalibrates the router's P(correct) on questions the map has
// never seen: P = σ(a·z + b·logit(acc_i) + c), z the JE-IRT logit
// q·m_i/‖q‖ − ‖q‖ and acc_i model i's training accuracy. On a new question
// the hash encoder's q is noisy, so the map's z is overconfident (a < 1)
// and a model's record on the training questions says more than the map
// credits (b > 0); the weights are fitted by logistic regression on the
// out-of-fold predictions of the routing cross-validation (Platt 1999,
// "Probabilistic outputs for support vector machines", with the model's
// accuracy as a second score), so the rules then compare probabilities
// that match held-out outcomes.
type Calibration struct {
	checkpoint.Calibration
	// Prior is logit(acc_i) per row of M (AccuracyLogit).
	Prior []float64
}

// AccuracyLogit is the calibration's accuracy score: the logit of acc,
// clamped to [0.001, 0.999] so a model that answered everything or nothing
// stays finite.
func AccuracyLogit(acc float64) float64 {
	p := math.Min(math.Max(acc, 1e-3), 1-1e-3)
	return math.Log(p / (1 - p))
}

// Prob is the calibrated P of row i for the question embedding q.
func (c *Calibration) Prob(m *model.JEIRT, i int, q []float32) float64 {
	return model.Sigmoid(c.Logit(m.Logit(i, q), c.Prior[i]))
}

// NewCalibration is the calibration w with each row's prior from acc (per
// row of M, NaN or −Inf for a model without a training accuracy, which
// then takes fill[i], or 0.5 without fill).
func NewCalibration(w checkpoint.Calibration, acc, fill []float64) *Calibration {
	c := &Calibration{Calibration: w, Prior: make([]float64, len(acc))}
	for i, v := range acc {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			v = 0.5
			if fill != nil {
				v = fill[i]
			}
		}
		c.Prior[i] = AccuracyLogit(v)
	}
	return c
}

// CalibrationCells are out-of-fold predictions: per cell the JE-IRT logit
// Z, the model's accuracy logit S (AccuracyLogit of its accuracy on the
// fold's training cells) and the observed score Y in [0, 1].
type CalibrationCells struct {
	Z, S, Y []float64
}

func (c *CalibrationCells) add(z, s, y float64) {
	c.Z, c.S, c.Y = append(c.Z, z), append(c.S, s), append(c.Y, y)
}

func (c *CalibrationCells) append(o *CalibrationCells) {
	c.Z, c.S, c.Y = append(c.Z, o.Z...), append(c.S, o.S...), append(c.Y, o.Y...)
}

// LogLoss is the mean binary cross-entropy of the cells under weights w
// (checkpoint.Identity: the map's own P).
func (c *CalibrationCells) LogLoss(w checkpoint.Calibration) float64 {
	var sum float64
	for k, z := range c.Z {
		sum += model.BCE(w.Logit(z, c.S[k]), c.Y[k])
	}
	return sum / float64(len(c.Z))
}

// FitCalibration fits the weights (a, b, c) of Calibration to the cells by
// maximum likelihood (a logistic regression on z and s with an intercept),
// by Newton's method with step halving; a ridge of 1e-6 keeps the Hessian
// invertible when a score is constant. It stops when the mean gradient is
// below 1e-12, a step moves the weights by less than 1e-10 or no step
// lowers the loss (at most 100 steps), and fails on fewer than 10 cells.
func FitCalibration(c *CalibrationCells) (checkpoint.Calibration, error) {
	n := len(c.Z)
	if n < 10 {
		return checkpoint.Calibration{}, fmt.Errorf("route: %d out-of-fold predictions are too few to calibrate on", n)
	}
	const dim, ridge = 3, 1e-6
	x := func(k int, v []float64) { v[0], v[1], v[2] = c.Z[k], c.S[k], 1 }
	v := make([]float64, dim)
	loss := func(w []float64) float64 {
		var s float64
		for k := 0; k < n; k++ {
			x(k, v)
			s += model.BCE(dotf(w, v), c.Y[k])
		}
		return s/float64(n) + 0.5*ridge*dotf(w, w)
	}
	w := []float64{1, 0, 0} // start at the map's own P
	cur := loss(w)
	g, step, next := make([]float64, dim), make([]float64, dim), make([]float64, dim)
	h := make([]float64, dim*dim) // row-major
	for it := 0; it < 100; it++ {
		clear(g)
		clear(h)
		for k := 0; k < n; k++ {
			x(k, v)
			p := model.Sigmoid(dotf(w, v))
			r, s := p-c.Y[k], p*(1-p)
			for a := range v {
				g[a] += r * v[a]
				for b := range v {
					h[a*dim+b] += s * v[a] * v[b]
				}
			}
		}
		gmax := 0.0
		for a := range g {
			g[a] = g[a]/float64(n) + ridge*w[a]
			gmax = math.Max(gmax, math.Abs(g[a]))
			for b := 0; b < dim; b++ {
				h[a*dim+b] /= float64(n)
			}
			h[a*dim+a] += ridge
		}
		if gmax < 1e-12 {
			break
		}
		copy(step, g)
		if !backend.CholSolve(h, step, dim) {
			return checkpoint.Calibration{}, fmt.Errorf("route: the calibration's Hessian is not positive definite")
		}
		// Near the optimum the loss changes by less than its rounding:
		// there the full Newton step is taken on the gradient's word.
		near := gmax < 1e-6
		t, nl := 1.0, 0.0
		for half := 0; half < 30; half++ {
			for a := range next {
				next[a] = w[a] - t*step[a]
			}
			if nl = loss(next); nl <= cur || near && t == 1 {
				break
			}
			t /= 2
		}
		if !(nl <= cur) && !(near && t == 1) {
			break // no step lowers the loss: at the optimum to rounding
		}
		moved := 0.0
		for a := range step {
			moved += math.Abs(t * step[a])
		}
		copy(w, next)
		cur = nl
		if moved < 1e-10 {
			break
		}
	}
	out := checkpoint.Calibration{JEIRT: w[0], Accuracy: w[1], Intercept: w[2], Cells: n}
	return out, out.Check()
}

func dotf(a, b []float64) float64 {
	var s float64
	for k := range a {
		s += a[k] * b[k]
	}
	return s
}
