package asmgen

import "math"

// The kernels of the training steps: AdamW's update, axpy and a float64 dot
// product of float32 vectors, log1p and softplus in float64.

// adamW emits func adamWISA(p, grad, m, v *float32, n int, c *float32): AdamW's
// update of n parameters (a multiple of the lanes), with c the eight
// constants [β1, 1−β1, β2, 1−β2, 1−lr·λ, lr/(1−β1ᵗ), 1/√(1−β2ᵗ), ε]:
//
//	m ← β1·m + (1−β1)·g,  v ← β2·v + ((1−β2)·g)·g
//	p ← p·(1−lr·λ) − (lr/(1−β1ᵗ))·m / (√v·(1/√(1−β2ᵗ)) + ε)
//
// Every operation is rounded on its own (no FMA) in the order written, and
// VSQRTPS is correctly rounded, so the result is the pure-Go loop's bit for
// bit.
func (g *gen) adamW(s isa) {
	g.text("adamW", s, 48)
	g.ins("MOVQ p+0(FP), DI")
	g.ins("MOVQ grad+8(FP), SI")
	g.ins("MOVQ m+16(FP), DX")
	g.ins("MOVQ v+24(FP), BX")
	g.vectors(32, s.lanes)
	g.ins("JZ done")
	g.ins("MOVQ c+40(FP), AX")
	b1, c1, b2, c2, decay, step, inv, eps := s.r(8), s.r(9), s.r(10), s.r(11), s.r(12), s.r(13), s.r(14), s.r(15)
	for i, r := range []string{b1, c1, b2, c2, decay, step, inv, eps} {
		g.ins("VBROADCASTSS %d(AX), %s", 4*i, r)
	}
	G, M, V, T, P := s.r(0), s.r(1), s.r(2), s.r(3), s.r(4)
	g.label("loop")
	g.ins("VMOVUPS (SI), %s", G)
	g.ins("VMULPS (DX), %s, %s", b1, M)
	g.ins("VMULPS %s, %s, %s", G, c1, T)
	g.ins("VADDPS %s, %s, %s", T, M, M)
	g.ins("VMOVUPS %s, (DX)", M)
	g.ins("VMULPS (BX), %s, %s", b2, V)
	g.ins("VMULPS %s, %s, %s", G, c2, T)
	g.ins("VMULPS %s, %s, %s", G, T, T)
	g.ins("VADDPS %s, %s, %s", T, V, V)
	g.ins("VMOVUPS %s, (BX)", V)
	g.ins("VSQRTPS %s, %s", V, V)
	g.ins("VMULPS %s, %s, %s", inv, V, V)
	g.ins("VADDPS %s, %s, %s", eps, V, V)
	g.ins("VMULPS %s, %s, %s", step, M, M)
	g.ins("VDIVPS %s, %s, %s", V, M, M)
	g.ins("VMULPS (DI), %s, %s", decay, P)
	g.ins("VSUBPS %s, %s, %s", M, P, P)
	g.ins("VMOVUPS %s, (DI)", P)
	g.next(s.width(), "SI", "DX", "BX", "DI")
	g.label("done")
	g.ret()
}

// axpy emits func axpyISA(dst, x *float32, n int, alpha float32):
// dst[i] += alpha·x[i], the product rounded before the sum (no FMA), as the
// pure-Go loop computes it.
func (g *gen) axpy(s isa) {
	g.text("axpy", s, 28)
	g.ins("MOVQ dst+0(FP), DI")
	g.ins("MOVQ x+8(FP), SI")
	g.vectors(16, s.lanes)
	g.ins("JZ done")
	g.ins("VBROADCASTSS alpha+24(FP), %s", s.r(15))
	g.label("loop")
	for u := 0; u < 2; u++ { // two vectors a round when n allows (CX counts vectors)
		if u == 1 {
			g.ins("DECQ CX")
			g.ins("JZ done")
			g.ins("ADDQ $%d, SI", s.width())
			g.ins("ADDQ $%d, DI", s.width())
		}
		g.ins("VMULPS (SI), %s, %s", s.r(15), s.r(u))
		g.ins("VADDPS (DI), %s, %s", s.r(u), s.r(u))
		g.ins("VMOVUPS %s, (DI)", s.r(u))
	}
	g.next(s.width(), "SI", "DI")
	g.label("done")
	g.ret()
}

