package irt

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/backend"
	"github.com/jeirt/jeirt/train/eval"
	"github.com/jeirt/jeirt/train/irt/irttest"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

func TestCBMMRecovers2PL(t *testing.T) {
	r, truth := irttest.Gen(t, synth.Options{Kind: "2pl", Models: 200, Items: 2000, Missing: 0.2, Seed: 1})
	for _, acc := range []bool{false, true} {
		fit, err := CBMM{Accelerate: acc}.Fit(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		irttest.AssertMonotone(t, fmt.Sprintf("accelerate=%v", acc), fit.LossHistory)
		if !fit.Converged {
			t.Errorf("accelerate=%v: not converged after %d iterations", acc, fit.Iterations)
		}
		sTheta, sA, sB := eval.Spearman(fit.Theta, truth.Theta), eval.Spearman(fit.A, truth.A), eval.Spearman(fit.B, truth.B)
		t.Logf("accelerate=%v: %d iterations, loss %.2f, Spearman θ %.4f a %.4f b %.4f", acc, fit.Iterations,
			fit.LossHistory[len(fit.LossHistory)-1], sTheta, sA, sB)
		if sTheta < 0.95 || sB < 0.95 || sA < 0.8 {
			t.Errorf("accelerate=%v: recovery too weak: Spearman θ %.4f (want > 0.95), b %.4f (> 0.95), a %.4f (> 0.8)", acc, sTheta, sB, sA)
		}
	}
}

func TestCBMMGauge(t *testing.T) {
	r, _ := irttest.Gen(t, synth.Options{Kind: "mirt", Rank: 2, Models: 60, Items: 300, Missing: 0.1, Seed: 3})
	fit, err := CBMM{Rank: 2, Tol: 1e-5}.Fit(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	for d := 0; d < 2; d++ {
		th := irttest.Column(fit.Theta, 2, d)
		mu, sd := stat.PopMeanStdDev(th, nil)
		if math.Abs(mu) > 1e-12 || math.Abs(sd-1) > 1e-12 {
			t.Errorf("dimension %d: θ mean %g sd %g, want 0 and 1", d, mu, sd)
		}
	}
	for j, a := range fit.A {
		if a < 0 {
			t.Fatalf("A[%d] = %g < 0", j, a)
		}
	}
	// The gauge must not change X: shift and scale θ, regauge, compare logits.
	moved := *fit
	moved.Theta = append([]float64(nil), fit.Theta...)
	moved.A = append([]float64(nil), fit.A...)
	moved.B = append([]float64(nil), fit.B...)
	for i := range moved.Theta {
		moved.Theta[i] = 3*moved.Theta[i] + 1
	}
	for j := range moved.A {
		moved.A[j] /= 3
	}
	for j := range moved.B {
		moved.B[j] -= moved.A[2*j] + moved.A[2*j+1]
	}
	before := moved.Logit(5, 7)
	StandardGauge(&moved)
	if after := moved.Logit(5, 7); math.Abs(after-before) > 1e-12 {
		t.Errorf("gauge changed x_57 from %g to %g", before, after)
	}
	if d := math.Abs(moved.Theta[11] - fit.Theta[11]); d > 1e-12 {
		t.Errorf("regauged θ differs by %g", d)
	}
}

// canonicalCorrelations returns the canonical correlations between the
// r-dimensional estimated and true abilities.
func canonicalCorrelations(t *testing.T, est, truth []float64, n, r int) []float64 {
	t.Helper()
	var cc stat.CC
	if err := cc.CanonicalCorrelations(mat.NewDense(n, r, est), mat.NewDense(n, r, truth), nil); err != nil {
		t.Fatal(err)
	}
	return cc.CorrsTo(nil)
}

func TestCBMMRank2RecoversUpToRotation(t *testing.T) {
	r, truth := irttest.Gen(t, synth.Options{Kind: "mirt", Rank: 2, Models: 300, Items: 1000, Missing: 0.2, Seed: 5})
	fit, err := CBMM{Rank: 2}.Fit(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	irttest.AssertMonotone(t, "rank 2", fit.LossHistory)
	cc := canonicalCorrelations(t, fit.Theta, truth.Theta, 300, 2)
	t.Logf("rank 2: %d iterations, canonical correlations θ: %.4f %.4f", fit.Iterations, cc[0], cc[1])
	if cc[0] < 0.95 || cc[1] < 0.9 {
		t.Errorf("canonical correlations %.4f, %.4f: want > 0.95 and > 0.9", cc[0], cc[1])
	}
	if s := eval.Spearman(fit.B, truth.B); s < 0.95 {
		t.Errorf("Spearman b = %.4f, want > 0.95", s)
	}
}

func TestCBMMLossMonotone(t *testing.T) {
	base, truth := irttest.Gen(t, synth.Options{Kind: "2pl", Models: 80, Items: 400, Seed: 7})
	rng := rand.New(rand.NewPCG(7, 8))
	dense := irttest.DenseFrom(base)
	mcar := irttest.DenseFrom(base)
	mnar := irttest.DenseFrom(base)
	for i := range mcar {
		for j := range mcar[i] {
			if rng.Float64() < 0.4 {
				mcar[i][j] = -1
			}
			// Not at random: weak models skip hard items, and wrong answers
			// are more often unrecorded.
			p := 0.15
			if truth.Theta[i] < 0 && truth.B[j] < 0 {
				p = 0.7
			}
			if mnar[i][j] == 0 {
				p += 0.2
			}
			if rng.Float64() < p {
				mnar[i][j] = -1
			}
		}
	}
	dup := make([][]int, len(dense))
	for i := range dense {
		dup[i] = append(append([]int(nil), dense[i]...), dense[i][:100]...)
	}
	constant := irttest.DenseFrom(base)
	for j := range constant[3] {
		constant[3][j] = 1
		constant[4][j] = 0
	}
	itemConst := irttest.DenseFrom(base)
	for i := range itemConst {
		itemConst[i][0] = 1
		itemConst[i][1] = 0
		if i > 0 {
			itemConst[i][2] = -1 // an item seen by one model only
		}
	}
	cases := []struct {
		name string
		y    [][]int
		rank int
	}{
		{"complete", dense, 1},
		{"40% MCAR", mcar, 1},
		{"not at random", mnar, 1},
		{"duplicated items", dup, 1},
		{"constant rows", constant, 1},
		{"constant items", itemConst, 1},
		{"40% MCAR rank 3", mcar, 3},
		{"constant rows rank 2", constant, 2},
	}
	for _, tc := range cases {
		for _, acc := range []bool{false, true} {
			name := fmt.Sprintf("%s/accelerate=%v", tc.name, acc)
			fit, err := CBMM{Rank: tc.rank, Accelerate: acc, MaxIter: 300}.Fit(context.Background(), irttest.RespFromLabels(tc.y))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			h := fit.LossHistory
			irttest.AssertMonotone(t, name, h)
			if len(h) < 3 || !(h[len(h)-1] < h[0]) {
				t.Errorf("%s: loss did not decrease: %v", name, h)
			}
			for _, a := range fit.A {
				if a < 0 || math.IsNaN(a) {
					t.Fatalf("%s: a = %g", name, a)
				}
			}
		}
	}
}

func TestFitBatchEqualsFit(t *testing.T) {
	var rs []*model.Responses
	for s := int64(1); s <= 3; s++ {
		r, _ := irttest.Gen(t, synth.Options{Kind: "2pl", Models: 40 + 10*int(s), Items: 200, Missing: 0.1 * float64(s), Seed: s})
		rs = append(rs, r)
	}
	for _, cfg := range []CBMM{{}, {Rank: 2, Accelerate: true}, {Threads: 1}} {
		batch, err := cfg.FitBatch(context.Background(), rs)
		if err != nil {
			t.Fatal(err)
		}
		for k, r := range rs {
			one, err := cfg.Fit(context.Background(), r)
			if err != nil {
				t.Fatal(err)
			}
			if one.Iterations != batch[k].Iterations || !slices.Equal(one.Theta, batch[k].Theta) || !slices.Equal(one.A, batch[k].A) ||
				!slices.Equal(one.B, batch[k].B) || !slices.Equal(one.LossHistory, batch[k].LossHistory) {
				t.Errorf("rank %d problem %d: batched fit differs from the single fit (%d vs %d iterations)",
					cfg.Rank, k, batch[k].Iterations, one.Iterations)
			}
		}
	}
}

func TestCBMMZeroValueAndErrors(t *testing.T) {
	r := irttest.RespFromLabels([][]int{{1, 0, 1}, {0, 0, 1}, {1, 1, 1}})
	fit, err := CBMM{}.Fit(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if fit.Rank != 1 || fit.Sigma != 1 || len(fit.Theta) != 3 || len(fit.A) != 3 {
		t.Errorf("zero value: rank %d sigma %g, %d θ, %d a", fit.Rank, fit.Sigma, len(fit.Theta), len(fit.A))
	}
	// Higher accuracy, higher θ.
	if !(fit.Theta[2] > fit.Theta[0] && fit.Theta[0] > fit.Theta[1]) {
		t.Errorf("θ %v not ordered by accuracy", fit.Theta)
	}
	_, err = CBMM{Device: "cuda"}.Fit(context.Background(), r)
	want := "device cuda: this jeirt binary was built without CUDA; build the CUDA runner with scripts/build-cuda.sh (it writes bin/jeirt-cuda, and a bin/jeirt that runs device cuda commands in it)"
	if _, _, lookupErr := backend.Lookup[backend.CBMMDevice]("cuda"); lookupErr == nil {
		want = "" // a cuda build: the device exists
	}
	if want != "" && (err == nil || err.Error() != want) {
		t.Errorf("cuda error = %v, want %q", err, want)
	}
	if _, err := (CBMM{Device: "tpu"}).Fit(context.Background(), r); err == nil || !strings.Contains(err.Error(), `device "tpu": unknown`) {
		t.Errorf("tpu error = %v", err)
	}
	if _, err := (CBMM{}).Fit(context.Background(), &model.Responses{Models: []string{"m"}, Items: []string{"q"}}); err == nil ||
		err.Error() != "cbmm: response matrix 0 has no observed cells" {
		t.Errorf("empty error = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (CBMM{}).Fit(ctx, r); err != context.Canceled {
		t.Errorf("cancelled fit: err = %v", err)
	}
}

func TestExpNeg(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	worst := 0.0
	for k := 0; k < 1000000; k++ {
		x := -rng.Float64() * 40
		if k%10 == 0 {
			x = -rng.Float64() * 750
		}
		if k < 100 {
			x = -float64(k) * 1e-3
		}
		got, want := ExpNeg(x), math.Exp(x)
		if want < 1e-300 {
			continue
		}
		worst = math.Max(worst, math.Abs(got-want)/want)
	}
	if worst > 5e-16 {
		t.Errorf("expNeg: worst relative error %g, want < 5e-16", worst)
	}
	if ExpNeg(0) != 1 || ExpNeg(-800) != 0 {
		t.Errorf("ExpNeg(0) = %g, ExpNeg(-800) = %g", ExpNeg(0), ExpNeg(-800))
	}
}
