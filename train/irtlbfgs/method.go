package irtlbfgs

import (
	"context"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/irt"
)

func init() { irt.Register(irt.MethodLBFGS, fitter{}) }

// fitter is LBFGS2PL as an irt.Fitter: the rank-1 2PL of 0/1 answers, one
// problem after another, with s.CBMM's σ, tolerance, threads and prior.
type fitter struct{}

func (fitter) Joint() bool { return true }

func (fitter) Check(s irt.Spec, r *model.Responses) error { return irt.CheckRank1TwoPL(s, r) }

func (fitter) Fit(ctx context.Context, s irt.Spec, ps []irt.Problem) ([]irt.Fitted, error) {
	c := s.CBMM.WithDefaults()
	out := make([]irt.Fitted, len(ps))
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
