package irtstat

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/irt"
	"github.com/jeirt/jeirt/train/irt/irttest"
)

// posteriorGrad is the gradient of the negative log posterior of a rank-1
// fit in (θ, a, b), stacked: the cells' likelihood plus irt.NewPriorGrad.
func posteriorGrad(r *model.Responses, f *model.IRT, c irt.CBMM) []float64 {
	N, J := len(f.Models), len(f.Items)
	out := make([]float64, N+2*J)
	pg := irt.NewPriorGrad(c, f)
	for cell := range r.Label {
		i, j := int(r.Model[cell]), int(r.Item[cell])
		n, k := float64(r.TrialsAt(cell)), r.SuccessesAt(cell)
		s := model.Sigmoid(f.Logit(i, j) / f.Sigma)
		var g float64
		if f.C != nil {
			p := f.C[j] + (1-f.C[j])*s
			g = -(k/p - (n-k)/(1-p)) * (1 - f.C[j]) * s * (1 - s) / f.Sigma
		} else {
			g = (n*s - k) / f.Sigma
		}
		out[i] += g * f.A[j]
		out[N+j] += g * f.Theta[i]
		out[N+J+j] += g
	}
	for i := 0; i < N; i++ {
		out[i] += pg.Theta(f.Theta[i])
	}
	for j := 0; j < J; j++ {
		out[N+j] += pg.A(f.A[j])
		out[N+J+j] += pg.B(f.B[j])
	}
	return out
}

