package simd

import (
	"runtime"
	"sync"
	"unsafe"

	"gonum.org/v1/gonum/blas"
)

// The matrix product follows Goto and van de Geijn (2008, "Anatomy of
// high-performance matrix multiplication") in the loop order of BLIS (Van Zee
// and van de Geijn 2015):
//
//	for jc over n in blocks of nc:            one block of op(B) columns
//	  for pc over k in blocks of kc:          packed: B̂ = op(B)[pc:pc+kc, jc:jc+nc], panels of nr columns
//	    for ic over m in blocks of mc:        op(A)[ic:ic+mc, pc:pc+kc], read in place from L2
//	      for jr over the nc columns by nr:   one panel of B̂ (kc×nr) stays in L1
//	        for ir over the mc rows by mr:    the micro-kernel: an mr×nr tile of C in registers
//
// The left operand is not packed: the micro-kernel reads its rows through a
// row stride and a depth stride (bytes), which covers op(A) = A and op(A) = Aᵀ
// alike; a last partial tile of rows (m not a multiple of mr) is the tile of
// the last mr rows, and only a product of fewer than mr rows copies them into
// a zero-padded panel. Partial tiles of columns are computed into a small
// tile and added from there. beta is applied before the first depth block,
// bias (Linear's) with it.
//
// The parallel split (see split) gives each goroutine a block of rows or of
// columns of C, chosen by the shape so that little is packed twice.

// minParallelFlops is the smallest product split across goroutines.
const minParallelFlops = 1 << 18

// gemm is one product C = alpha·op(A)·op(B) + beta·C (+ bias on every row).
type gemm struct {
	tA, tB      bool
	m, n, k     int
	alpha, beta float32
	a           []float32
	lda         int
	b           []float32
	ldb         int
	c           []float32
	ldc         int
	bias        []float32
	// pb, when set, is op(B) packed ahead (b unused); pb0 is the first of
	// its columns this product uses.
	pb  *Packed
	pb0 int
}

// Sgemm computes C = alpha·op(A)·op(B) + beta·C for row-major matrices, op
// being the identity or the transpose, with the arguments, the checks and the
// panics of blas.Float32's Sgemm, on up to GOMAXPROCS goroutines.
func Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	g := newGemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	g.run(runtime.GOMAXPROCS(0))
}

// SgemmSerial is Sgemm on the calling goroutine only: for products that are
// already run in parallel with others.
func SgemmSerial(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	g := newGemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	g.run(1)
}

// SgemmBias is Sgemm with bias (n values, nil for none) added to every row
// of C: C = alpha·op(A)·op(B) + bias + beta·C, the bias added as the tiles
// of the first depth block are stored (no pass of its own over C).
func SgemmBias(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, bias []float32) {
	g := newGemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	if bias != nil && len(bias) < n {
		panic("kernel: bias shorter than n")
	}
	g.bias = bias
	g.run(runtime.GOMAXPROCS(0))
}

// Linear is torch.nn.Linear on rows rows: y = x·Wᵀ + bias, with x rows×in,
// W out×in as torch stores it, y rows×out, and bias (nil for none) out
// values; on up to GOMAXPROCS goroutines.
func Linear(y, x, w, bias []float32, rows, in, out int) {
	SgemmBias(blas.NoTrans, blas.Trans, rows, out, in, 1, x, in, w, in, 0, y, out, bias)
}

func newGemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) *gemm {
	transposed := func(t blas.Transpose) bool {
		switch t {
		case blas.NoTrans:
			return false
		case blas.Trans, blas.ConjTrans:
			return true
		}
		panic("kernel: bad transpose")
	}
	g := &gemm{tA: transposed(tA), tB: transposed(tB), m: m, n: n, k: k, alpha: alpha, beta: beta,
		a: a, lda: lda, b: b, ldb: ldb, c: c, ldc: ldc}
	if m < 0 {
		panic("kernel: m < 0")
	}
	if n < 0 {
		panic("kernel: n < 0")
	}
	if k < 0 {
		panic("kernel: k < 0")
	}
	rowA, colA := m, k
	if g.tA {
		rowA, colA = k, m
	}
	rowB, colB := k, n
	if g.tB {
		rowB, colB = n, k
	}
	if lda < max(1, colA) {
		panic("kernel: bad lda")
	}
	if ldb < max(1, colB) {
		panic("kernel: bad ldb")
	}
	if ldc < max(1, n) {
		panic("kernel: bad ldc")
	}
	if m == 0 || n == 0 {
		return g
	}
	if len(a) < lda*(rowA-1)+colA {
		panic("kernel: insufficient length of a")
	}
	if b != nil && len(b) < ldb*(rowB-1)+colB { // nil: a Packed operand
		panic("kernel: insufficient length of b")
	}
	if len(c) < ldc*(m-1)+n {
		panic("kernel: insufficient length of c")
	}
	return g
}

// run computes the product on up to threads goroutines.
func (g *gemm) run(threads int) {
	if g.m == 0 || g.n == 0 {
		return
	}
	if g.k == 0 || g.alpha == 0 {
		g.scaleC()
		if g.bias != nil {
			for i := 0; i < g.m; i++ {
				Add(g.c[i*g.ldc:i*g.ldc+g.n], g.c[i*g.ldc:i*g.ldc+g.n], g.bias[:g.n])
			}
		}
		return
	}
	o := use
	switch {
	case g.useDot(o):
		g.runDot(o, threads)
		return
	case g.useRows(o):
		g.runRows(o, threads)
		return
	}
	if float64(g.m)*float64(g.n)*float64(g.k)*2 < minParallelFlops {
		threads = 1
	}
	tm, tn := split(o, g.m, g.n, g.k, threads)
	if tm*tn == 1 {
		g.serial(o)
		return
	}
	rows := blocks(g.m, tm, o.mr)
	tn = chunks(o, g.m/tm, g.n, g.k, tn)
	cols := blocks(g.n, tn, o.nr)
	Parallel(tm*tn, func(p int) {
		i, j := p/tn, p%tn
		s := g.sub(rows[i], rows[i+1], cols[j], cols[j+1])
		s.serial(o)
	})
}

// chunkMaxA is the most bytes of op(A) rows that a block of rows is
// re-read for each chunk of columns (see chunks): about what stays in a
// 1 MB L2 beside the panels of B̂.
const chunkMaxA = 768 << 10

// chunks returns how many blocks the columns of C are cut into when tn
// goroutines share them, m rows each. With more blocks than goroutines,
// Parallel hands the next block to whichever goroutine is free, so a
// worker that starts late (waking up, or on a core another process holds)
// takes fewer and the others more, instead of the whole product waiting
// for its share: at batch 1 (a 128-row product takes about 0.1 ms on two
// cores) a late start is a large part of the product. Each block of
// columns packs only its own columns, so cutting them finer packs nothing
// twice; it re-reads the rows of op(A), once per block, which is cheap
// only while they stay in L2.
func chunks(o *ops, m, n, k, tn int) int {
	if tn <= 1 || m*k*4 > chunkMaxA {
		return tn
	}
	panels := (n + o.nr - 1) / o.nr
	return max(tn, min(panels, 8*tn))
}

