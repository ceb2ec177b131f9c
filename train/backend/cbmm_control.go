package backend

import (
	"context"
	"math"
)

// CBMMOutcome is what the fit does with one problem after an MM step: the
// decision of CBMMControl.Next. The values are the ones a device writes (bit
// 0 set: the step is kept).
type CBMMOutcome uint8

const (
	// CBMMIdle: the problem was not stepped (not active).
	CBMMIdle CBMMOutcome = 0
	// CBMMAccepted: the step is kept and the next one starts from its MM
	// point M(θ) (no extrapolation: the first iteration, or Accelerate off).
	CBMMAccepted CBMMOutcome = 1
	// CBMMRejected: the step started from an extrapolated point whose loss
	// is above the last kept one; the problem returns to the MM point of the
	// step before, M(θ), and the step does not count.
	CBMMRejected CBMMOutcome = 2
	// CBMMExtrapolated: the step is kept and the problem moves on to
	// M(θ) + β(M(θ) − θ), with β = StepBeta (A clipped at 0).
	CBMMExtrapolated CBMMOutcome = 3
	// CBMMConverged: the step is kept and the relative change of the loss is
	// within the tolerance; the problem stops at its MM point.
	CBMMConverged CBMMOutcome = 5
)

// CBMMControl is one problem's state between the MM steps of a fit: the
// convergence test and the safeguarded extrapolation (an over-relaxed MM
// step, θ ← M(θ) + β(M(θ) − θ), kept only when the loss does not increase,
// with β grown by 1.25 after each kept extrapolation up to 2 and halved,
// down to 1/4, after each rejected one). train/irt's driver runs it on the
// host; a CBMMIterator runs the same arithmetic on its device.
type CBMMControl struct {
	Last         float64 // ℓ at the start of the last kept step (+Inf before the first)
	Beta         float64 // β of the next extrapolation
	StepBeta     float64 // β of the last extrapolation
	Iters        int     // kept steps
	Extrapolated bool    // the next step starts from an extrapolated point
}

// NewCBMMControl returns the state before the first step: no loss yet, β = 1.
func NewCBMMControl() CBMMControl { return CBMMControl{Last: math.Inf(1), Beta: 1} }

// Next decides, from the loss at the point the step just taken started from,
// what happens to the problem, and updates the state. The loss is compared
// with the last kept one only, so a NaN or infinite loss is kept (not
// rejected) unless it follows an extrapolation; the caller reports it.
func (s *CBMMControl) Next(loss, tol float64, accelerate bool) CBMMOutcome {
	if accelerate && s.Extrapolated && loss > s.Last {
		s.Extrapolated = false
		s.Beta = math.Max(s.Beta/2, 0.25)
		return CBMMRejected
	}
	prev := s.Last
	s.Last = loss
	s.Iters++
	if s.Iters >= 2 && math.Abs(prev-loss) <= tol*math.Abs(prev) {
		return CBMMConverged
	}
	if !accelerate {
		return CBMMAccepted
	}
	if s.Iters < 2 {
		s.Extrapolated = false
		return CBMMAccepted
	}
	s.StepBeta = s.Beta
	s.Extrapolated = true
	s.Beta = math.Min(s.Beta*1.25, 2)
	return CBMMExtrapolated
}

// Extrapolate overwrites prev, the point an MM step started from, with
// cur + β(cur − prev), cur being the step's MM point; with clip, negative
// values become 0 (the loadings A ≥ 0).
func Extrapolate(prev, cur []float64, beta float64, clip bool) {
	for i, v := range cur {
		x := v + beta*(v-prev[i])
		if clip && x < 0 {
			x = 0
		}
		prev[i] = x
	}
}

// CBMMIterator is implemented by a CBMMBatch that runs a whole iteration of
// the fit on its device, so that the parameters never cross to the host
// between the first Set and the last Get: the MM step, each active problem's
// CBMMControl.Next (its state starts at NewCBMMControl when the batch is
// loaded) and the outcome applied (the extrapolation, or the return to M(θ)).
type CBMMIterator interface {
	// Iterate performs Step on every problem k with active[k], decides with
	// CBMMControl.Next(loss[k], tol, accelerate) and applies the outcome,
	// which it writes to outcome[k]. A problem that converges is no longer
	// stepped by the next Iterate (the caller clears active[k]).
	Iterate(ctx context.Context, active []bool, tol float64, accelerate bool, loss []float64, outcome []CBMMOutcome) error
	// Revert returns problem k from an extrapolated point to the MM point
	// M(θ) it was extrapolated from.
	Revert(k int) error
}
