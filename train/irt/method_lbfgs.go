package irt

import (
	"context"

	"github.com/jeirt/jeirt/model"
)

func init() { Register(MethodLBFGS, lbfgsFitter{}) }

// lbfgsFitter is LBFGS2PL as a Fitter: the rank-1 2PL of 0/1 answers, one
// problem after another, with s.CBMM's σ, tolerance, threads and prior.
type lbfgsFitter struct{}

func (lbfgsFitter) Joint() bool { return true }

func (lbfgsFitter) Check(s Spec, r *model.Responses) error { return CheckRank1TwoPL(s, r) }

// CheckRank1TwoPL refuses what the rank-1 2PL methods (lbfgs, mml) cannot
// fit: another rank or family, signed loadings, cells that are not one 0/1
// answer (lbfgs's Check, and train/irtmml's).
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

func (lbfgsFitter) Fit(ctx context.Context, s Spec, ps []Problem) ([]Fitted, error) {
	c := s.CBMM.withDefaults()
	out := make([]Fitted, len(ps))
	for k, p := range ps {
		l := LBFGS2PL{Sigma: c.Sigma, Tol: c.Tol, MaxIter: c.MaxIter, Threads: c.Threads, Start: p.From, Prior: c.Prior}
		if p.MaxIter > 0 {
			l.MaxIter = p.MaxIter
		}
		if tr := c.Trace; tr != nil {
			l.Trace = func(loss float64) { tr(k, 0, loss) }
		}
		f, err := l.Fit(ctx, p.R)
		if err != nil {
			return nil, err
		}
		out[k].Fit = f
	}
	return out, nil
}
