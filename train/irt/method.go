package irt

import (
	"context"
	"fmt"

	"github.com/jeirt/jeirt/model"
)

// Method names a fitting method, as settings.method and --method spell it:
// the one owner of the method names. Each method's Fitter lives in a file
// of its own and registers itself under its name (Register).
type Method string

const (
	// MethodCBMM is joint maximum likelihood (or MAP) by cBMM (CBMM).
	MethodCBMM Method = "cbmm"
	// MethodLBFGS is cBMM's objective by gonum's L-BFGS (irtlbfgs.LBFGS2PL:
	// the rank-1 2PL).
	MethodLBFGS Method = "lbfgs"
	// MethodMML is marginal maximum likelihood by EM (irtmml.MML2PL: the
	// rank-1 2PL).
	MethodMML Method = "mml"
)

// Methods are the fitting methods, in the order messages list them.
var Methods = []Method{MethodCBMM, MethodLBFGS, MethodMML}

// ParseMethod returns the method named s; any other name (the empty one
// too) is an error that lists the allowed ones.
func ParseMethod(s string) (Method, error) {
	for _, m := range Methods {
		if s == string(m) {
			return m, nil
		}
	}
	return "", fmt.Errorf("method %q: want %s", s, MethodNames(Methods...))
}

// MethodNames spells methods for messages: "cbmm, lbfgs or mml".
func MethodNames(ms ...Method) string {
	s := ""
	for k, m := range ms {
		switch {
		case k == 0:
		case k == len(ms)-1:
			s += " or "
		default:
			s += ", "
		}
		s += string(m)
	}
	return s
}

// Joint reports whether the method estimates every θ jointly with the
// items (cbmm, lbfgs), rather than integrating θ out (mml): its Fitter's
// Joint ("" is MethodCBMM), false for a method not linked into the
// program.
func (m Method) Joint() bool {
	if m == "" {
		m = MethodCBMM
	}
	f := Lookup(m)
	return f != nil && f.Joint()
}

// A Fitter is a fitting method, as gonum's optimize.Method is an
// optimiser: train/irtguard runs any of them, each from as many starts as
// it needs. A method is one file that implements Fitter and registers it
// (Register, in an init function; ollama's model.Register is the same
// idea): cbmm.go's CBMM in this package (method_cbmm.go), irtlbfgs's
// LBFGS2PL in train/irtlbfgs and irtmml's MML2PL in train/irtmml, which
// the guard imports for them.
type Fitter interface {
	// Joint reports whether the method estimates every θ with the items
	// (the guard then runs it from several starts, one the nested fit, and
	// certifies each end) or integrates θ out (fitted once, its own
	// certificate in Fitted.Certificate).
	Joint() bool
	// Check refuses what s asks that the method cannot fit (a family, a
	// rank, σ), and with r (nil: the settings alone) what it cannot fit
	// of those responses, as a model.FieldError.
	Check(s Spec, r *model.Responses) error
	// Fit fits each problem under s (its tolerance and cap, s.CBMM.Trace
	// with the problem's index, and s.CBMM.Watch where the method can stop
	// a problem mid-run).
	Fit(ctx context.Context, s Spec, ps []Problem) ([]Fitted, error)
}

// Problem is one fit of a batch: responses, where it starts (nil: the
// method's own start) and its iteration cap (0: s.CBMM.MaxIter; a method
// that runs its batch in one loop stops every problem at the smallest).
type Problem struct {
	R       *model.Responses
	From    *model.IRT
	MaxIter int
}

// Fitted is one fitted problem: the fit, and the certificate of a method
// that certifies its own fits (nil for a joint one, which the guard
// certifies).
type Fitted struct {
	Fit         *model.IRT
	Certificate *Certificate
}

// Certificate is a method's own first-order certificate (irtmml's): the
// largest gradient per answer, where it is, and the tolerance converged
// was judged by.
type Certificate struct {
	MaxGradient float64
	Where       string
	GradTol     float64
}

var fitters = map[Method]Fitter{}

// Register makes f the fitter of method m, once per method (a second
// registration panics: two files claim one name); m must be one of Methods.
func Register(m Method, f Fitter) {
	if _, err := ParseMethod(string(m)); err != nil {
		panic("irt.Register: " + err.Error())
	}
	if _, dup := fitters[m]; dup {
		panic(fmt.Sprintf("irt.Register: method %s registered twice", m))
	}
	fitters[m] = f
}

// Lookup is the fitter registered for m, nil when none is.
func Lookup(m Method) Fitter { return fitters[m] }

// CheckRank1TwoPL refuses what the rank-1 2PL methods (lbfgs, mml) cannot
// fit: another rank or family, signed loadings, cells that are not one 0/1
// answer (the Check of train/irtlbfgs and of train/irtmml).
func CheckRank1TwoPL(s Spec, r *model.Responses) error {
	c := s.CBMM
	switch {
	case c.Rank != 1:
		return model.FieldErrorf("Method", "{Method} %s fits rank 1 only (got {Rank} %d)", s.Method, c.Rank)
	case c.Model != model.TwoPL && c.Model != "":
		return model.FieldErrorf("Method", "{Method} %s fits the 2PL only (got {Model} %s; use {Method} %s)", s.Method, c.Model, MethodCBMM)
	case c.Signed:
		return model.FieldErrorf("Signed", "{Signed} needs {Method} %s and {Rank} 2 or more (got {Method} %s {Rank} %d)", MethodCBMM, s.Method, c.Rank)
	case r != nil && r.Weighted():
		return model.FieldErrorf("Method", "{Method} %s fits 0/1 answers only; this file has cells of several trials or graded scores (use {Method} %s)", s.Method, MethodCBMM)
	}
	return nil
}
