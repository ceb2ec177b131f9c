package simd

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// EncoderShapes are the matrix products of the encoders' layers, as
// torch.nn.Linear (rows × in times Wᵀ, W out × in): rows 4096 is a batch of
// 32 texts of 128 tokens, 128 a single text.
var EncoderShapes = []struct {
	Name          string
	Rows, In, Out int
}{
	{"MiniLM-qkv-b32", 4096, 384, 384}, {"MiniLM-ff1-b32", 4096, 384, 1536}, {"MiniLM-ff2-b32", 4096, 1536, 384},
	{"MiniLM-qkv-b1", 128, 384, 384}, {"MiniLM-ff1-b1", 128, 384, 1536}, {"MiniLM-ff2-b1", 128, 1536, 384},
	{"MPNet-ff1-b32", 4096, 768, 3072}, {"MPNet-ff2-b32", 4096, 3072, 768},
	{"ModernBERT-base-Wqkv-b32", 4096, 768, 2304}, {"ModernBERT-base-Wo-b32", 4096, 1152, 768},
	{"ModernBERT-large-Wi-b32", 4096, 1024, 5248}, {"ModernBERT-large-Wo-b32", 4096, 2624, 1024},
}

// weightsInFlight is the bytes of weights BenchmarkSgemm cycles through at
// each shape: more than a last-level cache, as a forward meets them (it
// reads every layer's weights once, 42 MB for a MiniLM-sized BERT).
const weightsInFlight = 64 << 20

// BenchmarkSgemm times Linear at each level and encoder shape, on all cores,
// and Gonum's Sgemm (Gorgonia's default BLAS) for comparison, in GFLOP/s and
// GFLOP per CPU-second (which holds up on a shared machine, though it counts
// the workers' spinning). SHAPE/LEVEL is LinearPacked with the weights
// packed at load, as the BERT encoder runs its layers, and cycling through
// weightsInFlight of them so that they come from memory as in a forward;
// SHAPE/LEVEL/pack-per-call is Linear, which packs W at every call (the
// MPNet and ModernBERT encoders, the JE-IRT adapter). Each call is one
// product, as a forward makes them one after another.
func BenchmarkSgemm(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, s := range EncoderShapes {
		x, w, bias := randSlice(rng, s.Rows*s.In), randSlice(rng, s.Out*s.In), randSlice(rng, s.Out)
		y := make([]float32, s.Rows*s.Out)
		flops := 2 * float64(s.Rows) * float64(s.In) * float64(s.Out)
		for _, l := range Levels() {
			b.Run(fmt.Sprintf("%s/%v", s.Name, l), func(b *testing.B) {
				old := SetLevel(l)
				defer SetLevel(old)
				packed := make([]*Packed, max(1, weightsInFlight/(4*s.In*s.Out)))
				for i := range packed {
					packed[i] = PackLinear(w, s.Out, s.In)
				}
				b.ResetTimer()
				cpu0 := cpuSeconds()
				for i := 0; i < b.N; i++ {
					LinearPacked(y, x, packed[i%len(packed)], bias, s.Rows)
				}
				reportFlops(b, flops*float64(b.N), cpuSeconds()-cpu0)
			})
			b.Run(fmt.Sprintf("%s/%v/pack-per-call", s.Name, l), func(b *testing.B) {
				old := SetLevel(l)
				defer SetLevel(old)
				cpu0 := cpuSeconds()
				for i := 0; i < b.N; i++ {
					Linear(y, x, w, bias, s.Rows, s.In, s.Out)
				}
				reportFlops(b, flops*float64(b.N), cpuSeconds()-cpu0)
			})
		}
		b.Run(s.Name+"/gonum", func(b *testing.B) {
			cpu0 := cpuSeconds()
			for i := 0; i < b.N; i++ {
				gonum.Implementation{}.Sgemm(blas.NoTrans, blas.Trans, s.Rows, s.Out, s.In, 1, x, s.In, w, s.In, 0, y, s.Out)
			}
			reportFlops(b, flops*float64(b.N), cpuSeconds()-cpu0)
		})
	}
}

