package irt

import (
	"context"
	"math"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/irt/irttest"
)

// TestPriorFinite: data where joint maximum likelihood has no finite
// optimum (an item no model solved, one every model solved, an item the
// abilities order perfectly, a model with every answer right and one with
// every answer wrong) have a finite posterior mode under the default prior,
// reached with the loss falling at every step, for every member of the
// family.
func TestPriorFinite(t *testing.T) {
	y := make([][]int, 30)
	for i := range y {
		y[i] = make([]int, 40)
		for j := range y[i] {
			// A smooth ability gradient with noise-like variation.
			v := math.Sin(float64(i*7+j*13)) + float64(i)/15 - float64(j)/20
			if v > 0 {
				y[i][j] = 1
			}
		}
		y[i][0] = 0  // never solved
		y[i][1] = 1  // always solved
		if i >= 15 { // perfectly separated by model index, which the
			y[i][2] = 1 // abilities follow
		} else {
			y[i][2] = 0
		}
	}
	for j := range y[0] {
		y[0][j] = 0  // a model with every answer wrong
		y[29][j] = 1 // and one with every answer right
	}
	r := irttest.RespFromLabels(y)
	for _, c := range []CBMM{{Model: "2pl"}, {Model: "1pl"}, {Model: "3pl"}, {Rank: 2}} {
		c.Prior = model.DefaultPrior
		c.MaxIter = 5000
		c = c.WithDefaults()
		f, err := c.Fit(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		irttest.AssertMonotone(t, string(c.Model), f.LossHistory)
		if !f.Converged {
			t.Errorf("%s rank %d: not converged after %d iterations: %s", c.Model, c.Rank, f.Iterations, f.Note)
		}
		big := 0.0
		for _, v := range [][]float64{f.Theta, f.A, f.B} {
			for _, x := range v {
				if math.IsNaN(x) || math.IsInf(x, 0) {
					t.Fatalf("%s: a non-finite parameter", c.Model)
				}
				big = math.Max(big, math.Abs(x))
			}
		}
		t.Logf("%s rank %d: %d iterations, largest |parameter| %.3f, separated item a %.3f", c.Model, c.Rank, f.Iterations, big, f.A[2*f.Rank])
		if big > 12 {
			t.Errorf("%s rank %d: largest |parameter| %.3f: the prior should keep every estimate moderate", c.Model, c.Rank, big)
		}
	}
	// Without the prior the separated item's slope runs off.
	f, err := CBMM{MaxIter: 5000}.Fit(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if f.A[2] < 20 {
		t.Errorf("joint maximum likelihood: the separated item's a is %.3f; expected it to run off (the case the prior is for)", f.A[2])
	}
}

// TestPrior1PLCommonSlope: under a prior the 1PL fits its common slope
// (θ's scale is the prior's); every item keeps the same a, the loss falls
// monotonically, and the 2PL's posterior mode is no worse than the 1PL's
// seen as a 2PL (the 1PL's slope prior counts once per item).
func TestPrior1PLCommonSlope(t *testing.T) {
	r, _ := irttest.Gen(t, synth.Options{Kind: "2pl", Models: 60, Items: 80, Seed: 9})
	one, err := CBMM{Model: "1pl", Prior: model.DefaultPrior, Tol: 1e-10, MaxIter: 5000}.Fit(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	irttest.AssertMonotone(t, "1pl", one.LossHistory)
	for _, a := range one.A {
		if a != one.A[0] {
			t.Fatalf("1PL slopes differ: %v and %v", one.A[0], a)
		}
	}
	if !(one.A[0] > 0.3 && one.A[0] < 3) {
		t.Errorf("1PL common slope %.4f: want the fitted scale of θ (the data have sd(a·θ) near 1)", one.A[0])
	}
	lossOne := one.LossHistory[len(one.LossHistory)-1]
	if w := irttest.NegLogPosterior(r, one, model.DefaultPrior); math.Abs(w-lossOne) > 1e-9*w {
		t.Errorf("1PL: reported %.10f, formula %.10f", lossOne, w)
	}
	two, err := CBMM{Prior: model.DefaultPrior, Tol: 1e-10, MaxIter: 5000}.FitBatchFrom(context.Background(), []*model.Responses{r}, []*model.IRT{one})
	if err != nil {
		t.Fatal(err)
	}
	if lossTwo := two[0].LossHistory[len(two[0].LossHistory)-1]; lossTwo > lossOne {
		t.Errorf("2PL from the 1PL: %.10f above the 1PL's %.10f", lossTwo, lossOne)
	}
	t.Logf("1PL: common a %.4f, posterior %.4f; 2PL from it %.4f", one.A[0], lossOne, two[0].LossHistory[len(two[0].LossHistory)-1])
}

// TestPriorWeighted: cells of several trials under a prior; the fit
// minimises the binomial posterior (the formula above with n trials).
func TestPriorWeighted(t *testing.T) {
	r, _ := irttest.Gen(t, synth.Options{Kind: "2pl", Models: 30, Items: 60, Trials: 4, Seed: 3})
	f, err := CBMM{Prior: model.DefaultPrior, Tol: 1e-11, MaxIter: 20000, Accelerate: true}.Fit(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	irttest.AssertMonotone(t, "weighted", f.LossHistory)
	// The binomial coefficient is a constant the fitters leave out; the
	// formula's n·softplus(u) − k·u is the same up to it.
	got, want := f.LossHistory[len(f.LossHistory)-1], irttest.NegLogPosterior(r, f, model.DefaultPrior)
	if math.Abs(got-want) > 1e-9*want {
		t.Errorf("weighted: reported %.10f, formula %.10f", got, want)
	}
	if !f.Converged {
		t.Errorf("weighted: not converged: %s", f.Note)
	}
}