// dot64 emits func dot64ISA(x, y *float32, n int) float64: Σ x[i]·y[i] with
// each value widened to float64 and the products summed in float64 (four
// accumulators of lanes/2), n a multiple of the lanes.
func (g *gen) dot64(s isa) {
	d := s.lanes / 2
	g.text("dot64", s, 32)
	g.ins("MOVQ x+0(FP), SI")
	g.ins("MOVQ y+8(FP), DX")
	g.vectors(16, s.lanes)
	for i := 0; i < 4; i++ {
		g.zero(s, s.r(i))
	}
	g.ins("TESTQ CX, CX")
	g.ins("JZ done")
	g.ins("MOVQ CX, R8")
	g.ins("SHRQ $1, R8")
	g.ins("JZ one")
	g.label("two")
	for u := 0; u < 2; u++ {
		for h := 0; h < 2; h++ {
			off := (u*2 + h) * 4 * d
			g.ins("VCVTPS2PD %d(SI), %s", off, s.r(4+2*h))
			g.ins("VCVTPS2PD %d(DX), %s", off, s.r(5+2*h))
			g.ins("VFMADD231PD %s, %s, %s", s.r(5+2*h), s.r(4+2*h), s.r(2*u+h))
		}
	}
	g.ins("ADDQ $%d, SI", 2*s.width())
	g.ins("ADDQ $%d, DX", 2*s.width())
	g.ins("DECQ R8")
	g.ins("JNZ two")
	g.label("one")
	g.ins("ANDQ $1, CX")
	g.ins("JZ done")
	for h := 0; h < 2; h++ {
		g.ins("VCVTPS2PD %d(SI), %s", h*4*d, s.r(4+2*h))
		g.ins("VCVTPS2PD %d(DX), %s", h*4*d, s.r(5+2*h))
		g.ins("VFMADD231PD %s, %s, %s", s.r(5+2*h), s.r(4+2*h), s.r(h))
	}
	g.label("done")
	g.ins("VADDPD %s, %s, %s", s.r(2), s.r(0), s.r(0))
	g.ins("VADDPD %s, %s, %s", s.r(3), s.r(1), s.r(1))
	g.ins("VADDPD %s, %s, %s", s.r(1), s.r(0), s.r(0))
	g.hsum64(s, 0)
	g.ins("MOVSD X0, ret+24(FP)")
	g.ret()
}

// The coefficients of fdlibm's log (Go's math.Log): log(1+f) = 2s + s·R(s²)
// with s = f/(2+f), R a polynomial in s² of degree 7.
var logL = []float64{
	6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01, 2.222219843214978396e-01,
	1.818357216161805012e-01, 1.531383769920937332e-01, 1.479819860511658591e-01,
}