// split chooses how many blocks of rows (tm) and of columns (tn) of C the
// product is cut into, tm·tn ≤ threads: each goroutine packs its own columns
// of op(B) (n/tn · k elements) and computes its tiles, so cutting the columns
// costs nothing extra while cutting the rows packs op(B) tm times. The cost
// of each choice is estimated from the level's rough speeds and the cheapest
// taken.
func split(o *ops, m, n, k, threads int) (tm, tn int) {
	if threads <= 1 {
		return 1, 1
	}
	tilesM, tilesN := (m+o.mr-1)/o.mr, (n+o.nr-1)/o.nr
	best := -1.0
	tm, tn = 1, 1
	for t := threads; t >= 1; t-- {
		for a := 1; a <= t; a++ {
			if t%a != 0 {
				continue
			}
			b := t / a
			if a > tilesM || b > tilesN {
				continue
			}
			// The slowest goroutine's tiles, and its packing.
			tiles := float64((tilesM+a-1)/a) * float64((tilesN+b-1)/b)
			flops := tiles * float64(o.mr*o.nr) * float64(k) * 2
			pack := float64((tilesN+b-1)/b*o.nr) * float64(k) * o.packedFlopsPerElement
			cost := flops + pack
			if best < 0 || cost < best*0.98 {
				best, tm, tn = cost, a, b
			}
		}
	}
	return tm, tn
}

// blocks cuts [0, n) into parts ranges whose bounds are multiples of unit.
func blocks(n, parts, unit int) []int {
	units := (n + unit - 1) / unit
	bounds := make([]int, parts+1)
	for i := 1; i <= parts; i++ {
		bounds[i] = min(n, (units*i/parts)*unit)
	}
	bounds[parts] = n
	return bounds
}

// sub is the part of the product that writes C[m0:m1, n0:n1].
func (g *gemm) sub(m0, m1, n0, n1 int) gemm {
	p := *g
	p.m, p.n = m1-m0, n1-n0
	if g.tA {
		p.a = g.a[m0:]
	} else {
		p.a = g.a[m0*g.lda:]
	}
	switch {
	case g.pb != nil:
		p.pb0 = g.pb0 + n0
	case g.tB:
		p.b = g.b[n0*g.ldb:]
	default:
		p.b = g.b[n0:]
	}
	p.c = g.c[m0*g.ldc+n0:]
	if g.bias != nil {
		p.bias = g.bias[n0:]
	}
	return p
}

// scaleC sets C = beta·C (0 when beta is 0, whatever C held).
func (g *gemm) scaleC() {
	for i := 0; i < g.m; i++ {
		row := g.c[i*g.ldc : i*g.ldc+g.n]
		switch g.beta {
		case 0:
			clear(row)
		case 1:
		default:
			scaleSlice(row, g.beta)
		}
	}
}

// workspace holds one goroutine's packing buffers.
type workspace struct {
	bp   []float32 // packed op(B) block, kc × nc
	ap   []float32 // one zero-padded panel of op(A) rows, kc × mr
	tile []float32 // one tile of C, mr × nr
}

var workspaces sync.Pool

func getWorkspace(o *ops) *workspace {
	w, _ := workspaces.Get().(*workspace)
	if w == nil {
		w = &workspace{}
	}
	if cap(w.bp) < o.kc*o.nc {
		w.bp = make([]float32, o.kc*o.nc)
	}
	if cap(w.ap) < o.kc*o.mr {
		w.ap = make([]float32, o.kc*o.mr)
	}
	if cap(w.tile) < o.mr*o.nr {
		w.tile = make([]float32, o.mr*o.nr)
	}
	return w
}

