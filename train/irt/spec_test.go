package irt

import (
	"context"
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/irt/irttest"
)

// TestSpecValidate: each fault of a specification is one model.FieldError
// on the field at fault, with its exact message; methods this package does
// not link (lbfgs, mml) are refused by name (lbfgs's own faults are
// train/irtlbfgs's TestCheck).
func TestSpecValidate(t *testing.T) {
	ok := Spec{CBMM: CBMM{Sigma: 1, Rank: 1, MaxIter: 10}}
	if err := ok.Validate(nil); err != nil {
		t.Fatalf("valid spec refused: %v", err)
	}
	weighted, _ := irttest.Gen(t, synth.Options{Kind: string(model.TwoPL), Models: 6, Items: 8, Trials: 3, Seed: 1})
	for _, tc := range []struct {
		name  string
		edit  func(*Spec)
		r     *model.Responses
		field string
		msg   string
	}{
		{"rank", func(s *Spec) { s.CBMM.Rank = 0 }, nil, "Rank", "rank 0: must be at least 1"},
		{"sigma", func(s *Spec) { s.CBMM.Sigma = math.NaN() }, nil, "Sigma", "sigma NaN: must be positive"},
		{"tol", func(s *Spec) { s.CBMM.Tol = -1 }, nil, "Tol", "tol -1: must not be negative"},
		{"grad tol", func(s *Spec) { s.GradTol = math.Inf(1) }, nil, "GradTol", "grad-tol +Inf: must be finite and not negative (0: the default)"},
		{"method", func(s *Spec) { s.Method = "em" }, nil, "Method", `method "em": want cbmm, lbfgs or mml`},
		{"unlinked method", func(s *Spec) { s.Method = MethodMML }, nil, "Method", `method "mml": want cbmm, lbfgs or mml`},
		{"unlinked lbfgs", func(s *Spec) { s.Method = MethodLBFGS }, nil, "Method", `method "lbfgs": want cbmm, lbfgs or mml`},
		{"family", func(s *Spec) { s.CBMM.Model = "4pl" }, nil, "Model", `model "4pl": want 1pl, 2pl or 3pl`},
		{"signed rank 1", func(s *Spec) { s.CBMM.Signed = true }, nil, "Signed", "signed needs method cbmm and rank 2 or more (got method cbmm rank 1)"},
		{"1pl rank", func(s *Spec) { s.CBMM.Model, s.CBMM.Rank = model.OnePL, 2 }, nil, "Model", "model 1pl is unidimensional (one common discrimination): it needs rank 1 (got rank 2)"},
		{"guess", func(s *Spec) { s.CBMM.Guess = 0.25 }, nil, "Guess", "guess 0.25: lower asymptotes need model 3pl"},
		{"guess prior", func(s *Spec) { s.CBMM.Model, s.CBMM.GuessPrior = model.ThreePL, [2]float64{0.5, 2} }, nil, "GuessPrior", "guess-prior [0.5 2]: want two numbers α,β of at least 1 (1,1: no prior)"},
		{"max iter", func(s *Spec) { s.CBMM.MaxIter = 0 }, nil, "MaxIter", "max-iter 0: must be at least 1"},
	} {
		s := ok
		tc.edit(&s)
		err := s.Validate(tc.r)
		var fe *model.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field || err.Error() != tc.msg {
			t.Errorf("%s: got %v, want %s: %q", tc.name, err, tc.field, tc.msg)
		}
	}
	// The weighted data are refused only by the method that cannot fit them.
	if err := ok.Validate(weighted); err != nil {
		t.Errorf("cbmm on weighted data: %v", err)
	}
}

// TestRegistry: cbmm registers itself here, joint (lbfgs is
// train/irtlbfgs's, not linked here); a second registration of a name, or
// a name that is no method, panics.
func TestRegistry(t *testing.T) {
	if f := Lookup(MethodCBMM); f == nil || !f.Joint() {
		t.Errorf("%s: fitter %v", MethodCBMM, f)
	}
	if f := Lookup(MethodLBFGS); f != nil {
		t.Errorf("%s: fitter %v in a program that does not link train/irtlbfgs", MethodLBFGS, f)
	}
	if (Spec{}).Fitter() != Lookup(MethodCBMM) || !Method("").Joint() {
		t.Error(`the empty method is not cbmm`)
	}
	for _, m := range []Method{MethodCBMM, "em"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%q) did not panic", m)
				}
			}()
			Register(m, cbmmFitter{})
		}()
	}
}

// TestFittersMatchTheirTypes: the registered fitter gives what CBMM gives
// itself, bit for bit, and a problem's own iteration cap holds (cbmm stops
// its batch at the smallest; lbfgs's is train/irtlbfgs's test).
func TestFittersMatchTheirTypes(t *testing.T) {
	r, _ := irttest.Gen(t, synth.Options{Kind: string(model.TwoPL), Models: 20, Items: 30, Seed: 3})
	ctx := context.Background()
	s := Spec{CBMM: CBMM{Sigma: 1, Rank: 1, MaxIter: 200, Threads: 1, Prior: model.DefaultPrior}}
	got, err := Lookup(MethodCBMM).Fit(ctx, s, []Problem{{R: r}})
	if err != nil {
		t.Fatal(err)
	}
	want, err := s.CBMM.Fit(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got[0].Fit.Theta, want.Theta) || !reflect.DeepEqual(got[0].Fit.A, want.A) || got[0].Certificate != nil {
		t.Errorf("cbmm fitter differs from CBMM.Fit")
	}
	capped, err := Lookup(MethodCBMM).Fit(ctx, s, []Problem{{R: r}, {R: r, MaxIter: 5}})
	if err != nil {
		t.Fatal(err)
	}
	for k, f := range capped {
		if f.Fit.Iterations != 5 {
			t.Errorf("cbmm batch problem %d: %d iterations, want 5 (the smallest cap)", k, f.Fit.Iterations)
		}
	}
}
