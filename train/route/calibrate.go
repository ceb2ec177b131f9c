package route

import (
	"fmt"
	"math"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
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
	JEIRT, Accuracy, Intercept float64 // a, b, c
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

// Prob is the calibrated P of row i for JE-IRT logit z.
func (c *Calibration) Prob(i int, z float64) float64 {
	return model.Sigmoid(c.JEIRT*z + c.Accuracy*c.Prior[i] + c.Intercept)
}

// NewCalibration is the calibration w with each row's prior from acc (per
// row of M, NaN or −Inf for a model without a training accuracy, which
// then takes fill[i], or 0.5 without fill).
func NewCalibration(w checkpoint.Calibration, acc, fill []float64) *Calibration {
	c := &Calibration{JEIRT: w.JEIRT, Accuracy: w.Accuracy, Intercept: w.Intercept, Prior: make([]float64, len(acc))}
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

// CalibrationOf is the calibration a checkpoint's routing block records,
// its priors from the recorded training accuracies (a model added later
// takes its mean predicted P over the checkpoint's questions), or nil: a
// checkpoint without one routes by the map's P, as before.
func CalibrationOf(ck *checkpoint.Checkpoint) *Calibration {
	rt := ck.Manifest.Routing
	if rt == nil || rt.Calibration == nil {
		return nil
	}
	m := ck.Model
	acc := make([]float64, m.NumModels())
	var fill []float64
	for i, name := range m.Models {
		v, ok := rt.TrainAccuracy[name]
		if !ok {
			v = math.NaN()
			if fill == nil {
				fill = MeanPredictedP(m)
			}
		}
		acc[i] = v
	}
	return NewCalibration(*rt.Calibration, acc, fill)
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

// LogLoss is the mean binary cross-entropy of the cells under weights w
// (w.JEIRT 1 and the rest 0: the map's own P).
func (c *CalibrationCells) LogLoss(w checkpoint.Calibration) float64 {
	var sum float64
	for k, z := range c.Z {
		sum += bce(w.JEIRT*z+w.Accuracy*c.S[k]+w.Intercept, c.Y[k])
	}
	return sum / float64(len(c.Z))
}

// bce is −y·log σ(x) − (1−y)·log(1−σ(x)), computed stably.
func bce(x, y float64) float64 {
	return model.Softplus(x) - y*x
}

// FitCalibration fits the weights (a, b, c) of Calibration to the cells by
// maximum likelihood (a logistic regression on z and s with an intercept),
// by Newton's method with step halving; a ridge of 1e-6 keeps the Hessian
// invertible when a score is constant. It stops when a step moves the
// weights by less than 1e-10 or lowers the loss no more (at most 100
// steps), and fails on fewer than 10 cells.
func FitCalibration(c *CalibrationCells) (checkpoint.Calibration, error) {
	n := len(c.Z)
	if n < 10 {
		return checkpoint.Calibration{}, fmt.Errorf("route: %d out-of-fold predictions are too few to calibrate on", n)
	}
	w := [3]float64{1, 0, 0} // start at the map's own P
	x := func(k int) [3]float64 { return [3]float64{c.Z[k], c.S[k], 1} }
	loss := func(w [3]float64) float64 {
		var s float64
		for k := 0; k < n; k++ {
			v := x(k)
			s += bce(w[0]*v[0]+w[1]*v[1]+w[2], c.Y[k])
		}
		return s/float64(n) + 0.5e-6*(w[0]*w[0]+w[1]*w[1]+w[2]*w[2])
	}
	cur := loss(w)
	for it := 0; it < 100; it++ {
		var g [3]float64
		var h [3][3]float64
		for k := 0; k < n; k++ {
			v := x(k)
			p := model.Sigmoid(w[0]*v[0] + w[1]*v[1] + w[2])
			r, s := p-c.Y[k], p*(1-p)
			for a := 0; a < 3; a++ {
				g[a] += r * v[a]
				for b := 0; b < 3; b++ {
					h[a][b] += s * v[a] * v[b]
				}
			}
		}
		for a := 0; a < 3; a++ {
			g[a] = g[a]/float64(n) + 1e-6*w[a]
			for b := 0; b < 3; b++ {
				h[a][b] /= float64(n)
			}
			h[a][a] += 1e-6
		}
		step, ok := solve3(h, g)
		if !ok {
			return checkpoint.Calibration{}, fmt.Errorf("route: the calibration's Hessian is singular")
		}
		var next [3]float64
		t, nl := 1.0, 0.0
		for half := 0; half < 30; half++ {
			for a := range next {
				next[a] = w[a] - t*step[a]
			}
			if nl = loss(next); nl <= cur {
				break
			}
			t /= 2
		}
		if !(nl <= cur) {
			break // no step lowers the loss: at the optimum to rounding
		}
		done := math.Abs(t*step[0])+math.Abs(t*step[1])+math.Abs(t*step[2]) < 1e-10
		w, cur = next, nl
		if done {
			break
		}
	}
	out := checkpoint.Calibration{JEIRT: w[0], Accuracy: w[1], Intercept: w[2], Cells: n}
	return out, out.Check()
}

// solve3 solves h·x = g for a symmetric 3×3 h by Cramer's rule.
func solve3(h [3][3]float64, g [3]float64) ([3]float64, bool) {
	det := func(m [3][3]float64) float64 {
		return m[0][0]*(m[1][1]*m[2][2]-m[1][2]*m[2][1]) - m[0][1]*(m[1][0]*m[2][2]-m[1][2]*m[2][0]) + m[0][2]*(m[1][0]*m[2][1]-m[1][1]*m[2][0])
	}
	d := det(h)
	if !(math.Abs(d) > 1e-300) {
		return [3]float64{}, false
	}
	var x [3]float64
	for col := 0; col < 3; col++ {
		m := h
		for row := 0; row < 3; row++ {
			m[row][col] = g[row]
		}
		x[col] = det(m) / d
	}
	return x, true
}
