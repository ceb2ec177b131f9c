//go:build jeirtcuda

// Tests and benchmarks that need a GPU. They build everywhere with
// `go test -tags jeirtcuda -c ./cuda/`, but the test binary only starts on a
// machine with an NVIDIA GPU and driver (see scripts/gpu-check.sh).

package cuda

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/jeirt/jeirt/cuda/internal/cbmm"
	"github.com/jeirt/jeirt/cuda/internal/cbmm/cbmmtest"
	"github.com/jeirt/jeirt/cuda/internal/gpu"
	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/backend"
	"github.com/jeirt/jeirt/train/eval"
	"github.com/jeirt/jeirt/train/irt"
	"github.com/jeirt/jeirt/train/irtstat"
	"github.com/jeirt/jeirt/train/jeirt"
	"gorgonia.org/cu"
)

func mustDevice(t testing.TB) gpu.GPU {
	t.Helper()
	g, err := gpu.Open()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestDevice(t *testing.T) {
	name, err := Name()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("device: %s, driver API version %d", name, cu.Version())
	for _, dev := range []string{"auto", "cuda"} {
		b, _, err := backend.Lookup[backend.CBMMDevice](dev)
		if err != nil || b.Name() != "cuda" {
			t.Fatalf("cBMM device %s: backend %v, %v; want cuda", dev, b, err)
		}
	}
}

// TestErrors checks that failures say what failed and match the exported errors.
func TestErrors(t *testing.T) {
	g := mustDevice(t)
	err := g.Do(func() error { return g.CheckFree("a test batch", 1<<50) })
	if !errors.Is(err, ErrOutOfMemory) || !strings.HasPrefix(err.Error(), "cuda: out of device memory: a test batch needs 1073741824.0 MiB on ") {
		t.Errorf("checkFree: %v", err)
	}
	err = g.Do(func() error { _, err := g.Alloc("a huge buffer", 1<<50); return err })
	if !errors.Is(err, ErrOutOfMemory) || !strings.Contains(err.Error(), "allocating a huge buffer (1073741824.0 MiB) on ") {
		t.Errorf("alloc: %v", err)
	}
	// 2048 threads per block is over every GPU's limit of 1024.
	err = g.Do(func() error {
		h := gpu.Handle(0)
		return g.Launch("jeirt_fwd2", 1, 1, 2048, h, h, h, h, h, h, 0, 0, 0)
	})
	if !errors.Is(err, ErrLaunch) || !strings.Contains(err.Error(), "launching jeirt_fwd2 (grid 1 x 1, 2048 threads)") {
		t.Errorf("launch: %v", err)
	}
	// The device still works after these errors.
	checkSgemm(t, g)
}

func TestSgemm(t *testing.T) { checkSgemm(t, mustDevice(t)) }

// TestStepsMatchCPU: the device iteration and the CPU's, step by step; they
// differ only in the order of sums and in exp/log1p.
func TestStepsMatchCPU(t *testing.T) { checkStepsMatchCPU(t, "cuda", 1e-9, 30) }

// TestCBMMAgreesWithCPU is the acceptance test of batched cBMM: losses within
// 1e-6 relative at every iteration (float64).
func TestCBMMAgreesWithCPU(t *testing.T) { checkCBMMAgreement(t, "cuda", 1e-6, 80) }

// TestCBMMHighRanksAgreeWithCPU runs the item and model passes of ranks 4 to
// 8 (cbmm_item_pass_r4.._r8, cbmm_model_pass_r4.._r8), which the default
// cases do not reach, against the CPU at the same tolerance.
func TestCBMMHighRanksAgreeWithCPU(t *testing.T) {
	var cases []cbmmCase
	for r := 4; r <= 8; r++ {
		cases = append(cases, cbmmCase{rank: r, accelerate: r%2 == 0})
	}
	checkCBMMAgreement(t, "cuda", 1e-6, 40, cases...)
}

// TestCBMMBatch64AgreesWithCPU: a batch of 64 problems of different shapes
// (as a bootstrap's batches are, and the bandwidth benchmark's K = 64).
func TestCBMMBatch64AgreesWithCPU(t *testing.T) {
	checkCBMMAgreement(t, "cuda", 1e-6, 30, cbmmCase{rank: 1, accelerate: true, problems: 64}, cbmmCase{rank: 2, problems: 64})
}

// TestJEIRTAgreesWithCPU is the acceptance test of JE-IRT training: after 50
// and 100 steps, training and validation losses within 1e-3 relative
// (float32, with atomic gradient sums on the GPU).
func TestJEIRTAgreesWithCPU(t *testing.T) { checkJEIRTAgreement(t, "cuda", 1e-3) }

// TestJEIRTEmbedLLMSizeAgreesWithCPU: the kernels at EmbedLLM's widths (112
// models, 768-d encoder vectors, hidden 1536, d 256, batches of 512 pairs by
// question, dropout 0.5, AdamW), on 150 questions so that one epoch is a
// few dozen steps, against the CPU step at the same tolerance.
func TestJEIRTEmbedLLMSizeAgreesWithCPU(t *testing.T) {
	trainR, valR, feats := jeirtData(t, 112, 150, 768, 4)
	tc := jeirt.Trainer{Dim: 256, Hidden: 1536, Epochs: 1, BatchSize: 512, LR: 1e-3, Batching: "by-question", Dropout: 0.5, Seed: 3}
	compareJEIRT(t, "cuda", 1e-3, tc, trainR, valR, feats, 768)
}

// BenchmarkCBMMIteration times one batched rank-1 cBMM iteration over K
// copies of an EmbedLLM-shaped matrix (112 models x 36,054 questions, all
// observed), reporting observed cells per second and the effective memory
// bandwidth from the bytes per cell the passes move (cbmm.IterationTraffic;
// BenchmarkDeviceCopy gives the device's own copy bandwidth beside it).
func BenchmarkCBMMIteration(b *testing.B) {
	tr := cbmm.IterationTraffic()
	b.Logf("bytes per cell: %d (pass A %d, pass B %d)", tr.PerCell(), tr.A, tr.B)
	r, _, err := synth.Generate(synth.Options{Kind: "2pl", Models: 112, Items: 36054, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	p := backend.NewCBMMProblem(r)
	for _, c := range []struct {
		device string
		K      int
	}{{"cpu", 4}, {"cuda", 4}, {"cuda", 64}} {
		b.Run(fmt.Sprintf("%s/K=%d", c.device, c.K), func(b *testing.B) {
			be, _, err := backend.Lookup[backend.CBMMDevice](c.device)
			if err != nil {
				b.Fatal(err)
			}
			probs := make([]*backend.CBMMProblem, c.K)
			for k := range probs {
				probs[k] = p
			}
			batch, err := be.Load(probs, 1, 1, 0)
			if err != nil {
				b.Fatal(err)
			}
			defer batch.Close()
			rng := rand.New(rand.NewPCG(5, 6))
			for k := range probs {
				th, a, bb := cbmmtest.RandomStart(rng, p.N, p.J, 1)
				batch.Set(k, th, a, bb)
			}
			active := make([]bool, c.K)
			for k := range active {
				active[k] = true
			}
			loss := make([]float64, c.K)
			if err := batch.Step(context.Background(), active, loss); err != nil { // warm-up (JIT, caches)
				b.Fatal(err)
			}
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if err := batch.Step(context.Background(), active, loss); err != nil {
					b.Fatal(err)
				}
			}
			per := time.Since(start).Seconds() / float64(b.N)
			cells := float64(c.K * p.Len())
			b.ReportMetric(cells/per, "cells/s")
			b.ReportMetric(cells*float64(tr.PerCell())/per/1e9, "GB/s")
		})
	}
}

// BenchmarkDeviceCopy is the reference for the cBMM pass's bandwidth: a
// device-to-device copy of 2 GiB (cuMemcpyDtoD), reported as the bytes read
// plus the bytes written per second, as the pass's figure counts them.
func BenchmarkDeviceCopy(b *testing.B) {
	g := mustDevice(b)
	const n = 2 << 30
	var src, dst gpu.Handle
	err := g.Do(func() error {
		var err error
		if src, err = g.Alloc("copy source", n); err != nil {
			return err
		}
		if dst, err = g.Alloc("copy destination", n); err != nil {
			return err
		}
		return g.Memset0(src, n/4)
	})
	if err != nil {
		b.Fatal(err)
	}
	defer g.Do(func() error { return gpu.FirstErr(g.Free(src), g.Free(dst)) })
	copyOnce := func() error {
		return g.Do(func() error {
			if err := cu.MemcpyDtoD(cu.DevicePtr(dst), cu.DevicePtr(src), n); err != nil {
				return err
			}
			return cu.Synchronize()
		})
	}
	if err := copyOnce(); err != nil { // warm-up
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if err := copyOnce(); err != nil {
			b.Fatal(err)
		}
	}
	per := time.Since(start).Seconds() / float64(b.N)
	b.ReportMetric(2*n/per/1e9, "GB/s")
}

// BenchmarkJEIRTEpoch times one JE-IRT training epoch on EmbedLLM-sized
// synthetic data (112 models x 36,054 questions, 768-d encoder vectors,
// d = 256, hidden 1536, batches of 512 pairs by question), on cpu and cuda.
func BenchmarkJEIRTEpoch(b *testing.B) {
	r, truth, err := synth.Generate(synth.Options{Kind: "jeirt", Models: 112, Items: 36054, FeatureDim: 768, EmbedDim: 32, Seed: 2})
	if err != nil {
		b.Fatal(err)
	}
	trainR, valR, _, err := eval.Split(r, eval.SplitOptions{Val: 0.1, Test: 0.1, Seed: 2})
	if err != nil {
		b.Fatal(err)
	}
	feats := make([]float32, 0, 36054*768)
	for _, f := range truth.Features {
		feats = append(feats, f...)
	}
	for _, device := range []string{"cpu", "cuda"} {
		b.Run(device, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				f, err := jeirt.Trainer{Epochs: 1, Device: device, Seed: 1}.Fit(context.Background(), trainR, valR, feats, 768)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(f.SecondsPerEpoch, "s/epoch")
				b.ReportMetric(f.History[0].ExamplesPerSec, "pairs/s")
				b.ReportMetric(f.History[0].ValLoss, "val-loss")
			}
		})
	}
}

