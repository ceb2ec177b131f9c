package irtguard

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/irt"
	"github.com/jeirt/jeirt/train/irt/irttest"
)

// TestTrapsPrior: on every trap of the stress corpus the default fit (the
// default prior, guarded) is certified at its optimum within the default
// iteration cap, is no worse than the optimum a start from the true
// parameters reaches (the traps with a second ability have several
// optima, as under joint maximum likelihood), no slope runs off, and it
// predicts the
// held-out cells no worse than joint maximum likelihood (the same guard
// without the prior) beyond 0.002 per answer, nor than its own 1PL beyond
// heldOutMargin.
func TestTrapsPrior(t *testing.T) {
	for _, tr := range traps {
		t.Run(tr.name, func(t *testing.T) {
			train, test, truth := tr.gen()
			c := irt.CBMM{Accelerate: true, Prior: model.DefaultPrior}
			res := fit(t, c, train)[0]
			checkNested(t, tr.name, res)
			ml := fit(t, irt.CBMM{Accelerate: true}, train)[0]
			if !res.Fit.Converged {
				t.Errorf("not converged: %s", res.Fit.Note)
			}
			ref, _, err := Guard{CBMM: c}.FitFrom(context.Background(), train, truth)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := final(res.Fit), final(ref); got > want*(1+1e-6) {
				t.Errorf("posterior %.10g, above the truth start's optimum %.10g", got, want)
			}
			maxA := 0.0
			for _, a := range res.Fit.A {
				maxA = math.Max(maxA, a)
			}
			if maxA > 20 {
				t.Errorf("largest a %.2f", maxA)
			}
			hp, hm, h1 := logLoss(res.Fit, test), logLoss(ml.Fit, test), logLoss(res.NestedResult.Fit, test)
			if hp > hm+0.002 {
				t.Errorf("held-out log loss: prior %.4f, joint ML %.4f", hp, hm)
			}
			if hp > h1+heldOutMargin {
				t.Errorf("held-out log loss: 2pl %.4f, its 1pl %.4f", hp, h1)
			}
			t.Logf("%s: %d iterations, certificate %.2g, starts agree %v, largest a %.2f; held-out prior %.4f, its 1pl %.4f, joint ML %.4f (%d iterations, converged %v)",
				tr.name, res.Fit.Iterations, res.Certificate.MaxGradient, res.Agree, maxA, hp, h1, hm, ml.Fit.Iterations, ml.Fit.Converged)
		})
	}
}

// TestCertifyPrior: under a prior the certificate is the negative log
// posterior's projected gradient, and it covers the parameters the prior
// bounds: the ability of a model with every answer right and the
// intercept of an item no model solved. Moving either off the optimum is
// seen.
func TestCertifyPrior(t *testing.T) {
	train, _, _ := traps[2].gen() // unanimous: items every model answers alike
	c := irt.CBMM{Accelerate: true, Prior: model.DefaultPrior}
	res := fit(t, c, train)[0]
	f := res.Fit
	if res.Certificate.MaxGradient > DefaultGradTol {
		t.Fatalf("certificate %.3g at the optimum (%s)", res.Certificate.MaxGradient, res.Certificate.Where)
	}
	acc := train.ItemAccuracy()
	never := -1
	for j, p := range acc {
		if p == 0 {
			never = j
			break
		}
	}
	if never < 0 {
		t.Fatal("the trap has no item no model solved")
	}
	moved := *f
	moved.B = append([]float64(nil), f.B...)
	moved.B[never] += 1
	ct := Certify(train, &moved, c)
	if ct.MaxGradient < 0.01 || ct.Where != "d of item "+f.Items[never] {
		t.Errorf("the never-solved item's d moved by 1: certificate %.3g at %s; want it there, above 0.01", ct.MaxGradient, ct.Where)
	}
	// Without the prior the same item is left out (no finite optimum).
	if ml := Certify(train, &moved, irt.CBMM{}); ml.Where == "d of item "+f.Items[never] {
		t.Errorf("joint ML certified the never-solved item's d (%s)", ml.Where)
	}
}

// TestEmpiricalBayes: on 2PL data whose slopes and intercepts were drawn
// from known normals, the scales estimated from the data (a=normal(1,auto),
// d=normal(0,auto)) come near the true ones, and the guarded fit runs
// under them (its Prior has them, no scale left to estimate).
func TestEmpiricalBayes(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	N, J := 300, 400
	y := make([][]int, N)
	theta := make([]float64, N)
	for i := range theta {
		theta[i] = rng.NormFloat64()
		y[i] = make([]int, J)
	}
	for j := 0; j < J; j++ {
		a := math.Max(0.05, 1+0.4*rng.NormFloat64())
		d := 1.5 * rng.NormFloat64()
		for i := range y {
			if rng.Float64() < model.Sigmoid(a*theta[i]+d) {
				y[i][j] = 1
			}
		}
	}
	r := irttest.RespFromLabels(y)
	p, err := model.ParsePrior("a=normal(1,auto),d=normal(0,auto)")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Guard{CBMM: irt.CBMM{Accelerate: true, Prior: p}}.Fit(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	got := res.Prior
	t.Logf("estimated: a sd %.3f (true 0.4), d sd %.3f (true 1.5), in %d rounds, settled %v", got.A, got.D, res.EB.Rounds, res.EB.Settled)
	if got.EstimatesScales() || !res.EB.Settled || math.Abs(got.A-0.4) > 0.12 || math.Abs(got.D-1.5) > 0.3 {
		t.Errorf("estimated prior %+v (settled %v): want a sd near 0.4, d sd near 1.5", got, res.EB.Settled)
	}
	if !res.Fit.Converged {
		t.Errorf("not converged: %s", res.Fit.Note)
	}
}
