//go:build jeirtcuda

package cuda

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/jeirt/jeirt/encoder"
)

// TestGPUEncoderFixtures runs the three fixtures through the GPU forward (the
// sgemm kernel for the dense products) with the tolerances of the harness
// test: within 2e-6 of the float64 references, 1e-6 of the CPU encoder.
func TestGPUEncoderFixtures(t *testing.T) {
	g := mustDevice(t)
	for _, name := range []string{"tiny-bert", "tiny-mpnet", "tiny-modernbert"} {
		t.Run(name, func(t *testing.T) {
			dir, exp := openFixture(t, name)
			cpu, err := encoder.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			dev, err := newEncoder(g, kernelDense{g: g}, cpu)
			if err != nil {
				t.Fatal(err)
			}
			defer dev.Close()
			checkEncoderFixture(t, dev, cpu, exp, false)
		})
	}
}

// TestGPUEncoderDense runs the fixtures through the dense products the GPU
// encoder picks (cuBLAS where it loads and agrees with the kernel).
func TestGPUEncoderDense(t *testing.T) {
	g := mustDevice(t)
	mm := gpuDense(g)
	t.Logf("dense products: %s", mm.describe())
	for _, name := range []string{"tiny-bert", "tiny-modernbert"} {
		dir, exp := openFixture(t, name)
		cpu, err := encoder.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		dev, err := newEncoder(g, mm, cpu)
		if err != nil {
			t.Fatal(err)
		}
		checkEncoderFixture(t, dev, cpu, exp, false)
		dev.Close()
	}
}

// TestGPUEncoderPrecision runs the three fixtures through the GPU forward
// with TF32 and bfloat16 tensor-core products (cublasGemmEx): within the
// harness's stated tolerances of the float64 references (precisionTolerance),
// and the fingerprint marks the precision.
func TestGPUEncoderPrecision(t *testing.T) {
	g := mustDevice(t)
	if _, err := sharedCuBLAS(g); err != nil {
		t.Skipf("no cuBLAS: %v", err)
	}
	for _, name := range []string{"tiny-bert", "tiny-mpnet", "tiny-modernbert"} {
		dir, exp := openFixture(t, name)
		cpu, err := encoder.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		texts := make([]string, len(exp.Sentences))
		for i, s := range exp.Sentences {
			texts[i] = s.Text
		}
		for _, p := range []Precision{TF32, BF16} {
			mm, err := gpuReducedDense(g, p)
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			dev, err := newEncoder(g, mm, cpu)
			if err != nil {
				t.Fatal(err)
			}
			got, err := dev.Encode(context.Background(), texts)
			if err != nil {
				t.Fatal(err)
			}
			var worst float64
			for i := range texts {
				worst = math.Max(worst, maxDiff64(got[i], exp.Sentences[i].PooledNormalized))
			}
			t.Logf("%s %s (%s): max |diff| from the float64 reference %.2g", name, p, mm.describe(), worst)
			if !(worst <= precisionTolerance[p]) {
				t.Errorf("%s %s: off by %.3g, tolerance %g", name, p, worst, precisionTolerance[p])
			}
			if fp := dev.Fingerprint(); fp != cpu.Fingerprint()+"/precision="+string(p) {
				t.Errorf("%s %s: fingerprint %s", name, p, fp)
			}
			dev.Close()
		}
	}
}

// encoderFLOPs counts one forward pass over l tokens: the linear layers and
// the two attention products (the sliding windows are the whole text at 128
// tokens).
func encoderFLOPs(s encoderSize, l int) float64 {
	d, ff, L := float64(s.hidden), float64(s.inter), float64(l)
	mlp := 4 * L * d * ff
	if s.arch == "modernbert" {
		mlp = 6 * L * d * ff // GeGLU's input is 2·ff wide
	}
	return float64(s.layers) * (8*L*d*d + mlp + 4*L*L*d)
}

// BenchmarkEncoderThroughput is the GPU forward of MiniLM-, MPNet-base- and
// ModernBERT-large-sized models (random weights) on batches of 256 texts of
// 128 tokens, pooled and normalised, with the linear layers in each
// precision (fp32, tf32, bf16): sentences/s and GFLOP/s, after one warm-up
// batch. fp32 runs on cuBLAS's sgemm when it loads, else the sgemm kernel
// (JEIRT_GEMM=kernel forces it); tf32 and bf16 need cuBLAS. Each size's
// weights are made and uploaded once. scripts/gpu-check.sh runs it with the
// CPU encoders' benchmarks (package encoder/transformer) in the same run.
func BenchmarkEncoderThroughput(b *testing.B) {
	const batch, l = 256, 128
	g := mustDevice(b)
	for _, s := range encoderSizes {
		rng := rand.New(rand.NewPCG(1, 2))
		var f *encoderForward
		ids, pos, mask := paddedBatch(s, batch, l, rng)
		for _, p := range []Precision{FP32, TF32, BF16} {
			b.Run(fmt.Sprintf("%s/%s", s.name, p), func(b *testing.B) {
				if f == nil {
					var err error
					if f, err = newEncoderForward(g, gpuDense(g), sizedWeights(s, rng)); err != nil {
						b.Fatal(err)
					}
				}
				if f.mm.precision() != p {
					if _, err := sharedCuBLAS(g); err != nil {
						b.Skipf("no cuBLAS: %v", err)
					}
					mm, err := gpuReducedDense(g, p)
					if err != nil {
						b.Fatal(err)
					}
					if err := g.Do(f.closeDense); err != nil {
						b.Fatal(err)
					}
					f.mm = mm
				}
				if _, err := f.forwardPadded(batch, l, ids, pos, mask); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for range b.N {
					if _, err := f.forwardPadded(batch, l, ids, pos, mask); err != nil {
						b.Fatal(err)
					}
				}
				sps := float64(b.N*batch) / b.Elapsed().Seconds()
				b.ReportMetric(sps, "sentences/s")
				b.ReportMetric(sps*encoderFLOPs(s, l)/1e9, "GFLOP/s")
			})
		}
		if f != nil {
			f.close()
		}
	}
}

// TestGPUAttention runs the attention kernels at the head sizes the fixtures
// do not reach (64, 96 and 128, each its kernel's capacity, and 8, 32 and 80
// zero-padded), with a window, a relative bias and padding, against the
// float64 reference on the device.
func TestGPUAttention(t *testing.T) { checkAttention(t, mustDevice(t)) }

// TestGPUEncoderPooling checks every pooling mode (CLS, max, mean,
// mean_sqrt_len, concatenated; with and without normalisation) on the
// device against the CPU encoder.
func TestGPUEncoderPooling(t *testing.T) {
	g := mustDevice(t)
	checkEncoderPooling(t, g, kernelDense{g: g})
}
