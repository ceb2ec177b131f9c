package irt

import "fmt"

// Method names a fitter of this package, as settings.method and --method
// spell it: the one owner of the method names.
type Method string

const (
	// MethodCBMM is joint maximum likelihood (or MAP) by cBMM (CBMM).
	MethodCBMM Method = "cbmm"
	// MethodLBFGS is cBMM's objective by gonum's L-BFGS (LBFGS2PL: the
	// rank-1 2PL).
	MethodLBFGS Method = "lbfgs"
	// MethodMML is marginal maximum likelihood by EM (MML2PL: the rank-1 2PL).
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
// items (cbmm, lbfgs), rather than integrating θ out (mml).
func (m Method) Joint() bool { return m == MethodCBMM || m == MethodLBFGS }