// TestBootstrapAgreesWithCPU: the bootstrap's replicates fitted in one
// batch of 64 on the device give the same standard errors as on the CPU (the
// resampling is the host's, the same for both).
func TestBootstrapAgreesWithCPU(t *testing.T) {
	r, _, err := synth.Generate(synth.Options{Kind: "2pl", Models: 40, Items: 300, Missing: 0.3, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	full, err := irt.CBMM{}.Fit(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	run := func(device string) *irtstat.BootstrapResult {
		bs := irtstat.Bootstrap{B: 64, BatchSize: 64, Seed: 1, MaxMemory: -1, Fitter: irt.CBMM{Device: device, Tol: 1e-10, MaxIter: 3000}}
		res, err := bs.Run(ctx, r, full)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	cpu, dev := run("cpu"), run("cuda")
	for _, c := range []struct {
		what string
		x, y []float64
	}{{"θ SE", cpu.ThetaSE, dev.ThetaSE}, {"a SE", cpu.ASE, dev.ASE}, {"b SE", cpu.BSE, dev.BSE}} {
		var diff, scale float64
		for i := range c.x {
			diff = math.Max(diff, math.Abs(c.x[i]-c.y[i]))
			scale = math.Max(scale, math.Abs(c.x[i]))
		}
		if rel := diff / scale; !(rel <= 1e-3) {
			t.Errorf("%s: differs by %.3g relative to its largest value %.3g", c.what, rel, scale)
		} else {
			t.Logf("%s: largest difference %.3g relative to the largest value %.3g", c.what, rel, scale)
		}
	}
}
