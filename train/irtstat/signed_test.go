package irtstat

import (
	"context"
	"math"
	"testing"

	"github.com/jeirt/jeirt/train/eval"
	"github.com/jeirt/jeirt/train/irt"
	"github.com/jeirt/jeirt/train/irt/irttest"
	"github.com/jeirt/jeirt/train/irt/rotate"
)

func TestSignedFitRecoversNegativeLoading(t *testing.T) {
	r, truth := irttest.SignedTruth(400, 1)
	fit, err := irt.CBMM{Rank: 2, Signed: true, Accelerate: true}.Fit(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	irttest.AssertMonotone(t, "signed", fit.LossHistory)
	if !fit.Signed {
		t.Error("fit.Signed is false")
	}
	// The gauge: θ uncorrelated with sd 1.
	th1, th2 := irttest.Column(fit.Theta, 2, 0), irttest.Column(fit.Theta, 2, 1)
	if c := cov(th1, th2); math.Abs(c) > 1e-9 || math.Abs(cov(th1, th1)-1) > 1e-9 || math.Abs(cov(th2, th2)-1) > 1e-9 {
		t.Errorf("θ covariance not the identity: cov12 %g var1 %g var2 %g", c, cov(th1, th1), cov(th2, th2))
	}
	for d := 0; d < 2; d++ {
		rho := eval.Spearman(irttest.Column(fit.A, 2, d), irttest.Column(truth, 2, d))
		t.Logf("dimension %d: Spearman(fitted, true loadings) = %.4f", d+1, rho)
		if rho < 0.9 {
			t.Errorf("dimension %d: Spearman %.4f < 0.9", d+1, rho)
		}
	}
	an := Analyze(r, fit, AnalysisOptions{})
	for _, g := range an.GroupLoadings {
		t.Logf("group %s: mean loading %.3f", g.Group, g.MeanLoading)
		if g.Group == "gamma" && !(g.MeanLoading[1] < -0.3) {
			t.Errorf("gamma's mean loading on dimension 2 is %.3f, want clearly negative", g.MeanLoading[1])
		}
		if g.Group != "gamma" && g.MeanLoading[1] < 0 && g.MeanLoading[0] < 0 {
			t.Errorf("group %s loads negatively: %v", g.Group, g.MeanLoading)
		}
	}
	neg := 0
	for j := 80; j < 120; j++ {
		if fit.A[j*2+1] < 0 {
			neg++
		}
	}
	if neg < 36 {
		t.Errorf("only %d of gamma's 40 items load negatively on dimension 2", neg)
	}

	// The constrained fit cannot express it: every loading stays ≥ 0.
	pos, err := irt.CBMM{Rank: 2, Accelerate: true}.Fit(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range pos.A {
		if a < 0 {
			t.Fatalf("constrained fit has a negative loading %g", a)
		}
	}
	if l1, l0 := fit.LossHistory[len(fit.LossHistory)-1], pos.LossHistory[len(pos.LossHistory)-1]; !(l1 < l0) {
		t.Errorf("signed loss %.6g not below the constrained loss %.6g", l1, l0)
	}
}

func TestSignedNeedsRank2(t *testing.T) {
	r, _ := irttest.SignedTruth(20, 2)
	if _, err := (irt.CBMM{Signed: true}).Fit(context.Background(), r); err == nil {
		t.Error("signed rank-1 fit: no error")
	}
}

// SignedGauge keeps X and is idempotent.
func TestSignedGaugeKeepsLogits(t *testing.T) {
	r, _ := irttest.SignedTruth(50, 3)
	fit, err := irt.CBMM{Rank: 2, Signed: true, MaxIter: 30}.Fit(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	before := make([]float64, 0, 50*120)
	for i := range fit.Models {
		for j := range fit.Items {
			before = append(before, fit.Logit(i, j))
		}
	}
	// Scramble the gauge by an oblique map, then restore it.
	for i := range fit.Models {
		t1, t2 := fit.Theta[i*2], fit.Theta[i*2+1]
		fit.Theta[i*2], fit.Theta[i*2+1] = 2*t1+0.5*t2+1, -t1+t2
	}
	// θ' = θM + c with M = [[2, -1], [0.5, 1]], c = (1, 0): a' = M⁻¹a, b' = b − c·a'.
	det := 2*1 - (-1)*0.5
	for j := range fit.Items {
		a1, a2 := fit.A[j*2], fit.A[j*2+1]
		n1, n2 := (a1+a2)/det, (-0.5*a1+2*a2)/det
		fit.A[j*2], fit.A[j*2+1] = n1, n2
		fit.B[j] -= n1 * 1
	}
	rotate.SignedGauge(fit)
	k := 0
	for i := range fit.Models {
		for j := range fit.Items {
			if d := math.Abs(fit.Logit(i, j) - before[k]); d > 1e-9 {
				t.Fatalf("logit (%d, %d) moved by %g", i, j, d)
			}
			k++
		}
	}
}

func cov(x, y []float64) float64 {
	mx, my := 0.0, 0.0
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= float64(len(x))
	my /= float64(len(y))
	s := 0.0
	for i := range x {
		s += (x[i] - mx) * (y[i] - my)
	}
	return s / float64(len(x))
}
