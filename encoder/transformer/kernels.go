package transformer

import (
	"math"
	"runtime"
	"sync/atomic"

	"github.com/jeirt/jeirt/model/simd"
	"gonum.org/v1/gonum/blas"
)

// Float32 kernels of the MPNet and ModernBERT forward passes (and of the
// BERT graph's custom ops). They run layer after layer on a few buffers
// reused for every layer and every batch (see arena), so the memory held is
// the weights plus one layer's activations, whatever the depth. Matrix
// products go to matmul (package model/simd, or OpenBLAS with -tags
// openblas), the elementwise work to model/simd's vector kernels, split
// into one range of rows per core. Reductions (LayerNorm) accumulate in
// float64.

// arena hands out named float32 buffers, grown when too small and otherwise
// reused.
type arena map[string][]float32

func (a arena) get(name string, n int) []float32 {
	if cap(a[name]) < n {
		a[name] = make([]float32, n)
	}
	return a[name][:n]
}

// linearInto is torch.nn.Linear on n rows: y = x·Wᵀ (+ b), with W stored as
// torch stores it, [out, in], and b nil for a layer without bias; the bias is
// added as the product is stored.
func linearInto(y, x, w, b []float32, n, in, out int) {
	matmul(blas.NoTrans, blas.Trans, n, out, in, 1, x, in, w, in, 0, y, out, b)
}

// layerNorm is torch.nn.LayerNorm over rows of width d (Ba, Kiros and Hinton
// 2016): y = (x − mean)/√(var + eps)·γ + β with the biased variance; beta nil
// is a LayerNorm without bias. dst may be src.
func layerNorm(dst, src, gamma, beta []float32, n, d int, eps float64) {
	forRows(n, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			simd.LayerNorm(dst[r*d:(r+1)*d], src[r*d:(r+1)*d], gamma, beta, eps)
		}
	})
}

// forElements runs f over [0,n) elements, one contiguous range per core
// when there are at least 1,024 elements per core.
func forElements(n int, f func(lo, hi int)) { simd.ParallelRange(n, 1024, f) }

// geluInto sets dst = gelu(src), the exact GELU of Hendrycks and Gimpel
// (2016), x·Φ(x), hidden_act "gelu" in Hugging Face (not the tanh
// approximation). dst may be src.
func geluInto(dst, src []float32) {
	forElements(len(src), func(lo, hi int) { simd.GELU(dst[lo:hi], src[lo:hi]) })
}

// geglu is ModernBertMLP's gated unit (Shazeer 2020, GeGLU): the rows of x
// (n × 2f) are split into input (first f) and gate (last f), and
// dst = gelu(input) ⊙ gate (n × f).
func geglu(dst, x []float32, n, f int) {
	forRows(n, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			in, gate, o := x[r*2*f:r*2*f+f], x[r*2*f+f:(r+1)*2*f], dst[r*f:(r+1)*f]
			simd.GELU(o, in)
			simd.Mul(o, o, gate)
		}
	})
}

// addInto sets dst = a + b elementwise (float32, as torch adds).
func addInto(dst, a, b []float32) {
	forElements(len(dst), func(lo, hi int) { simd.Add(dst[lo:hi], a[lo:hi], b[lo:hi]) })
}

// attention is scaled dot-product attention over heads (Vaswani et al. 2017,
// §3.2.1) for a batch of B sequences of L tokens:
//
//	P_bh = softmax(Q_bh·K_bhᵀ / scale + bias_h + mask_b),  ctx_bh = P_bh·V_bh
//
// q, k and v hold one row per token with leading dimension ld (so the Q, K
// and V of a fused projection can be read in place); head h is columns
// h·dh … h·dh+dh−1. ctx is (B·L) × (H·dh). bias (H × L × L), when not nil, is
// MPNet's relative position bias. mask (B·L) is 1 for real tokens and 0 for
// padding, which gets probability exactly 0 as a key. window > 0 also masks
// keys farther than window from the query (ModernBERT's sliding-window
// layers), and only the keys inside it are computed.
func attention(ctx, q, k, v []float32, ld int, mask, bias []float32, b, l, heads, dh int, scale float32, window int, a arena, role string) {
	const block = 128 // query rows per score block
	workers := min(runtime.GOMAXPROCS(0), b*heads)
	keys := l
	if window > 0 {
		keys = min(l, block+2*window)
	}
	scores := a.get(role+".scores", workers*block*keys)
	width := ld
	d := heads * dh
	// The masked keys of each text (right padding, usually a tail).
	masked := make([][]int, b)
	for bi := range masked {
		for j, m := range mask[bi*l : (bi+1)*l] {
			if m == 0 {
				masked[bi] = append(masked[bi], j)
			}
		}
	}
	negInf := float32(math.Inf(-1))
	var next atomic.Int64
	simd.Parallel(workers, func(w int) {
		s := scores[w*block*keys : (w+1)*block*keys]
		for {
			bh := int(next.Add(1)) - 1
			if bh >= b*heads {
				return
			}
			bi, h := bh/heads, bh%heads
			for i0 := 0; i0 < l; i0 += block {
				i1 := min(i0+block, l)
				klo, khi := 0, l
				if window > 0 {
					klo, khi = max(0, i0-window), min(l, i1-1+window+1)
				}
				nk := khi - klo
				qa := q[(bi*l+i0)*width+h*dh:]
				ka := k[(bi*l+klo)*width+h*dh:]
				// Q·Kᵀ/scale: the division folded into the product's
				// alpha (1/scale), as torch's scaled_dot_product_attention
				// multiplies.
				matmulSerial(blas.NoTrans, blas.Trans, i1-i0, nk, dh, 1/scale, qa, width, ka, width, 0, s, nk)
				for i := i0; i < i1; i++ {
					row := s[(i-i0)*nk : (i-i0+1)*nk]
					if bias != nil {
						simd.Add(row, row, bias[(h*l+i)*l+klo:(h*l+i)*l+khi])
					}
					// Keys outside the window get 0; padding keys inside it
					// −Inf before the softmax, which gives them exactly 0.
					lo, hi := 0, nk
					if window > 0 {
						lo, hi = max(0, i-window-klo), min(nk, i+window+1-klo)
					}
					for _, j := range masked[bi] {
						if j-klo >= lo && j-klo < hi {
							row[j-klo] = negInf
						}
					}
					clear(row[:lo])
					clear(row[hi:])
					simd.Softmax(row[lo:hi])
				}
				va := v[(bi*l+klo)*width+h*dh:]
				matmulSerial(blas.NoTrans, blas.NoTrans, i1-i0, dh, nk, 1, s, nk, va, width, 0, ctx[(bi*l+i0)*d+h*dh:], d)
			}
		}
	})
}
