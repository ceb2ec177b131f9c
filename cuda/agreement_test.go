package cuda

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/jeirt/jeirt/cuda/internal/cbmm/cbmmtest"
	"github.com/jeirt/jeirt/cuda/internal/gpu"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/eval"
	"github.com/jeirt/jeirt/train/irt"
	"github.com/jeirt/jeirt/train/jeirt"
)

// The acceptance tests of the GPU code, run on device "cuda" by the cuda
// build's tests (gpu_test.go) and on "cuda-harness" (the kernel sources on the CPU, harness_test.go) by every build with cgo.

// cbmmCase is one batch of checkCBMMAgreement: the rank, whether the fit
// extrapolates, and how many problems the batch holds (0 means 4).
type cbmmCase struct {
	rank       int
	accelerate bool
	problems   int
}

// checkCBMMAgreement: irt.CBMM.FitBatch on device and on cpu, from the same
// starting values and for iters iterations, must give losses within tol
// relative at every iteration; cases default to ranks 1 to 3 in batches of 4.
func checkCBMMAgreement(t *testing.T, device string, tol float64, iters int, cases ...cbmmCase) {
	if len(cases) == 0 {
		cases = []cbmmCase{{1, false, 0}, {1, true, 0}, {2, false, 0}, {3, true, 0}}
	}
	for _, tc := range cases {
		n := tc.problems
		if n == 0 {
			n = 4
		}
		t.Run(fmt.Sprintf("rank%d/accelerate=%v/K=%d", tc.rank, tc.accelerate, n), func(t *testing.T) {
			kind := "2pl"
			if tc.rank > 1 {
				kind = "mirt"
			}
			seeds := make([]int64, n)
			for k := range seeds {
				seeds[k] = int64(5 + k)
			}
			rs := cbmmtest.Problems(t, kind, tc.rank, seeds...)
			fit := func(device string) []*model.IRT {
				c := irt.CBMM{Rank: tc.rank, Tol: 1e-300, MaxIter: iters, Accelerate: tc.accelerate, Device: device}
				out, err := c.FitBatch(context.Background(), rs)
				if err != nil {
					t.Fatal(err)
				}
				return out
			}
			cpu, dev := fit("cpu"), fit(device)
			for k := range rs {
				hc, hd := cpu[k].LossHistory, dev[k].LossHistory
				if cpu[k].Iterations != dev[k].Iterations || len(hc) != len(hd) {
					t.Fatalf("problem %d: %d iterations on cpu, %d on %s", k, cpu[k].Iterations, dev[k].Iterations, device)
				}
				worst := 0.0
				for i := range hc {
					worst = math.Max(worst, math.Abs(hc[i]-hd[i])/math.Abs(hc[i]))
				}
				if worst > tol {
					t.Errorf("problem %d: loss differs by %.3g relative (final %.12g cpu, %.12g %s)", k, worst, hc[len(hc)-1], hd[len(hd)-1], device)
				}
				t.Logf("problem %d: %d iterations, final loss %.10g, worst relative difference %.2g", k, len(hc)-1, hc[len(hc)-1], worst)
			}
		})
	}
}

