package eval

import (
	"context"
	"math"

	"github.com/jeirt/jeirt/model"
)

// fitLoop is the training loop the learned baselines (MF, NCF) share:
// full-batch Adam (Kingma and Ba 2015, Algorithm 1, β1 0.9, β2 0.999,
// ε 1e-8) on one flat parameter vector, with early stopping on the
// validation loss, checked every checkEvery steps: after patience checks
// without a lower validation loss it stops and the best checked parameters
// are kept (the last ones without validation cells).
type fitLoop struct {
	LR       float64
	MaxSteps int
	Patience int // checks without improvement
}

const checkEvery = 5

// cellTargets are the fractions y = k/n and weights n/Σn of a Responses'
// cells (the label and 1/len for 0/1 answers): the loss of every learned
// baseline is Σ w·BCE(z, y), the mean binomial log-likelihood per trial.
func cellTargets(r *model.Responses) (y, w []float64) {
	y, w = make([]float64, r.Len()), make([]float64, r.Len())
	var total float64
	for c := range y {
		n := float64(r.TrialsAt(c))
		y[c], w[c] = r.SuccessesAt(c)/n, n
		total += n
	}
	for c := range w {
		w[c] /= total
	}
	return y, w
}

// run minimises loss from theta, in place. loss(theta, grad) returns the
// training loss and writes its gradient into grad; val(theta) returns the
// validation loss, NaN without validation cells. It returns the steps run
// and the best validation loss (NaN without one).
func (f fitLoop) run(ctx context.Context, theta []float64, loss func(theta, grad []float64) float64, val func(theta []float64) float64) (steps int, best float64, err error) {
	g := make([]float64, len(theta))
	m, v := make([]float64, len(theta)), make([]float64, len(theta))
	keep := append([]float64(nil), theta...)
	best = val(theta)
	bad := 0
	const b1, b2, eps = 0.9, 0.999, 1e-8
	for steps < f.MaxSteps {
		if err := ctx.Err(); err != nil {
			return steps, best, err
		}
		loss(theta, g)
		steps++
		c1, c2 := 1-math.Pow(b1, float64(steps)), 1-math.Pow(b2, float64(steps))
		for k, gk := range g {
			m[k] = b1*m[k] + (1-b1)*gk
			v[k] = b2*v[k] + (1-b2)*gk*gk
			theta[k] -= f.LR * (m[k] / c1) / (math.Sqrt(v[k]/c2) + eps)
		}
		if steps%checkEvery != 0 || math.IsNaN(best) {
			continue
		}
		if l := val(theta); l < best {
			best, bad = l, 0
			copy(keep, theta)
		} else if bad++; bad >= f.Patience {
			break
		}
	}
	if !math.IsNaN(best) {
		copy(theta, keep)
	}
	return steps, best, nil
}