// log1pBody emits dst = log1p(src) for one vector of float64: u = 1 + x,
// u = 2ᵏ·m with m in [√2/2, √2) from the bits of u, log m by fdlibm's
// polynomial in the order Go's math.Log computes it (no FMA), plus the
// rounding error of 1 + x as c = (x − (u − 1))/u (exact subtractions:
// Sterbenz, u < 2⁵³), so that log1p(x) = k·ln2 + log m + c keeps the relative
// accuracy of x near 0. Then the edges: u = +Inf gives +Inf, u = 0 (x = −1)
// −Inf, u < 0 (x < −1) and NaN give NaN. src is left unchanged; dst may not
// be src. It takes eleven registers of r.
func (g *gen) log1pBody(s isa, dst, src int, r *regs) {
	x := s.r(src)
	U, K, M, F, S, S2, S4, T1, T2, H, Q := s.r(r.get()), s.r(r.get()), s.r(r.get()), s.r(r.get()), s.r(r.get()), s.r(r.get()), s.r(r.get()), s.r(r.get()), s.r(r.get()), s.r(r.get()), s.r(r.get())
	and, or := "VANDPD", "VORPD"
	if s.avx512 {
		and, or = "VPANDQ", "VPORQ"
	}
	one := f64("1 f64", 1)
	g.ins("VADDPD %s, %s, %s", one, x, U)
	// m in [1, 2) from the mantissa bits; the biased exponent as a float64
	// through the bits of 2⁵² + e.
	g.ins("VPSRLQ $52, %s, %s", U, K)
	g.ins("%s %s, %s, %s", or, addRow(constant{"2⁵² bits", 0x4330000000000000, true}), K, K)
	g.ins("VSUBPD %s, %s, %s", f64("2⁵²+1023", 0x1p52+1023), K, K)
	g.ins("%s %s, %s, %s", and, addRow(constant{"mantissa mask f64", 1<<52 - 1, true}), U, M)
	g.ins("%s %s, %s, %s", or, one, M, M)
	// m ≥ √2: m/2 and k + 1.
	g.ins("VMULPD %s, %s, %s", f64("0.5 f64", 0.5), M, H)
	g.ins("VADDPD %s, %s, %s", one, K, Q)
	sqrt2 := f64("√2 f64", math.Sqrt2)
	if s.avx512 {
		g.ins("VCMPPD $0x1d, %s, %s, K1", sqrt2, M) // m ≥ √2
		g.ins("VMOVAPD %s, K1, %s", H, M)
		g.ins("VMOVAPD %s, K1, %s", Q, K)
	} else {
		g.ins("VCMPPD $0x1d, %s, %s, %s", sqrt2, M, T1)
		g.ins("VBLENDVPD %s, %s, %s, %s", T1, H, M, M)
		g.ins("VBLENDVPD %s, %s, %s, %s", T1, Q, K, K)
	}
	// Go's math.Log on m: f = m − 1, s = f/(2+f), R = t1 + t2, log m =
	// k·ln2hi − ((hfsq − (s·(hfsq+R) + k·ln2lo)) − f).
	g.ins("VSUBPD %s, %s, %s", one, M, F)
	g.ins("VADDPD %s, %s, %s", f64("2 f64", 2), F, S)
	g.ins("VDIVPD %s, %s, %s", S, F, S)
	g.ins("VMULPD %s, %s, %s", S, S, S2)
	g.ins("VMULPD %s, %s, %s", S2, S2, S4)
	name := func(i int) string { return "log L" + string(rune('1'+i)) }
	g.ins("VMULPD %s, %s, %s", f64(name(6), logL[6]), S4, T1) // t1 = s2·(L1 + s4·(L3 + s4·(L5 + s4·L7)))
	for _, i := range []int{4, 2} {
		g.ins("VADDPD %s, %s, %s", f64(name(i), logL[i]), T1, T1)
		g.ins("VMULPD %s, %s, %s", S4, T1, T1)
	}
	g.ins("VADDPD %s, %s, %s", f64(name(0), logL[0]), T1, T1)
	g.ins("VMULPD %s, %s, %s", S2, T1, T1)
	g.ins("VMULPD %s, %s, %s", f64(name(5), logL[5]), S4, T2) // t2 = s4·(L2 + s4·(L4 + s4·L6))
	g.ins("VADDPD %s, %s, %s", f64(name(3), logL[3]), T2, T2)
	g.ins("VMULPD %s, %s, %s", S4, T2, T2)
	g.ins("VADDPD %s, %s, %s", f64(name(1), logL[1]), T2, T2)
	g.ins("VMULPD %s, %s, %s", S4, T2, T2)
	g.ins("VADDPD %s, %s, %s", T2, T1, T1) // R
	g.ins("VMULPD %s, %s, %s", f64("0.5 f64", 0.5), F, H)
	g.ins("VMULPD %s, %s, %s", F, H, H) // hfsq = 0.5·f·f
	g.ins("VADDPD %s, %s, %s", H, T1, T1)
	g.ins("VMULPD %s, %s, %s", S, T1, T1)                                           // s·(hfsq+R)
	g.ins("VMULPD %s, %s, %s", f64("ln2lo f64", 1.90821492927058770002e-10), K, T2) // k·ln2lo
	g.ins("VADDPD %s, %s, %s", T2, T1, T1)                                          //
	g.ins("VSUBPD %s, %s, %s", T1, H, H)                                            // hfsq − (…)
	g.ins("VSUBPD %s, %s, %s", F, H, H)                                             // (…) − f
	g.ins("VMULPD %s, %s, %s", f64("ln2hi f64", 6.93147180369123816490e-01), K, T1) // k·ln2hi
	g.ins("VSUBPD %s, %s, %s", H, T1, T1)                                           // log u
	g.ins("VSUBPD %s, %s, %s", one, U, T2)                                          // u − 1
	g.ins("VSUBPD %s, %s, %s", T2, x, T2)                                           // x − (u − 1)
	g.ins("VDIVPD %s, %s, %s", U, T2, T2)                                           // c
	g.ins("VADDPD %s, %s, %s", T2, T1, s.r(dst))
	inf := f64("+Inf f64", math.Inf(1))
	g.zero(s, T2)
	if s.avx512 {
		g.ins("VCMPPD $0x00, %s, %s, K1", inf, U) // u = +Inf
		g.ins("VMOVUPD %s, K1, %s", inf, s.r(dst))
		g.ins("VCMPPD $0x00, %s, %s, K1", T2, U) // u = 0
		g.ins("VMOVUPD %s, K1, %s", f64("-Inf f64", math.Inf(-1)), s.r(dst))
		g.ins("VCMPPD $0x19, %s, %s, K1", T2, U) // !(u ≥ 0): u < 0 or NaN
		g.ins("VMOVUPD %s, K1, %s", f64("NaN f64", math.NaN()), s.r(dst))
		return
	}
	g.ins("VCMPPD $0x00, %s, %s, %s", inf, U, T1)
	g.ins("VBLENDVPD %s, %s, %s, %s", T1, inf, s.r(dst), s.r(dst))
	g.ins("VCMPPD $0x00, %s, %s, %s", T2, U, T1)
	g.ins("VBLENDVPD %s, %s, %s, %s", T1, f64("-Inf f64", math.Inf(-1)), s.r(dst), s.r(dst))
	g.ins("VCMPPD $0x19, %s, %s, %s", T2, U, T1)
	g.ins("VBLENDVPD %s, %s, %s, %s", T1, f64("NaN f64", math.NaN()), s.r(dst), s.r(dst))
}

