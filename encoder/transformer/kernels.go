package transformer

import (
	"math"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/blas"
	G "gorgonia.org/gorgonia"
)

// Plain float32 kernels of the MPNet and ModernBERT forward passes. They run
// layer after layer on a few buffers reused for every layer and every batch
// (see arena), so the memory held is the weights plus one layer's
// activations, whatever the depth; matrix products go to the BLAS Gorgonia
// uses (Gonum's, or OpenBLAS with -tags openblas). Reductions (LayerNorm,
// softmax) accumulate in float64, as the BERT graph's custom ops do.

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
// torch stores it, [out, in], and b nil for a layer without bias.
func linearInto(y, x, w, b []float32, n, in, out int) {
	G.WhichBLAS().Sgemm(blas.NoTrans, blas.Trans, n, out, in, 1, x, in, w, in, 0, y, out)
	if b != nil {
		forRows(n, func(lo, hi int) {
			for r := lo; r < hi; r++ {
				row := y[r*out : (r+1)*out]
				for k := range row {
					row[k] += b[k]
				}
			}
		})
	}
}

// layerNorm is torch.nn.LayerNorm over rows of width d (Ba, Kiros and Hinton
// 2016): y = (x − mean)/√(var + eps)·γ + β with the biased variance; beta nil
// is a LayerNorm without bias. dst may be src.
func layerNorm(dst, src, gamma, beta []float32, n, d int, eps float64) {
	forRows(n, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			row := src[r*d : (r+1)*d]
			var mean float64
			for _, v := range row {
				mean += float64(v)
			}
			mean /= float64(d)
			var variance float64
			for _, v := range row {
				dv := float64(v) - mean
				variance += dv * dv
			}
			variance /= float64(d)
			inv := 1 / math.Sqrt(variance+eps)
			o := dst[r*d : (r+1)*d]
			for k, v := range row {
				y := (float64(v) - mean) * inv * float64(gamma[k])
				if beta != nil {
					y += float64(beta[k])
				}
				o[k] = float32(y)
			}
		}
	})
}

// gelu is the exact GELU of Hendrycks and Gimpel (2016), x·Φ(x), hidden_act
// "gelu" in Hugging Face (not the tanh approximation).
func gelu(x float32) float32 {
	v := float64(x)
	return float32(0.5 * v * (1 + math.Erf(v/math.Sqrt2)))
}

// geluInPlace applies gelu to every element.
func geluInPlace(x []float32) {
	forRows(len(x), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			x[i] = gelu(x[i])
		}
	})
}

// geglu is ModernBertMLP's gated unit (Shazeer 2020, GeGLU): the rows of x
// (n × 2f) are split into input (first f) and gate (last f), and
// dst = gelu(input) ⊙ gate (n × f).
func geglu(dst, x []float32, n, f int) {
	forRows(n, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			in, gate, o := x[r*2*f:r*2*f+f], x[r*2*f+f:(r+1)*2*f], dst[r*f:(r+1)*f]
			for k := range o {
				o[k] = gelu(in[k]) * gate[k]
			}
		}
	})
}

// addInto sets dst = a + b elementwise (float32, as torch adds).
func addInto(dst, a, b []float32) {
	forRows(len(dst), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			dst[i] = a[i] + b[i]
		}
	})
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
	var wg sync.WaitGroup
	next := make(chan int, b*heads)
	for i := 0; i < b*heads; i++ {
		next <- i
	}
	close(next)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(s []float32) {
			defer wg.Done()
			e := make([]float64, keys)
			bl := G.WhichBLAS()
			for bh := range next {
				bi, h := bh/heads, bh%heads
				keep := mask[bi*l : (bi+1)*l]
				for i0 := 0; i0 < l; i0 += block {
					i1 := min(i0+block, l)
					klo, khi := 0, l
					if window > 0 {
						klo, khi = max(0, i0-window), min(l, i1-1+window+1)
					}
					nk := khi - klo
					qa := q[(bi*l+i0)*width+h*dh:]
					ka := k[(bi*l+klo)*width+h*dh:]
					bl.Sgemm(blas.NoTrans, blas.Trans, i1-i0, nk, dh, 1, qa, width, ka, width, 0, s, nk)
					for i := i0; i < i1; i++ {
						row := s[(i-i0)*nk : (i-i0+1)*nk]
						maxV := math.Inf(-1)
						for j := range row {
							kj := klo + j
							if keep[kj] == 0 || (window > 0 && (kj-i > window || i-kj > window)) {
								e[j] = math.Inf(-1)
								continue
							}
							x := row[j] / scale
							if bias != nil {
								x += bias[(h*l+i)*l+kj]
							}
							e[j] = float64(x)
							maxV = math.Max(maxV, e[j])
						}
						var sum float64
						for j := range row {
							if math.IsInf(e[j], -1) {
								e[j] = 0
								continue
							}
							e[j] = math.Exp(e[j] - maxV)
							sum += e[j]
						}
						if sum == 0 { // every key masked: no attention at all
							sum = 1
						}
						for j := range row {
							row[j] = float32(e[j] / sum)
						}
					}
					va := v[(bi*l+klo)*width+h*dh:]
					bl.Sgemm(blas.NoTrans, blas.NoTrans, i1-i0, dh, nk, 1, s, nk, va, width, 0, ctx[(bi*l+i0)*d+h*dh:], d)
				}
			}
		}(scores[w*block*keys : (w+1)*block*keys])
	}
	wg.Wait()
}
