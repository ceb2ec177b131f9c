package irtmml

import (
	"context"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/irt"
)

func init() { irt.Register(irt.MethodMML, fitter{}) }

// fitter is MML2PL as an irt.Fitter: θ integrated out, so each problem is
// fitted once, from its own start, and certified by MML2PL itself.
type fitter struct{}

func (fitter) Joint() bool { return false }

func (fitter) Check(s irt.Spec, r *model.Responses) error {
	if err := irt.CheckRank1TwoPL(s, nil); err != nil {
		return err
	}
	if s.CBMM.Sigma != 1 {
		return model.FieldErrorf("Method", "{Method} %s uses sigma 1 (got {Sigma} %v)", s.Method, s.CBMM.Sigma)
	}
	return irt.CheckRank1TwoPL(s, r)
}

// Fit fits each problem with s's iteration cap, certificate tolerance,
// item prior and threads; starting values are not used (EM starts from
// its own).
func (fitter) Fit(ctx context.Context, s irt.Spec, ps []irt.Problem) ([]irt.Fitted, error) {
	out := make([]irt.Fitted, len(ps))
	for k, p := range ps {
		c := MML2PL{MaxIter: s.CBMM.MaxIter, GradTol: s.GradTol, Prior: s.CBMM.Prior, Threads: s.CBMM.Threads}
		if p.MaxIter > 0 {
			c.MaxIter = p.MaxIter
		}
		f, cert, err := c.FitCertified(ctx, p.R)
		if err != nil {
			return nil, err
		}
		out[k] = irt.Fitted{Fit: f, Certificate: &irt.Certificate{MaxGradient: cert.MaxGradient, Where: cert.Where, GradTol: cert.GradTol}}
	}
	return out, nil
}
