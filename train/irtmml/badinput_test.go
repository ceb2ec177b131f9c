package irtmml

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/train/irt/irttest"
)

// On perfectly separating data (a Guttman matrix: model i solves item j
// exactly when i > 2j) MML's discriminations run off; Fit used to report
// convergence with a loss of 1e149. The divergence must be detected: Fit
// fails with "diverged", or returns a finite fit, its marginal loss never
// rising, that is not called converged and says why, while its
// discriminations show the run-off (some |a| above 10; the first five
// items' a were 15 to 66 after 50 iterations, 26 to 195 after 5,000):
// 100 EM iterations show it.
func TestMMLDivergenceDetected(t *testing.T) {
	fit, err := MML2PL{MaxIter: 100}.Fit(context.Background(), irttest.Guttman(40, 15))
	if err != nil {
		if !strings.Contains(err.Error(), "diverged") {
			t.Errorf("error does not say diverged: %v", err)
		}
		return
	}
	irttest.AssertMonotone(t, "mml", fit.LossHistory)
	if fit.Converged || fit.Note == "" {
		t.Errorf("on separating data: converged %v after %d iterations, note %q", fit.Converged, fit.Iterations, fit.Note)
	}
	maxA := 0.0
	for j, a := range fit.A {
		if math.IsNaN(a) || math.IsInf(a, 0) || math.IsNaN(fit.B[j]) || math.IsInf(fit.B[j], 0) {
			t.Errorf("item %d: a %v b %v", j, a, fit.B[j])
		}
		maxA = math.Max(maxA, math.Abs(a))
	}
	if !(maxA > 10) {
		t.Errorf("max |a| %.3g: the discriminations did not run off, so this data no longer tests divergence", maxA)
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
