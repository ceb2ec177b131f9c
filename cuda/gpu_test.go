//go:build jeirtcuda

// Tests and benchmarks that need a GPU. They build everywhere with
// `go test -tags jeirtcuda -c ./cuda/`, but the test binary only starts on a
// machine with an NVIDIA GPU and driver (see scripts/gpu-check.sh).

package cuda

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/jeirt/jeirt/cuda/internal/cbmm/cbmmtest"
	"github.com/jeirt/jeirt/cuda/internal/gpu"
	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/backend"
	"github.com/jeirt/jeirt/train/eval"
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

// TestJEIRTAgreesWithCPU is the acceptance test of JE-IRT training: after 50
// and 100 steps, training and validation losses within 1e-3 relative
// (float32, with atomic gradient sums on the GPU).
func TestJEIRTAgreesWithCPU(t *testing.T) { checkJEIRTAgreement(t, "cuda", 1e-3) }

// bytesPerCell is the device traffic of one rank-1 iteration per observed
// cell: pass A reads the cell (4) and θ_i (8) and writes ỹ (8); pass B reads
// the cell's model-major entry (4 + 4), ỹ (8), a_j and b_j (16).
const bytesPerCell = 52

// BenchmarkCBMMIteration times one batched rank-1 cBMM iteration over K
// copies of an EmbedLLM-shaped matrix (112 models x 36,054 questions, all
// observed), reporting observed cells per second and the effective memory
// bandwidth under the 52-bytes-per-cell model (H200: about 4.8 TB/s).
func BenchmarkCBMMIteration(b *testing.B) {
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
			b.ReportMetric(cells*bytesPerCell/per/1e9, "GB/s")
		})
	}
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