// softplus64Body emits dst = log(1 + eˣ) = max(x, 0) + log1p(e^−|x|) for
// one vector of float64 (no overflow on either side; softplus(−Inf) = 0,
// softplus(+Inf) = +Inf, NaN stays NaN). It reuses the registers of the
// exponential for log1p's.
func (g *gen) softplus64Body(s isa, dst, src int, r *regs) {
	a, e := r.get(), r.get()
	or := "VORPD"
	if s.avx512 {
		or = "VPORQ" // VORPD on zmm needs AVX512DQ
	}
	g.ins("%s %s, %s, %s", or, addRow(constant{"sign bit f64", 1 << 63, true}), s.r(src), s.r(a)) // −|x|
	mark := r.next
	g.exp64Body(s, e, a, r)
	r.next = mark
	g.log1pBody(s, dst, e, r)
	g.zero(s, s.r(a))
	g.ins("VMAXPD %s, %s, %s", s.r(a), s.r(src), s.r(a)) // max(x, 0); a NaN x is NaN in the log1p part
	g.ins("VADDPD %s, %s, %s", s.r(a), s.r(dst), s.r(dst))
}

// sdotRows is the most rows of A one sdot kernel takes: the accumulators
// (rows × 4), the rows of A (rows) and one row of W fill 31 zmm or 16 ymm.
func sdotRows(s isa) int {
	if s.avx512 {
		return 6
	}
	return 3
}

