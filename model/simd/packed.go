package simd

import (
	"runtime"

	"gonum.org/v1/gonum/blas"
)

// Packed is the right operand of products, op(B) (k × n), packed once into
// the panels the micro-kernel reads: the weights of a layer, which every
// forward would otherwise pack again (a fifth of a batch-1 forward of a
// MiniLM-sized BERT). Panel q holds columns q·nr … q·nr+nr−1 as k rows of
// nr values, the last one zero-padded; nr is the level's at packing time.
// At another level (tests switch levels) the products repack from it.
type Packed struct {
	k, n, nr int
	data     []float32
}

// Pack packs op(B), k × n, for the current level.
func Pack(tB blas.Transpose, k, n int, b []float32, ldb int) *Packed {
	g := newGemm(blas.NoTrans, tB, 1, n, k, 1, make([]float32, max(1, k)), max(1, k), b, ldb, 0, make([]float32, max(1, n)), max(1, n))
	nr := use.nr
	panels := (n + nr - 1) / nr
	p := &Packed{k: k, n: n, nr: nr, data: make([]float32, panels*k*nr)}
	if k > 0 {
		ParallelRange(panels, 1, func(lo, hi int) {
			g.packB(p.data[lo*k*nr:hi*k*nr], 0, k, lo*nr, min(hi*nr, n)-lo*nr, nr)
		})
	}
	return p
}

// PackLinear packs a torch.nn.Linear weight W (out × in, as torch stores
// it) as the op(B) = Wᵀ of y = x·Wᵀ.
func PackLinear(w []float32, out, in int) *Packed { return Pack(blas.Trans, in, out, w, in) }

// Dims returns k and n: op(B) is k × n.
func (p *Packed) Dims() (k, n int) { return p.k, p.n }

// at is op(B)[i, j].
func (p *Packed) at(i, j int) float32 { return p.data[(j/p.nr)*p.k*p.nr+i*p.nr+j%p.nr] }

// Unpack returns op(B) transposed, n × k row-major: for PackLinear's W, W
// itself in torch's layout.
func (p *Packed) Unpack() []float32 {
	t := make([]float32, p.n*p.k)
	for j := 0; j < p.n; j++ {
		for i := 0; i < p.k; i++ {
			t[j*p.k+i] = p.at(i, j)
		}
	}
	return t
}

// LinearPacked is Linear with packed weights: y = x·op(B) + bias, x rows ×
// k, y rows × n, bias (nil for none) n values, on up to GOMAXPROCS
// goroutines.
func LinearPacked(y, x []float32, w *Packed, bias []float32, rows int) {
	if bias != nil && len(bias) < w.n {
		panic("kernel: bias shorter than n")
	}
	// A gemm whose op(B) is Bᵀ of an n × k placeholder: the checks of x and y,
	// and then pb in place of b.
	g := newGemm(blas.NoTrans, blas.NoTrans, rows, w.n, w.k, 1, x, max(1, w.k), nil, max(1, w.n), 0, y, max(1, w.n))
	g.pb, g.bias = w, bias
	g.run(runtime.GOMAXPROCS(0))
}
