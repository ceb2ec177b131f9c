package irtmml

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/irt/irttest"
)

// Said converged only with proof: an MML fit stopped by its iteration limit
// says converged false, with a certificate above the tolerance; one run to
// its end carries a certificate at most the tolerance. The certificate is
// the objective's gradient at the returned items: it matches central
// differences of the negative log posterior computed directly
// (mmlNegLogPosterior, which shares no code with the fit), per answer.
func TestMMLCertificate(t *testing.T) {
	r, _ := irttest.Gen(t, synth.Options{Kind: "2pl", Models: 300, Items: 8, Seed: 11})
	answered := make([]float64, r.NumItems())
	for _, j := range r.Item {
		answered[j]++
	}
	for k, prior := range []model.Prior{{}, {A: 1, AMean: 1, D: 3}} {
		t.Run(prior.String(), func(t *testing.T) { certifyCase(t, r, answered, prior, k == 1) })
	}
}

// certifyCase is TestMMLCertificate under one prior; strict adds a fit
// whose tolerance cannot be met.
func certifyCase(t *testing.T, r *model.Responses, answered []float64, prior model.Prior, strict bool) {
	ctx := context.Background()
	early, ce, err := MML2PL{MaxIter: 2, Prior: prior, Threads: 1}.FitCertified(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if early.Converged || !(ce.MaxGradient > ce.GradTol) || ce.GradTol != 1e-3 || ce.Items != 8 || !strings.HasPrefix(ce.Where, "item ") {
		t.Errorf("prior %+v, 2 iterations: converged %v, certificate %+v", prior, early.Converged, ce)
	}
	// The certificate by central differences of the objective, at the
	// early stop (where the gradient is large enough to measure).
	fd := 0.0
	for j := range early.A {
		for _, p := range []*float64{&early.A[j], &early.B[j]} {
			const h = 1e-5
			x := *p
			*p = x + h
			up := mmlNegLogPosterior(r, early.A, early.B, prior)
			*p = x - h
			down := mmlNegLogPosterior(r, early.A, early.B, prior)
			*p = x
			fd = math.Max(fd, math.Abs(up-down)/(2*h)/answered[j])
		}
	}
	if math.Abs(fd-ce.MaxGradient) > 1e-5*fd {
		t.Errorf("prior %+v: certificate %.9g, central differences %.9g", prior, ce.MaxGradient, fd)
	}
	done, cd, err := MML2PL{Prior: prior, Threads: 1}.FitCertified(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if !done.Converged || !(cd.MaxGradient <= cd.GradTol) || cd.MaxGradient <= 0 {
		t.Errorf("prior %+v, run to its end: converged %v (%s) after %d iterations, certificate %+v", prior, done.Converged, done.Note, done.Iterations, cd)
	}
	if !strict {
		return
	}
	// A tolerance the fit cannot meet: converged false, and the note says why.
	hard, cs, err := MML2PL{Prior: prior, Threads: 1, GradTol: 1e-300}.FitCertified(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if hard.Converged || cs.GradTol != 1e-300 || !strings.Contains(hard.Note, "above 1e-300") {
		t.Errorf("prior %+v, GradTol 1e-300: converged %v, note %q", prior, hard.Converged, hard.Note)
	}
}
