package simd

// sdotKernel is one of the kernels of a product A·Wᵀ with few rows (see
// asmgen.sdot): for i < its rows and j < 4, C[i, j] = alpha·Σ_p A[i, p]·W[j, p]
// + bias[j] (+ C[i, j] when load), k a multiple of the lanes.
type sdotKernel func(k int, a *float32, lda int, w *float32, ldw int, c *float32, ldc int, bias *float32, load int, alpha float32)

// dotMaxRows is the most rows of C a product A·Bᵀ takes the few-rows path
// with. There the blocked path spends more time packing op(B) (all of a
// weight matrix, for a few rows of x·Wᵀ) than multiplying, while the
// few-rows kernels read B in place and keep the sums as vectors over the
// depth, reduced once per tile. On a Zen 5 core (one goroutine, depths 384
// and 768) they ran at 190–230 GFLOP/s from 6 rows on at AVX-512 and
// 105–125 at AVX2, against 35–160 for the blocked path from 6 to 64 rows;
// from about 96 rows on the two are even, and the encoders' products (128
// rows and more) stay on the blocked path.
const dotMaxRows = 64

// useDot reports whether the product goes to the few-rows kernels: C =
// alpha·A·Bᵀ (+ bias) + beta·C with A and B row-major, m ≤ dotMaxRows and
// the depth a multiple of the lanes.
func (g *gemm) useDot(o *ops) bool {
	return len(o.sdot) > 0 && !g.tA && g.tB && g.pb == nil && g.m <= dotMaxRows && g.k%o.lanes == 0
}

// runDot computes the product with the few-rows kernels: the columns of C
// (rows of B) in groups of 4, cut into one range per goroutine; for each
// group, the rows of A in blocks of the kernels' most rows.
func (g *gemm) runDot(o *ops, threads int) {
	if g.beta != 0 && g.beta != 1 {
		g.scaleC()
	}
	load := 0
	if g.beta != 0 {
		load = 1
	}
	parts := 1
	if threads > 1 && float64(g.m)*float64(g.n)*float64(g.k)*2 >= minParallelFlops {
		parts = min(threads, (g.n+3)/4)
	}
	bounds := blocks(g.n, parts, 4)
	Parallel(parts, func(t int) { g.dotCols(o, bounds[t], bounds[t+1], load) })
}

// dotCols computes the columns j0:j1 of C.
func (g *gemm) dotCols(o *ops, j0, j1, load int) {
	mi := len(o.sdot)
	var w *workspace
	for j := j0; j < j1; j += 4 {
		nj := min(4, j1-j)
		var bias *float32
		if g.bias != nil && nj == 4 {
			bias = &g.bias[j]
		}
		for i := 0; i < g.m; i += mi {
			rows := min(mi, g.m-i)
			kern := o.sdot[rows-1]
			if nj == 4 {
				kern(g.k, &g.a[i*g.lda], g.lda, &g.b[j*g.ldb], g.ldb, &g.c[i*g.ldc+j], g.ldc, bias, load, g.alpha)
				continue
			}
			// The last columns: their rows of B copied into a zero-padded
			// block of 4, the tile computed apart and added as the kernel
			// adds it.
			if w == nil {
				w = getWorkspace(o)
				defer workspaces.Put(w)
				if cap(w.bp) < 4*g.k {
					w.bp = make([]float32, 4*g.k)
				}
				wb := w.bp[:4*g.k]
				clear(wb)
				for q := 0; q < nj; q++ {
					copy(wb[q*g.k:(q+1)*g.k], g.b[(j+q)*g.ldb:(j+q)*g.ldb+g.k])
				}
			}
			t := w.tile[:mi*4]
			kern(g.k, &g.a[i*g.lda], g.lda, &w.bp[0], g.k, &t[0], 4, nil, 0, g.alpha)
			for r := 0; r < rows; r++ {
				crow := g.c[(i+r)*g.ldc+j : (i+r)*g.ldc+j+nj]
				for q := range crow {
					v := t[r*4+q]
					if g.bias != nil {
						v += g.bias[j+q]
					}
					if load == 1 {
						v += crow[q]
					}
					crow[q] = v
				}
			}
		}
	}
}