// serial runs the blocked product on this goroutine.
func (g *gemm) serial(o *ops) {
	if g.beta != 0 && g.beta != 1 {
		g.scaleC()
	}
	w := getWorkspace(o)
	defer workspaces.Put(w)
	mr, nr := o.mr, o.nr
	// Strides of op(A) in bytes: between rows, between steps of the depth.
	rsa, csa := 4*g.lda, 4
	if g.tA {
		rsa, csa = 4, 4*g.lda
	}
	kc := balancedBlock(g.k, o.kc)
	for jc := 0; jc < g.n; jc += o.nc {
		nb := min(o.nc, g.n-jc)
		for pc := 0; pc < g.k; pc += kc {
			kb := min(kc, g.k-pc)
			prepacked := g.pb != nil && g.pb.nr == nr
			if !prepacked {
				g.packB(w.bp, pc, kb, jc, nb, nr)
			}
			load := 1
			var bias []float32
			if pc == 0 {
				if g.beta == 0 {
					load = 0
				}
				bias = g.bias
			}
			for ic := 0; ic < g.m; ic += o.mc {
				mb := min(o.mc, g.m-ic)
				// A last partial tile of rows is computed as the tile of the
				// last mr rows, read in place (its first rows, the previous
				// tile's, computed again), or, in a product of fewer than mr
				// rows, from a zero-padded copy packed once for every panel
				// of B̂.
				edge, inPlace := mb%mr, ic+mb >= mr
				if edge != 0 && !inPlace {
					g.packAEdge(w.ap, ic+mb-edge, edge, pc, kb, mr)
				}
				for jr := 0; jr < nb; jr += nr {
					nw := min(nr, nb-jr)
					j := jc + jr
					bpanel := &w.bp[jr*kb]
					// next is the panel after this one (this one for the
					// last), which the tiles prefetch a part each of.
					next := &w.bp[min(jr+nr, nb-1)/nr*nr*kb]
					if prepacked {
						q := (g.pb0 + j) / nr
						bpanel = &g.pb.data[q*g.pb.k*nr+pc*nr]
						next = &g.pb.data[min(q+1, (g.pb.n-1)/nr)*g.pb.k*nr+pc*nr]
					}
					var bptr *float32
					if bias != nil && nw == nr {
						bptr = &bias[j]
					}
					for ir := 0; ir < mb; ir += mr {
						i := ic + ir
						mh := min(mr, mb-ir)
						// This tile's part of the next panel: kb·16 bytes of
						// its kb·nr·4 (see asmgen.sgemm).
						pf := (*float32)(unsafe.Add(unsafe.Pointer(next), ir/mr%(nr/4)*kb*16))
						var aptr *float32
						ars, acs := rsa, csa
						// skip is how many of the tile's rows are above row i.
						skip := 0
						switch {
						case mh < mr && !inPlace:
							aptr, ars, acs = &w.ap[0], 4, 4*mr
						case g.tA:
							skip = mr - mh
							aptr = &g.a[pc*g.lda+i-skip]
						default:
							skip = mr - mh
							aptr = &g.a[(i-skip)*g.lda+pc]
						}
						if nw == nr && (mh == mr || skip > 0 && load == 0) {
							// The rows above row i of a last tile, computed
							// again in the same order, are stored again with
							// the same bits: only adding to C (load) would
							// count them twice.
							o.kern(kb, aptr, ars, acs, bpanel, &g.c[(i-skip)*g.ldc+j], g.ldc, bptr, load, g.alpha, pf)
							continue
						}
						// A partial tile: computed whole into w.tile, then
						// the part inside C added as the kernel would.
						t := w.tile[:mr*nr]
						o.kern(kb, aptr, ars, acs, bpanel, &t[0], nr, nil, 0, g.alpha, pf)
						for r := 0; r < mh; r++ {
							crow := g.c[(i+r)*g.ldc+j : (i+r)*g.ldc+j+nw]
							trow := t[(skip+r)*nr : (skip+r)*nr+nw]
							if bias != nil {
								for q := range trow {
									trow[q] += bias[j+q]
								}
							}
							if load == 1 {
								for q := range crow {
									crow[q] = trow[q] + crow[q]
								}
							} else {
								copy(crow, trow)
							}
						}
					}
				}
			}
		}
	}
}

// balancedBlock is the depth block for k: as few blocks as kc allows, of
// equal size (a multiple of 8), so that 384 is one block of 384 rather than
// 256 and 128 (each block stores C once more, and a short one wastes the
// micro-kernel's set-up).
func balancedBlock(k, kc int) int {
	blocks := max(1, (k+kc-1)/kc)
	return min(kc, ((k+blocks-1)/blocks+7)&^7)
}