// jeirtData is a small JE-IRT problem: responses, splits and encoder vectors.
func jeirtData(t testing.TB, models, items, D int, seed int64) (trainR, valR *model.Responses, feats []float32) {
	t.Helper()
	r, truth, err := synth.Generate(synth.Options{Kind: "jeirt", Models: models, Items: items, FeatureDim: D, EmbedDim: 16, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	trainR, valR, _, err = eval.Split(r, eval.SplitOptions{Val: 0.1, Test: 0.1, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	feats = make([]float32, 0, items*D)
	for _, f := range truth.Features {
		feats = append(feats, f...)
	}
	return trainR, valR, feats
}

// checkJEIRTAgreement: from the same initial weights, batch order and
// dropout masks (jeirt.Trainer draws the weights and order on the host from
// Seed; the masks come from backend.JEIRTDropout's hash, drawn on the host for
// cpu and on the device for a device's Epoch), 100 AdamW steps on device and
// on cpu must give per-epoch training losses and validation losses, and
// trained parameters, within tol relative.
func checkJEIRTAgreement(t *testing.T, device string, tol float64) {
	trainR, valR, feats := jeirtData(t, 20, 300, 48, 3)
	for _, tc := range []jeirt.Trainer{
		// 4800 training pairs / 96 per batch = 50 steps an epoch, 2 epochs.
		{Dim: 16, Hidden: 64, Epochs: 2, BatchSize: 96, LR: 3e-3, Batching: "per-pair", Seed: 1},
		{Dim: 16, Hidden: 64, Epochs: 2, BatchSize: 96, LR: 3e-3, Batching: "by-question", Dropout: 0.2, Residual: 0.01, WeightDecay: 0.01, Seed: 2},
	} {
		t.Run(tc.Batching, func(t *testing.T) {
			dev := compareJEIRT(t, device, tol, tc, trainR, valR, feats, 48)
			// The model learned something: validation loss below log 2.
			if l := dev.History[len(dev.History)-1].ValLoss; !(l < math.Ln2) {
				t.Errorf("validation loss %.4g after 100 steps on %s", l, device)
			}
		})
	}
}

// compareJEIRT trains tc on cpu and on device from the same seed and
// compares, epoch by epoch, the training and validation losses, then the
// trained parameters, within tol relative; it returns the device's result.
func compareJEIRT(t *testing.T, device string, tol float64, tc jeirt.Trainer, trainR, valR *model.Responses, feats []float32, D int) *jeirt.Result {
	fit := func(device string) *jeirt.Result {
		c := tc
		c.Device = device
		f, err := c.Fit(context.Background(), trainR, valR, feats, D)
		if err != nil {
			t.Fatal(err)
		}
		if f.Device != device {
			t.Fatalf("trained on %s, asked for %s", f.Device, device)
		}
		return f
	}
	cpu, dev := fit("cpu"), fit(device)
	if len(cpu.History) != len(dev.History) {
		t.Fatalf("%d epochs on cpu, %d on %s", len(cpu.History), len(dev.History), device)
	}
	for e := range cpu.History {
		c, g := cpu.History[e], dev.History[e]
		for _, v := range []struct {
			what string
			x, y float64
		}{{"train loss", c.TrainLoss, g.TrainLoss}, {"validation loss", c.ValLoss, g.ValLoss}} {
			if rel := math.Abs(v.x-v.y) / v.x; rel > tol || math.IsNaN(rel) {
				t.Errorf("epoch %d %s: %.8g (cpu) vs %.8g (%s), relative %.2g", c.Epoch, v.what, v.x, v.y, device, rel)
			}
		}
		t.Logf("epoch %d: train loss %.8g cpu, %.8g %s; validation %.8g cpu, %.8g %s", c.Epoch, c.TrainLoss, g.TrainLoss, device, c.ValLoss, g.ValLoss, device)
	}
	// The trained parameters (of the best epoch, the same epoch on
	// both): the largest difference relative to the array's largest
	// value.
	if cpu.BestEpoch != dev.BestEpoch {
		t.Errorf("best epoch %d on cpu, %d on %s", cpu.BestEpoch, dev.BestEpoch, device)
	}
	cm, dm := cpu.Model, dev.Model
	for _, a := range []struct {
		what string
		x, y []float32
	}{{"W1", cm.W1, dm.W1}, {"c1", cm.C1, dm.C1}, {"W2", cm.W2, dm.W2}, {"c2", cm.C2, dm.C2}, {"M", cm.M, dm.M}, {"R", cm.R, dm.R}, {"Q", cm.Q, dm.Q}} {
		if len(a.x) != len(a.y) {
			t.Fatalf("%s has %d values on cpu, %d on %s", a.what, len(a.x), len(a.y), device)
		}
		var diff, scale float64
		for i := range a.x {
			diff = math.Max(diff, math.Abs(float64(a.x[i])-float64(a.y[i])))
			scale = math.Max(scale, math.Abs(float64(a.x[i])))
		}
		if rel := diff / math.Max(scale, 1e-30); rel > tol || math.IsNaN(rel) {
			t.Errorf("parameters %s differ by %.3g relative to their largest value %.3g", a.what, rel, scale)
		} else if len(a.x) > 0 {
			t.Logf("parameters %s: largest difference %.3g relative to the largest value %.3g", a.what, rel, scale)
		}
	}
	return dev
}

// checkSgemm compares the sgemm kernel on g with a float64 reference on
// shapes that are not multiples of the 64 x 64 x 16 tile, in all four
// transpositions.
func checkSgemm(t *testing.T, g gpu.GPU) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, sh := range [][3]int{{70, 130, 33}, {1, 256, 768}, {256, 300, 5}, {129, 1, 64}} {
		M, N, K := sh[0], sh[1], sh[2]
		for _, tr := range [][2]bool{{false, false}, {false, true}, {true, false}, {true, true}} {
			A, B, C := make([]float32, M*K), make([]float32, K*N), make([]float32, M*N)
			for _, x := range [][]float32{A, B, C} {
				for i := range x {
					x[i] = float32(rng.NormFloat64())
				}
			}
			at := func(i, k int) float64 {
				if tr[0] {
					return float64(A[k*M+i])
				}
				return float64(A[i*K+k])
			}
			bt := func(k, j int) float64 {
				if tr[1] {
					return float64(B[j*K+k])
				}
				return float64(B[k*N+j])
			}
			got := make([]float32, M*N)
			bufs := &gpu.Buffers{G: g}
			err := g.Do(func() error {
				defer bufs.Free()
				pa, pb, pc := bufs.Alloc("A", len(A), 4), bufs.Alloc("B", len(B), 4), bufs.Alloc("C", len(C), 4)
				if err := gpu.FirstErr(bufs.Err, g.HtoD(pa, A), g.HtoD(pb, B), g.HtoD(pc, C)); err != nil {
					return err
				}
				if err := g.Launch("sgemm", gpu.Blocks(N, 64), gpu.Blocks(M, 64), 256, pa, pb, pc, M, N, K, tr[0], tr[1], 1.0, 0.5); err != nil {
					return err
				}
				return g.DtoH(got, pc)
			})
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < M; i++ {
				for j := 0; j < N; j++ {
					want := 0.5 * float64(C[i*N+j])
					for k := 0; k < K; k++ {
						want += at(i, k) * bt(k, j)
					}
					if diff := math.Abs(float64(got[i*N+j]) - want); diff > 1e-5*math.Sqrt(float64(K))*(1+math.Abs(want)) {
						t.Fatalf("M,N,K=%d,%d,%d trans=%v: C[%d,%d] = %g, want %g", M, N, K, tr, i, j, got[i*N+j], want)
					}
				}
			}
		}
	}
}
