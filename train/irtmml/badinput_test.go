package irtmml

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/train/irt/irttest"
)

// On perfectly separating data MML's discriminations run off; Fit used to
// report convergence with a loss of 1e149. It must fail or return a finite
// fit whose loss did not grow.
func TestMMLDivergenceDetected(t *testing.T) {
	fit, err := MML2PL{}.Fit(context.Background(), irttest.Guttman(40, 15))
	if err != nil {
		if !strings.Contains(err.Error(), "diverged") {
			t.Errorf("error does not say diverged: %v", err)
		}
		return
	}
	h := fit.LossHistory
	last := h[len(h)-1]
	if math.IsNaN(last) || math.IsInf(last, 0) || last > h[0]*1.01 {
		t.Errorf("loss went from %v to %v, converged %v", h[0], last, fit.Converged)
	}
	for j, a := range fit.A {
		if math.IsNaN(a) || math.IsInf(a, 0) || math.IsNaN(fit.B[j]) || math.IsInf(fit.B[j], 0) {
			t.Errorf("item %d: a %v b %v", j, a, fit.B[j])
		}
	}
}

// On SWE-bench Verified (LLM-shaped: few models, many items, many items
// solved by none or all) MML diverged to a loss near 1e148 and reported
// convergence; later it stopped with "diverged" (its Newton M step could
// overshoot, so EM rose). With the M step safeguarded EM never rises: the
// fit is finite, its marginal loss never increased, and it is not called
// converged while the items solved by a few models still run off.
func TestMMLDivergesOnSWEBench(t *testing.T) {
	r, _, err := read.File("../../configs/data/swebench-verified/response_matrix.csv", read.Options{NoCache: true})
	if err != nil {
		t.Skip(err)
	}
	fit, err := MML2PL{MaxIter: 40}.Fit(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	h := fit.LossHistory
	irttest.AssertMonotone(t, "mml", h)
	if fit.Converged {
		t.Errorf("converged after %d iterations, loss %v -> %v", fit.Iterations, h[0], h[len(h)-1])
	}
	for j, a := range fit.A {
		if math.IsNaN(a) || math.IsInf(a, 0) || math.IsNaN(fit.B[j]) || math.IsInf(fit.B[j], 0) {
			t.Fatalf("item %d: a %v b %v", j, a, fit.B[j])
		}
	}
}
