package irt

import (
	"math"

	"github.com/jeirt/jeirt/model"
)

// Spec is one fit's specification: the method that fits, and everything it
// fits with. CBMM holds the model (the family, Model; the rank; σ; the
// prior; the 3PL's guessing: Guess, ItemGuess, GuessPrior) and the
// iteration (Tol, MaxIter, Threads, Accelerate, Signed, Device), which every
// method reads as far as it applies; GradTol is the first-order
// certificate's tolerance. Validate says what no method can fit and what
// the chosen one cannot. Unlike CBMM's, the rank, σ and iteration cap have
// no zero default here: a Spec says what the fit is (model/irtfit.Settings
// converts to one, see cmd/internal/irtrun.SpecOf).
type Spec struct {
	Method Method // "" means MethodCBMM
	CBMM   CBMM
	// GradTol: a converged fit's largest projected gradient per answer;
	// 0 means the fitter's default.
	GradTol float64
}

// withMethod is s with its method set ("" becoming MethodCBMM).
func (s Spec) withMethod() Spec {
	if s.Method == "" {
		s.Method = MethodCBMM
	}
	return s
}

// Fitter is the registered fitter of s's method (Register), nil when none
// is linked into the program.
func (s Spec) Fitter() Fitter { return Lookup(s.withMethod().Method) }

// Validate refuses a specification that cannot be fitted, as a
// model.FieldError on the field at fault (the names of
// model/irtfit.Settings: Rank, Sigma, Model, Method...), and with r (nil:
// no data yet) what the method cannot fit of those responses.
func (s Spec) Validate(r *model.Responses) error {
	s = s.withMethod()
	c := s.CBMM
	fam, famErr := model.ParseFamily(string(c.Model))
	fitter := Lookup(s.Method)
	switch {
	case c.Rank < 1:
		return model.FieldErrorf("Rank", "{Rank} %d: must be at least 1", c.Rank)
	case !(c.Sigma > 0) || math.IsInf(c.Sigma, 0):
		return model.FieldErrorf("Sigma", "{Sigma} %v: must be positive", c.Sigma)
	case !(c.Tol >= 0) || math.IsInf(c.Tol, 0):
		return model.FieldErrorf("Tol", "{Tol} %v: must not be negative", c.Tol)
	case !(s.GradTol >= 0) || math.IsInf(s.GradTol, 0):
		return model.FieldErrorf("GradTol", "{GradTol} %v: must be finite and not negative (0: the default)", s.GradTol)
	case fitter == nil:
		return model.FieldErrorf("Method", "{Method} %q: want %s", s.Method, MethodNames(Methods...))
	case famErr != nil:
		return model.FieldErrorf("Model", "{Model} %q: want %s", c.Model, model.FamilyNames())
	}
	if err := fitter.Check(s, nil); err != nil {
		return err
	}
	switch {
	case fam.CommonSlope() && c.Rank != 1:
		return model.FieldErrorf("Model", "{Model} %s is unidimensional (one common discrimination): it needs {Rank} 1 (got {Rank} %d)", fam, c.Rank)
	case (c.Guess > 0 || c.ItemGuess != nil) && !fam.HasAsymptote():
		return model.FieldErrorf("Guess", "{Guess} %v: lower asymptotes need {Model} %s", c.Guess, model.ThreePL)
	case c.GuessPrior != [2]float64{} && (!(c.GuessPrior[0] >= 1 && c.GuessPrior[1] >= 1) || math.IsInf(c.GuessPrior[0]+c.GuessPrior[1], 0)):
		return model.FieldErrorf("GuessPrior", "{GuessPrior} %v: want two numbers α,β of at least 1 (1,1: no prior)", c.GuessPrior[:])
	case c.MaxIter < 1:
		return model.FieldErrorf("MaxIter", "{MaxIter} %d: must be at least 1", c.MaxIter)
	}
	if r != nil {
		return fitter.Check(s, r)
	}
	return nil
}