// packB copies op(B)[pc:pc+kb, jc:jc+nb] into dst as panels of nr columns,
// each kb rows of nr values, the last one zero-padded.
func (g *gemm) packB(dst []float32, pc, kb, jc, nb, nr int) {
	for jr := 0; jr < nb; jr += nr {
		nw := min(nr, nb-jr)
		panel := dst[jr*kb : jr*kb+kb*nr]
		j0 := jc + jr
		if g.pb != nil { // packed for another level: repack
			for p := 0; p < kb; p++ {
				out := panel[p*nr : p*nr+nr]
				for j := range out {
					out[j] = 0
					if j < nw {
						out[j] = g.pb.at(pc+p, g.pb0+j0+j)
					}
				}
			}
			continue
		}
		if !g.tB {
			for p := 0; p < kb; p++ {
				row := g.b[(pc+p)*g.ldb+j0 : (pc+p)*g.ldb+j0+nw]
				out := panel[p*nr : p*nr+nr]
				copy(out, row)
				clear(out[nw:])
			}
			continue
		}
		// op(B) = Bᵀ: column j of op(B) is row j of B, contiguous in p.
		if nw < nr {
			clear(panel)
		}
		j := 0
		for ; j+4 <= nw; j += 4 {
			r0 := g.b[(j0+j)*g.ldb+pc : (j0+j)*g.ldb+pc+kb]
			r1 := g.b[(j0+j+1)*g.ldb+pc : (j0+j+1)*g.ldb+pc+kb]
			r2 := g.b[(j0+j+2)*g.ldb+pc : (j0+j+2)*g.ldb+pc+kb]
			r3 := g.b[(j0+j+3)*g.ldb+pc : (j0+j+3)*g.ldb+pc+kb]
			for p := range r0 {
				out := panel[p*nr+j : p*nr+j+4 : p*nr+j+4]
				out[0], out[1], out[2], out[3] = r0[p], r1[p], r2[p], r3[p]
			}
		}
		for ; j < nw; j++ {
			r := g.b[(j0+j)*g.ldb+pc : (j0+j)*g.ldb+pc+kb]
			for p, v := range r {
				panel[p*nr+j] = v
			}
		}
	}
}

// packAEdge copies op(A)[i:i+mh, pc:pc+kb] (mh < mr rows) into dst as one
// panel of kb steps of mr values, the missing rows zero.
func (g *gemm) packAEdge(dst []float32, i, mh, pc, kb, mr int) {
	dst = dst[:kb*mr]
	clear(dst)
	for r := 0; r < mh; r++ {
		for p := 0; p < kb; p++ {
			if g.tA {
				dst[p*mr+r] = g.a[(pc+p)*g.lda+i+r]
			} else {
				dst[p*mr+r] = g.a[(i+r)*g.lda+pc+p]
			}
		}
	}
}

// The pure-Go micro-kernel: a goMR×goNR tile, the same contract as the
// assembly ones (see asmgen.sgemm).
const goMR, goNR = 4, 8

func sgemmGo(kc int, a *float32, rsa, csa int, b, c *float32, ldc int, bias *float32, load int, alpha float32, _ *float32) {
	var acc [goMR][goNR]float32
	ap := unsafe.Pointer(a)
	bs := unsafe.Slice(b, kc*goNR)
	for p := 0; p < kc; p++ {
		br := (*[goNR]float32)(bs[p*goNR : p*goNR+goNR])
		for i := range acc {
			ai := *(*float32)(unsafe.Add(ap, i*rsa+p*csa))
			row := &acc[i]
			for j := range row {
				row[j] += ai * br[j]
			}
		}
	}
	var bv [goNR]float32
	if bias != nil {
		bv = *(*[goNR]float32)(unsafe.Slice(bias, goNR))
	}
	for i := range acc {
		crow := (*[goNR]float32)(unsafe.Slice((*float32)(unsafe.Add(unsafe.Pointer(c), 4*i*ldc)), goNR))
		for j := range crow {
			v := acc[i][j]*alpha + bv[j]
			if load != 0 {
				v += crow[j]
			}
			crow[j] = v
		}
	}
}