// sdot emits func sdot<mi>ISA(k int, a *float32, lda int, w *float32, ldw
// int, c *float32, ldc int, bias *float32, load int, alpha float32), the
// kernel of a product A·Wᵀ with few rows (x·Wᵀ, torch.nn.Linear on a few
// inputs): for i < mi and j < 4,
//
//	C[i, j] = alpha·Σ_p A[i, p]·W[j, p] + bias[j] (+ C[i, j] when load)
//
// with A and W row-major (strides lda, ldw, ldc in elements) and k a
// multiple of the lanes. The mi×4 sums are vectors over p, reduced at the
// end (the 4 of a row of C into one 128-bit vector by horizontal adds);
// nothing is packed, so a weight matrix W is read once per product, in place.
func (g *gen) sdot(s isa, mi int) {
	const nj = 4
	acc := func(i, j int) string { return s.r(i*nj + j) }
	aReg := func(i int) string { return s.r(mi*nj + i) }
	wReg := s.r(mi*nj + mi)
	g.comment("sdot%d%s: the %d×%d kernel of a product with few rows (see asmgen.sdot).", mi, s.name, mi, nj)
	g.text("sdot"+string(rune('0'+mi)), s, 76)
	g.ins("MOVQ k+0(FP), CX")
	g.ins("MOVQ a+8(FP), AX")
	g.ins("MOVQ lda+16(FP), R8")
	g.ins("SHLQ $2, R8")
	g.ins("MOVQ w+24(FP), BX")
	g.ins("MOVQ ldw+32(FP), R11")
	g.ins("SHLQ $2, R11")
	g.ins("LEAQ (R8)(R8*2), R9")    // 3·lda
	g.ins("LEAQ (R8)(R8*4), R10")   // 5·lda
	g.ins("LEAQ (R11)(R11*2), R12") // 3·ldw
	g.ins("SHRQ $%d, CX", log2(s.lanes))
	for i := 0; i < mi; i++ {
		for j := 0; j < nj; j++ {
			g.zero(s, acc(i, j))
		}
	}
	aRow := [...]string{"(AX)", "(AX)(R8*1)", "(AX)(R8*2)", "(AX)(R9*1)", "(AX)(R8*4)", "(AX)(R10*1)"}
	wRow := [...]string{"(BX)", "(BX)(R11*1)", "(BX)(R11*2)", "(BX)(R12*1)"}
	g.ins("TESTQ CX, CX")
	g.ins("JZ reduce")
	g.label("loop")
	for i := 0; i < mi; i++ {
		g.ins("VMOVUPS %s, %s", aRow[i], aReg(i))
	}
	for j := 0; j < nj; j++ {
		g.ins("VMOVUPS %s, %s", wRow[j], wReg)
		for i := 0; i < mi; i++ {
			g.ins("VFMADD231PS %s, %s, %s", wReg, aReg(i), acc(i, j))
		}
	}
	g.next(s.width(), "AX", "BX")
	g.label("reduce")
	// Each sum down to 128 bits: on AVX-512 by zmm shuffles and adds (which
	// AVX512F has for every register), on AVX2 from the upper half.
	for a := 0; a < mi*nj; a++ {
		if s.avx512 {
			g.ins("VSHUFF32X4 $0x4e, Z%d, Z%d, Z30", a, a) // the 256-bit halves swapped
			g.ins("VADDPS Z30, Z%d, Z%d", a, a)
			g.ins("VSHUFF32X4 $0xb1, Z%d, Z%d, Z30", a, a) // the 128-bit quarters of each half swapped
			g.ins("VADDPS Z30, Z%d, Z%d", a, a)
			continue
		}
		g.ins("VEXTRACTF128 $1, Y%d, X15", a)
		g.ins("VADDPS X15, X%d, X%d", a, a)
	}
	// The four of a row into one vector by horizontal adds, which exist for
	// X0–X15 only: the sums of rows 4 and 5 move into the registers the
	// first rows free.
	hadd := func(r [4]int) int {
		g.ins("VHADDPS X%d, X%d, X%d", r[1], r[0], r[0])
		g.ins("VHADDPS X%d, X%d, X%d", r[3], r[2], r[2])
		g.ins("VHADDPS X%d, X%d, X%d", r[2], r[0], r[0])
		return r[0]
	}
	var res []int
	for i := 0; i < min(mi, 4); i++ {
		res = append(res, hadd([4]int{4 * i, 4*i + 1, 4*i + 2, 4*i + 3}))
	}
	free := []int{1, 2, 3, 5, 6, 7, 9, 10, 11, 13, 14, 15}
	for i := 4; i < mi; i++ {
		var r [4]int
		for j := range r {
			r[j] = free[0]
			free = free[1:]
			g.ins("VMOVAPS Z%d, Z%d", 4*i+j, r[j])
		}
		res = append(res, hadd(r))
	}
	if mi < 4 { // the registers of the rows not there
		free = []int{12, 13, 14, 15}
	}
	al, bi := free[len(free)-2], free[len(free)-1]
	g.ins("VBROADCASTSS alpha+72(FP), X%d", al)
	g.ins("MOVQ bias+56(FP), R13")
	g.ins("TESTQ R13, R13")
	g.ins("JZ nobias")
	g.ins("VMOVUPS (R13), X%d", bi)
	g.ins("JMP scaled")
	g.label("nobias")
	g.ins("VXORPS X%d, X%d, X%d", bi, bi, bi)
	g.label("scaled")
	g.ins("MOVQ c+40(FP), DI")
	g.ins("MOVQ ldc+48(FP), SI")
	g.ins("SHLQ $2, SI")
	for _, r := range res {
		g.ins("VMULPS X%d, X%d, X%d", al, r, r)
		g.ins("VADDPS X%d, X%d, X%d", bi, r, r)
	}
	g.ins("MOVQ load+64(FP), R13")
	g.ins("TESTQ R13, R13")
	g.ins("JZ overwrite")
	for _, r := range res {
		g.ins("VADDPS (DI), X%d, X%d", r, r)
		g.ins("VMOVUPS X%d, (DI)", r)
		g.ins("ADDQ SI, DI")
	}
	g.ret()
	g.label("overwrite")
	for _, r := range res {
		g.ins("VMOVUPS X%d, (DI)", r)
		g.ins("ADDQ SI, DI")
	}
	g.ret()
}
