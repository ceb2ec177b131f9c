package backend

import (
	"math"
	"slices"
	"testing"
)

// TestCBMMControl walks the control through a fit: the first step kept
// without extrapolation, extrapolations with β growing by 1.25 up to 2, a
// rejected one halving β, and convergence.
func TestCBMMControl(t *testing.T) {
	type step struct {
		loss     float64
		want     CBMMOutcome
		beta     float64 // β after the step
		stepBeta float64
		iters    int
	}
	for _, tc := range []struct {
		name       string
		accelerate bool
		tol        float64
		steps      []step
	}{
		{"accelerate", true, 1e-6, []step{
			{100, CBMMAccepted, 1, 0, 1},
			{90, CBMMExtrapolated, 1.25, 1, 2},
			{80, CBMMExtrapolated, 1.5625, 1.25, 3},
			{85, CBMMRejected, 0.78125, 1.25, 3}, // above 80: back to M(θ)
			{79, CBMMExtrapolated, 0.9765625, 0.78125, 4},
			{78, CBMMExtrapolated, 1.220703125, 0.9765625, 5},
			{78 - 78e-7, CBMMConverged, 1.220703125, 0.9765625, 6},
		}},
		{"plain", false, 1e-3, []step{
			{100, CBMMAccepted, 1, 0, 1},
			{101, CBMMAccepted, 1, 0, 2}, // never rejected without acceleration
			{100.95, CBMMConverged, 1, 0, 3},
		}},
		{"nan", true, 1e-6, []step{
			{100, CBMMAccepted, 1, 0, 1},
			{math.NaN(), CBMMExtrapolated, 1.25, 1, 2}, // kept: the caller reports it
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewCBMMControl()
			for i, st := range tc.steps {
				got := s.Next(st.loss, tc.tol, tc.accelerate)
				if got != st.want || s.Beta != st.beta || s.StepBeta != st.stepBeta || s.Iters != st.iters {
					t.Fatalf("step %d (loss %v): %d, β %v, step β %v, %d kept; want %d, %v, %v, %d",
						i, st.loss, got, s.Beta, s.StepBeta, s.Iters, st.want, st.beta, st.stepBeta, st.iters)
				}
			}
		})
	}
}

func TestExtrapolate(t *testing.T) {
	prev, cur := []float64{1, 2, 0.5}, []float64{2, 1, 0.1}
	Extrapolate(prev, cur, 2, true)
	if want := []float64{4, 0, 0}; !slices.Equal(prev, want) { // 1 + 2(1 − 2) = −1 clipped
		t.Errorf("clipped: %v, want %v", prev, want)
	}
	prev = []float64{1, 2, 0.5}
	Extrapolate(prev, cur, 0.5, false)
	if want := []float64{2.5, 0.5, 0.1 + 0.5*(0.1-0.5)}; !slices.Equal(prev, want) {
		t.Errorf("%v, want %v", prev, want)
	}
}
