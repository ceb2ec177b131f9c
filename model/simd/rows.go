package simd

// rowsKernel is the micro-kernel of a product with few rows and op(B) = B
// (see asmgen.sgemmRows): C[0:6, 0:nr] = alpha·Â·B[0:kc, 0:nr] + bias
// (+ C when load), B's row p at b + p·ldb elements.
type rowsKernel func(kc int, a *float32, rsa, csa int, b *float32, ldb int, c *float32, ldc int, bias *float32, load int, alpha float32)

// rowsMR is the rows of the few-rows micro-kernel at every level.
const rowsMR = 6

// rowsMaxRows is the most rows of C a product with op(B) = B takes the
// few-rows path with: there the blocked path copies all of B (a weight
// matrix) into panels for a few rows of C, and computes its 12-row tiles
// half empty at AVX-512. On a Zen 5 core (one goroutine, 768 and 384 columns)
// the few-rows kernel ran 4–5 times faster at 6 rows and still 1.1–1.3
// times at 96 (both levels); the encoders' products with op(B) = B (128 rows
// and more) stay on the blocked path.
const rowsMaxRows = 64

// useRows reports whether the product goes to the few-rows micro-kernel: op(B)
// = B (not packed ahead), m ≤ rowsMaxRows.
func (g *gemm) useRows(o *ops) bool {
	return o.rows != nil && !g.tB && g.pb == nil && g.m <= rowsMaxRows
}

// runRows computes the product with the few-rows micro-kernel: the columns
// of C in panels of the kernel's width, cut into one range per goroutine,
// each panel for every block of 6 rows over the whole depth at once. B is
// read in place but for a last partial panel, which is copied zero-padded.
func (g *gemm) runRows(o *ops, threads int) {
	if g.beta != 0 && g.beta != 1 {
		g.scaleC()
	}
	load := 0
	if g.beta != 0 {
		load = 1
	}
	nr := o.rowsNR
	parts := 1
	if threads > 1 && float64(g.m)*float64(g.n)*float64(g.k)*2 >= minParallelFlops {
		parts = min(threads, (g.n+nr-1)/nr)
	}
	bounds := blocks(g.n, parts, nr)
	Parallel(parts, func(t int) { g.rowsCols(o, bounds[t], bounds[t+1], load) })
}

// rowsCols computes the columns j0:j1 of C.
func (g *gemm) rowsCols(o *ops, j0, j1, load int) {
	nr, mr := o.rowsNR, rowsMR
	rsa, csa := 4*g.lda, 4
	if g.tA {
		rsa, csa = 4, 4*g.lda
	}
	w := getWorkspace(o)
	defer workspaces.Put(w)
	// The rows of a last partial block of rows, zero-padded: kc·mr values.
	var aEdge []float32
	if edge := g.m % mr; edge != 0 {
		aEdge = grow(&w.ap, g.k*mr)
		g.packAEdge(aEdge, g.m-edge, edge, 0, g.k, mr)
	}
	tile := grow(&w.tile, mr*nr)
	for j := j0; j < j1; j += nr {
		nw := min(nr, j1-j)
		bp, ldb := &g.b[j], g.ldb
		if nw < nr { // a last partial panel, copied zero-padded
			panel := grow(&w.bp, g.k*nr)
			for p := 0; p < g.k; p++ {
				out := panel[p*nr : (p+1)*nr]
				copy(out, g.b[p*g.ldb+j:p*g.ldb+j+nw])
				clear(out[nw:])
			}
			bp, ldb = &panel[0], nr
		}
		var bias *float32
		if g.bias != nil && nw == nr {
			bias = &g.bias[j]
		}
		for i := 0; i < g.m; i += mr {
			mh := min(mr, g.m-i)
			var ap *float32
			ars, acs := rsa, csa
			switch {
			case mh < mr:
				ap, ars, acs = &aEdge[0], 4, 4*mr
			case g.tA:
				ap = &g.a[i]
			default:
				ap = &g.a[i*g.lda]
			}
			if mh == mr && nw == nr {
				o.rows(g.k, ap, ars, acs, bp, ldb, &g.c[i*g.ldc+j], g.ldc, bias, load, g.alpha)
				continue
			}
			// A partial tile: computed whole into the tile, then the part
			// inside C added as the kernel would.
			o.rows(g.k, ap, ars, acs, bp, ldb, &tile[0], nr, nil, 0, g.alpha)
			for r := 0; r < mh; r++ {
				crow := g.c[(i+r)*g.ldc+j : (i+r)*g.ldc+j+nw]
				for q := range crow {
					v := tile[r*nr+q]
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

// grow returns (*s)[:n], reallocated when it is shorter.
func grow(s *[]float32, n int) []float32 {
	if cap(*s) < n {
		*s = make([]float32, n)
	}
	return (*s)[:n]
}