// numericCov inverts the central-difference Hessian of the negative log
// posterior (the derivative of posteriorGrad).
func numericCov(t *testing.T, r *model.Responses, f *model.IRT, c irt.CBMM) *mat.SymDense {
	N, J := len(f.Models), len(f.Items)
	P := N + 2*J
	param := func(k int) *float64 {
		switch {
		case k < N:
			return &f.Theta[k]
		case k < N+J:
			return &f.A[k-N]
		default:
			return &f.B[k-N-J]
		}
	}
	H := mat.NewDense(P, P, nil)
	const h = 1e-5
	for k := 0; k < P; k++ {
		v := param(k)
		old := *v
		*v = old + h
		gp := posteriorGrad(r, f, c)
		*v = old - h
		gm := posteriorGrad(r, f, c)
		*v = old
		for q := 0; q < P; q++ {
			H.Set(q, k, (gp[q]-gm[q])/(2*h))
		}
	}
	S := mat.NewSymDense(P, nil)
	for a := 0; a < P; a++ {
		for b := a; b < P; b++ {
			S.SetSym(a, b, (H.At(a, b)+H.At(b, a))/2)
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(S) {
		t.Fatal("numeric Hessian not positive definite")
	}
	var inv mat.SymDense
	if err := ch.InverseTo(&inv); err != nil {
		t.Fatal(err)
	}
	return &inv
}

func relClose(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(math.Abs(a), math.Abs(b)) }

// TestLaplaceMatchesNumericHessian: the joint standard errors are the
// square roots of the diagonal of the inverse finite-difference Hessian of
// the negative log posterior, on both Schur sides (fewer models than item
// parameters, and more), for the 2PL and a 3PL with fixed asymptotes; the
// difficulty's is the delta method on that covariance.
func TestLaplaceMatchesNumericHessian(t *testing.T) {
	for _, tc := range []struct {
		name  string
		N, J  int
		guess float64
	}{{"few models", 12, 25, 0}, {"many models", 40, 8, 0}, {"3pl fixed c", 15, 12, 0.2}} {
		r, _ := irttest.Gen(t, synth.Options{Kind: "2pl", Models: tc.N, Items: tc.J, Seed: 3, Missing: 0.1})
		c := irt.CBMM{Prior: model.DefaultPrior, Sigma: 1.3, Tol: 1e-10}
		f, err := c.Fit(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		if tc.guess > 0 {
			f.C = make([]float64, tc.J)
			for j := range f.C {
				f.C[j] = tc.guess
			}
		}
		res, err := Laplace{Fitter: c}.Run(r, f)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Joint || res.Expected {
			t.Fatalf("%s: joint %v expected %v, want the joint observed Hessian", tc.name, res.Joint, res.Expected)
		}
		blk, err := Laplace{Fitter: c, MaxJoint: -1}.Run(r, f)
		if err != nil || blk.Joint {
			t.Fatalf("%s: MaxJoint -1 gave joint %v (%v)", tc.name, blk.Joint, err)
		}
		cov := numericCov(t, r, f, c)
		N, J := tc.N, tc.J
		worst, wider, atBound := 0.0, 0, 0
		check := func(what string, got, want float64) {
			if d := math.Abs(got-want) / want; d > worst {
				worst = d
			}
			if !relClose(got, want, 1e-4) {
				t.Errorf("%s: %s se %.8g, numeric %.8g", tc.name, what, got, want)
			}
		}
		for i := 0; i < N; i++ {
			check("theta", res.ThetaSE[i], math.Sqrt(cov.At(i, i)))
			if res.ThetaSE[i] > blk.ThetaSE[i] {
				wider++
			}
		}
		for j := 0; j < J; j++ {
			check("a", res.ASE[j], math.Sqrt(cov.At(N+j, N+j)))
			check("d", res.BSE[j], math.Sqrt(cov.At(N+J+j, N+J+j)))
			a, b := f.A[j], f.B[j]
			if a == 0 { // at the bound: no difficulty, and a one-sided interval
				if !math.IsNaN(res.DiffSE[j]) || res.ALo[j] != 0 || !relClose(res.AHi[j], 1.959963984540054*res.ASE[j], 1e-12) {
					t.Errorf("%s: item %d at a = 0: difficulty se %g, a interval [%g, %g] with se %g", tc.name, j, res.DiffSE[j], res.ALo[j], res.AHi[j], res.ASE[j])
				}
				atBound++
				continue
			}
			ga, gb := b/(a*a), -1/a
			v := ga*ga*cov.At(N+j, N+j) + 2*ga*gb*cov.At(N+j, N+J+j) + gb*gb*cov.At(N+J+j, N+J+j)
			check("difficulty", res.DiffSE[j], math.Sqrt(v))
		}
		// The θ-item coupling only adds uncertainty.
		if wider < N*3/4 {
			t.Errorf("%s: the joint θ se is above the block-diagonal one for %d of %d models", tc.name, wider, N)
		}
		t.Logf("%s: %d models x %d items: worst relative difference from the numeric Hessian %.2g; %d slopes at 0; joint θ se %.4f vs block-diagonal %.4f (model 0)",
			tc.name, N, J, worst, atBound, res.ThetaSE[0], blk.ThetaSE[0])
	}
}

// TestLaplaceCoverage: over 10 simulated 2PL data sets the 95% intervals of
// the default prior's MAP fit cover the true θ, a and d about 95% of the
// time, every interval contains its estimate, and they are finite.
func TestLaplaceCoverage(t *testing.T) {
	const sets, N, J = 10, 60, 40
	var hit, tot [3]int
	for s := 0; s < sets; s++ {
		r, truth := irttest.Gen(t, synth.Options{Kind: "2pl", Models: N, Items: J, Seed: int64(100 + s)})
		c := irt.CBMM{Prior: model.DefaultPrior, Accelerate: true, Tol: 1e-8}
		f, err := c.Fit(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Laplace{Fitter: c}.Run(r, f)
		if err != nil {
			t.Fatal(err)
		}
		count := func(k int, est, lo, hi, want float64) {
			if !(lo <= est && est <= hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
				t.Fatalf("interval [%g, %g] of estimate %g", lo, hi, est)
			}
			tot[k]++
			if lo <= want && want <= hi {
				hit[k]++
			}
		}
		for i := 0; i < N; i++ {
			count(0, f.Theta[i], res.ThetaLo[i], res.ThetaHi[i], truth.Theta[i])
		}
		for j := 0; j < J; j++ {
			count(1, f.A[j], res.ALo[j], res.AHi[j], truth.A[j])
			count(2, f.B[j], res.BLo[j], res.BHi[j], truth.B[j])
		}
	}
	for k, name := range []string{"theta", "a", "d"} {
		cov := float64(hit[k]) / float64(tot[k])
		t.Logf("%s: 95%% intervals cover the truth %d of %d (%.3f)", name, hit[k], tot[k], cov)
		if cov < 0.88 || cov > 0.99 {
			t.Errorf("%s: coverage %.3f outside [0.88, 0.99]", name, cov)
		}
	}
}
