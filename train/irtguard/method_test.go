package irtguard

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/irt"
	"github.com/jeirt/jeirt/train/irt/irttest"
	"github.com/jeirt/jeirt/train/irtmml"
)

// TestGuardRunsRegisteredMethods: the guard fits by whichever method is
// registered under Guard.Method: mml (registered by train/irtmml, which
// the guard imports) is fitted once, exactly as MML2PL fits it, with its
// own certificate and no starts; a method that cannot fit the settings is
// a model.FieldError naming the field.
func TestGuardRunsRegisteredMethods(t *testing.T) {
	r, _ := irttest.Gen(t, synth.Options{Kind: string(model.TwoPL), Models: 40, Items: 12, Seed: 5})
	ctx := context.Background()
	spec := irt.Spec{Method: irt.MethodMML, CBMM: irt.CBMM{Sigma: 1, Rank: 1, MaxIter: 300, Prior: model.DefaultPrior}, GradTol: 1e-3}
	if err := spec.Validate(r); err != nil {
		t.Fatal(err)
	}
	res, err := For(spec, nil).Fit(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	want, cert, err := irtmml.MML2PL{MaxIter: 300, GradTol: 1e-3, Prior: model.DefaultPrior}.FitCertified(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.Fit.A, want.A) || !reflect.DeepEqual(res.Fit.B, want.B) || !reflect.DeepEqual(res.Fit.LossHistory, want.LossHistory) {
		t.Errorf("the guard's mml fit differs from MML2PL's")
	}
	mc := res.MethodCertificate
	if mc == nil || mc.MaxGradient != cert.MaxGradient || mc.GradTol != cert.GradTol || res.Certificate.MaxGradient != cert.MaxGradient {
		t.Errorf("certificate %+v (guard's %+v), want %+v", mc, res.Certificate, cert)
	}
	if len(res.Starts) != 0 || res.Nested != "" || !res.Agree || res.Prior != model.DefaultPrior {
		t.Errorf("mml result: %d starts, nested %q, agree %v, prior %v", len(res.Starts), res.Nested, res.Agree, res.Prior)
	}
	joint, err := For(irt.Spec{Method: irt.MethodLBFGS, CBMM: irt.CBMM{Prior: model.DefaultPrior}}, nil).Fit(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if joint.MethodCertificate != nil || len(joint.Starts) != 2 || joint.Nested != string(model.OnePL) {
		t.Errorf("lbfgs result: certificate %v, %d starts, nested %q", joint.MethodCertificate, len(joint.Starts), joint.Nested)
	}
	_, err = Guard{CBMM: irt.CBMM{Rank: 2}, Method: irt.MethodLBFGS}.Fit(ctx, r)
	var fe *model.FieldError
	if !errors.As(err, &fe) || fe.Field != "Method" || err.Error() != "irtguard: method lbfgs fits rank 1 only (got rank 2)" {
		t.Errorf("lbfgs at rank 2: %v", err)
	}
}