func reportFlops(b *testing.B, flops, cpu float64) {
	b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	if cpu > 0 {
		b.ReportMetric(flops/cpu/1e9, "GFLOP/cpu-s")
	}
}

// BenchmarkAttentionProducts times the two products of one attention head
// (128 queries, 128 keys, head size 32 and 64) on one goroutine, as the
// encoders run them, one head per core.
func BenchmarkAttentionProducts(b *testing.B) {
	rng := rand.New(rand.NewPCG(2, 2))
	for _, dh := range []int{32, 64} {
		q, k := randSlice(rng, 128*dh), randSlice(rng, 128*dh)
		s := make([]float32, 128*128)
		ctx := make([]float32, 128*dh)
		for _, l := range Levels() {
			b.Run(fmt.Sprintf("dh=%d/%v", dh, l), func(b *testing.B) {
				old := SetLevel(l)
				defer SetLevel(old)
				for i := 0; i < b.N; i++ {
					SgemmSerial(blas.NoTrans, blas.Trans, 128, 128, dh, 1, q, dh, k, dh, 0, s, 128)
					SgemmSerial(blas.NoTrans, blas.NoTrans, 128, dh, 128, 1, s, 128, k, dh, 0, ctx, dh)
				}
				b.ReportMetric(4*128*128*float64(dh)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkElementwise times the vector kernels on a batch-32 MiniLM
// layer's worth of values (4096 rows of 384, softmax rows of 128).
func BenchmarkElementwise(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 3))
	x := randSlice(rng, 4096*384)
	y := make([]float32, len(x))
	g, be := randSlice(rng, 384), randSlice(rng, 384)
	for _, l := range Levels() {
		old := SetLevel(l)
		b.Run("GELU/"+l.String(), func(b *testing.B) {
			b.SetBytes(int64(4 * len(x)))
			for i := 0; i < b.N; i++ {
				GELU(y, x)
			}
		})
		b.Run("Softmax/"+l.String(), func(b *testing.B) {
			b.SetBytes(int64(4 * len(x)))
			for i := 0; i < b.N; i++ {
				copy(y, x)
				for r := 0; r < len(y); r += 128 {
					Softmax(y[r : r+128])
				}
			}
		})
		b.Run("LayerNorm/"+l.String(), func(b *testing.B) {
			b.SetBytes(int64(4 * len(x)))
			for i := 0; i < b.N; i++ {
				for r := 0; r < len(y); r += 384 {
					LayerNorm(y[r:r+384], x[r:r+384], g, be, 1e-12)
				}
			}
		})
		x64, y64 := make([]float64, len(x)), make([]float64, len(x))
		for i, v := range x {
			x64[i] = float64(v) * 4
		}
		for _, k := range []struct {
			name string
			f    func(dst, src []float64)
		}{{"Exp64", Exp64}, {"Sigmoid64", Sigmoid64}} {
			b.Run(k.name+"/"+l.String(), func(b *testing.B) {
				b.SetBytes(int64(8 * len(x64)))
				for i := 0; i < b.N; i++ {
					k.f(y64, x64)
				}
			})
		}
		SetLevel(old)
	}
}

// jeirtProducts lists the five products of a step with U rows: the two
// forward products x·W1ᵀ and h·W2ᵀ, and the backward ones gqᵀ·h (∂W2),
// gq·W2 (∂h) and ghᵀ·x (∂W1).
func jeirtProducts(U int) []struct {
	name    string
	tA, tB  blas.Transpose
	m, n, k int
} {
	const D, H, d = 384, 768, 256
	return []struct {
		name    string
		tA, tB  blas.Transpose
		m, n, k int
	}{
		{"xW1t", blas.NoTrans, blas.Trans, U, H, D},
		{"hW2t", blas.NoTrans, blas.Trans, U, d, H},
		{"gqtH", blas.Trans, blas.NoTrans, d, H, U},
		{"gqW2", blas.NoTrans, blas.NoTrans, U, H, d},
		{"ghtX", blas.Trans, blas.NoTrans, H, D, U},
	}
}

// BenchmarkSgemmJEIRT times the products of a JE-IRT step (all cores) at
// each level and Gonum's.
func BenchmarkSgemmJEIRT(b *testing.B) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, U := range []int{6, 512} {
		for _, p := range jeirtProducts(U) {
			lda, ldb := p.k, p.n
			if p.tA == blas.Trans {
				lda = p.m
			}
			if p.tB == blas.Trans {
				ldb = p.k
			}
			a, bb, c := randSlice(rng, p.m*p.k), randSlice(rng, p.k*p.n), make([]float32, p.m*p.n)
			flops := 2 * float64(p.m) * float64(p.n) * float64(p.k)
			run := func(name string, f func()) {
				b.Run(fmt.Sprintf("U=%d/%s/%s", U, p.name, name), func(b *testing.B) {
					cpu0 := cpuSeconds()
					for i := 0; i < b.N; i++ {
						f()
					}
					reportFlops(b, flops*float64(b.N), cpuSeconds()-cpu0)
				})
			}
			for _, l := range Levels() {
				run(l.String(), func() {
					old := SetLevel(l)
					Sgemm(p.tA, p.tB, p.m, p.n, p.k, 1, a, lda, bb, ldb, 0, c, p.n)
					SetLevel(old)
				})
			}
			run("gonum", func() {
				gonum.Implementation{}.Sgemm(p.tA, p.tB, p.m, p.n, p.k, 1, a, lda, bb, ldb, 0, c, p.n)
			})
		}
	}
}

// BenchmarkAdamW times one AdamW update of a JE-IRT adapter's worth of
// parameters (384·768 + 768·256 + 112·256, EmbedLLM size) on one goroutine,
// at each level.
func BenchmarkAdamW(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 5))
	n := 384*768 + 768*256 + 112*256
	p, g, m, v := randSlice(rng, n), randSlice(rng, n), make([]float32, n), make([]float32, n)
	a := AdamW{Beta1: 0.9, Beta2: 0.999, Decay: 1 - 1e-3*0.01, StepSize: 1e-3, InvSqrtBC2: 1, Eps: 1e-8}
	for _, l := range Levels() {
		b.Run(l.String(), func(b *testing.B) {
			old := SetLevel(l)
			defer SetLevel(old)
			b.SetBytes(int64(28 * n)) // read p, g, m, v; write p, m, v
			for i := 0; i < b.N; i++ {
				a.Update(p, g, m, v)
			}
		})
	}
}

// BenchmarkLogisticCells times the cBMM cell pass of one item (with the
// targets) at each level: 100 cells of 112 models, as an EmbedLLM-sized
// item with 10% of its cells missing, and 1,000 cells.
func BenchmarkLogisticCells(b *testing.B) {
	rng := rand.New(rand.NewPCG(6, 6))
	theta := make([]float64, 1000)
	for i := range theta {
		theta[i] = rng.NormFloat64()
	}
	for _, n := range []int{100, 1000} {
		cells := make([]uint32, n)
		for k := range cells {
			cells[k] = uint32(rng.IntN(min(n+12, len(theta))))<<1 | uint32(rng.IntN(2))
		}
		yt := make([]float64, n)
		c := LogisticCells{A: 1.1, B: -0.3, Sigma: 1}
		for _, l := range Levels() {
			b.Run(fmt.Sprintf("cells=%d/%v", n, l), func(b *testing.B) {
				old := SetLevel(l)
				defer SetLevel(old)
				for i := 0; i < b.N; i++ {
					c.Binary(cells, theta, yt)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/cell")
			})
		}
	}
}
