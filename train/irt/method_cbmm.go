package irt

import (
	"context"

	"github.com/jeirt/jeirt/model"
)

func init() { Register(MethodCBMM, cbmmFitter{}) }

// cbmmFitter is CBMM as a Fitter: every problem of a batch in one run of
// the backend's hot loop, stopped where s.CBMM.Watch says.
type cbmmFitter struct{}

func (cbmmFitter) Joint() bool { return true }

func (cbmmFitter) Check(s Spec, _ *model.Responses) error {
	if c := s.CBMM; c.Signed && c.Rank < 2 {
		return model.FieldErrorf("Signed", "{Signed} needs {Method} %s and {Rank} 2 or more (got {Method} %s {Rank} %d)", MethodCBMM, s.Method, c.Rank)
	}
	return nil
}

func (cbmmFitter) Fit(ctx context.Context, s Spec, ps []Problem) ([]Fitted, error) {
	c := s.CBMM.withDefaults()
	rs, from := make([]*model.Responses, len(ps)), make([]*model.IRT, len(ps))
	for k, p := range ps {
		rs[k], from[k] = p.R, p.From
		if p.MaxIter > 0 {
			c.MaxIter = min(c.MaxIter, p.MaxIter)
		}
	}
	fits, err := c.FitBatchFrom(ctx, rs, from)
	if err != nil {
		return nil, err
	}
	out := make([]Fitted, len(fits))
	for k, f := range fits {
		out[k].Fit = f
	}
	return out, nil
}
