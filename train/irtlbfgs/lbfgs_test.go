package irtlbfgs

import (
	"context"
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/irt"
	"github.com/jeirt/jeirt/train/irt/irttest"
)

// TestCheck: what lbfgs cannot fit (another rank or family, cells of
// several trials) is one model.FieldError on Method, with its exact message,
// from irt.Spec.Validate once this package is linked.
func TestCheck(t *testing.T) {
	ok := irt.Spec{CBMM: irt.CBMM{Sigma: 1, Rank: 1, MaxIter: 10}}
	weighted, _ := irttest.Gen(t, synth.Options{Kind: string(model.TwoPL), Models: 6, Items: 8, Trials: 3, Seed: 1})
	for _, tc := range []struct {
		name  string
		edit  func(*irt.Spec)
		r     *model.Responses
		field string
		msg   string
	}{
		{"lbfgs rank", func(s *irt.Spec) { s.Method, s.CBMM.Rank = irt.MethodLBFGS, 2 }, nil, "Method", "method lbfgs fits rank 1 only (got rank 2)"},
		{"lbfgs family", func(s *irt.Spec) { s.Method, s.CBMM.Model = irt.MethodLBFGS, model.ThreePL }, nil, "Method", "method lbfgs fits the 2PL only (got model 3pl; use method cbmm)"},
		{"lbfgs weighted", func(s *irt.Spec) { s.Method = irt.MethodLBFGS }, weighted, "Method", "method lbfgs fits 0/1 answers only; this file has cells of several trials or graded scores (use method cbmm)"},
	} {
		s := ok
		tc.edit(&s)
		err := s.Validate(tc.r)
		var fe *model.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field || err.Error() != tc.msg {
			t.Errorf("%s: got %v, want %s: %q", tc.name, err, tc.field, tc.msg)
		}
	}
	s := ok
	s.Method = irt.MethodLBFGS
	if err := s.Validate(nil); err != nil {
		t.Errorf("lbfgs rank 1 2pl refused: %v", err)
	}
}

// TestRegistry: linking this package registers lbfgs, joint.
func TestRegistry(t *testing.T) {
	if f := irt.Lookup(irt.MethodLBFGS); f == nil || !f.Joint() || !irt.MethodLBFGS.Joint() {
		t.Errorf("%s: fitter %v", irt.MethodLBFGS, f)
	}
}

// TestFitterMatchesLBFGS2PL: the registered fitter gives what LBFGS2PL
// gives itself, bit for bit, and a problem's own iteration cap holds.
func TestFitterMatchesLBFGS2PL(t *testing.T) {
	r, _ := irttest.Gen(t, synth.Options{Kind: string(model.TwoPL), Models: 20, Items: 30, Seed: 3})
	ctx := context.Background()
	s := irt.Spec{CBMM: irt.CBMM{Sigma: 1, Rank: 1, MaxIter: 200, Threads: 1, Prior: model.DefaultPrior}}
	gotL, err := irt.Lookup(irt.MethodLBFGS).Fit(ctx, s, []irt.Problem{{R: r}, {R: r, MaxIter: 3}})
	if err != nil {
		t.Fatal(err)
	}
	wantL, err := LBFGS2PL{Sigma: 1, MaxIter: 200, Threads: 1, Prior: model.DefaultPrior}.Fit(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotL[0].Fit.B, wantL.B) || !reflect.DeepEqual(gotL[0].Fit.LossHistory, wantL.LossHistory) {
		t.Errorf("lbfgs fitter differs from LBFGS2PL.Fit")
	}
	if n := gotL[1].Fit.Iterations; n > 3 || n < 1 {
		t.Errorf("lbfgs with a cap of 3: %d iterations", n)
	}
}

// TestPriorObjective (train/irt's, moved here with LBFGS2PL) checks that cBMM under a prior minimises the
// documented negative log posterior: the loss it reports is that formula at
// the returned parameters, the loss never rises, and an independent
// optimiser (gonum's L-BFGS on the same formula's gradient) reaches the same
// optimum.
func TestPriorObjective(t *testing.T) {
	r, _ := irttest.Gen(t, synth.Options{Kind: "2pl", Models: 40, Items: 120, Missing: 0.2, Seed: 5})
	for _, sigma := range []float64{1, 1.7} {
		p := model.Prior{Theta: 1, A: 0.8, AMean: 1, D: 2.5, DMean: -0.3}
		f, err := irt.CBMM{Prior: p, Sigma: sigma, Tol: 1e-12, MaxIter: 20000, Accelerate: true}.Fit(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		irttest.AssertMonotone(t, "prior", f.LossHistory)
		got, want := f.LossHistory[len(f.LossHistory)-1], irttest.NegLogPosterior(r, f, p)
		if math.Abs(got-want) > 1e-9*want {
			t.Errorf("σ %g: reported loss %.12g, the negative log posterior at the fit %.12g", sigma, got, want)
		}
		l, err := LBFGS2PL{Prior: p, Sigma: sigma, Tol: 1e-14, MaxIter: 20000}.Fit(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		lw := irttest.NegLogPosterior(r, l, p)
		maxDiff := 0.0
		for i := range f.Models {
			for j := range f.Items {
				maxDiff = math.Max(maxDiff, math.Abs(f.Prob(i, j)-l.Prob(i, j)))
			}
		}
		t.Logf("σ %g: cBMM %d iterations, posterior %.10f; L-BFGS %.10f; largest |ΔP| %.2g", sigma, f.Iterations, want, lw, maxDiff)
		if math.Abs(want-lw) > 1e-7*want || maxDiff > 1e-3 {
			t.Errorf("σ %g: cBMM's optimum %.10f and L-BFGS's %.10f differ (largest |ΔP| %.3g)", sigma, want, lw, maxDiff)
		}
	}
}
