package asmgen

import "fmt"

// cells emits func cells1ISA(cells *uint32, n int, theta *float64, c
// *float64, yt *float64, out *float64, mask *float64): the cell pass of a rank-1 logistic
// model over n binary cells (a multiple of the float64 lanes), cBMM's
// majorization step in one sweep (Qu, Heng, Zeng and Liu 2026,
// arXiv:2605.07046). Cell k is model<<1 | y; with θ = theta[model],
// x = a·θ + b, y± = 2y − 1 and t = −y±·x/σ:
//
//	out[0] += Σ max(t, 0),  out[1] = Π (1 + e^−|t|)   (softplus(t) = max(t, 0) + log(1 + e^−|t|))
//
// and, when yt is not nil, the surrogate targets and the sums of the item's
// least squares:
//
//	yt[k] = x + 4σ·y±·sigmoid(t),  out[2:6] = Σ θ, Σ θ², Σ yt, Σ θ·yt
//
// c holds four 64-byte rows: a, b, 1/σ and 4σ. θ is gathered by the model
// index, the label's sign is the bit moved to the top; e^−|t| is exp64Body's,
// sigmoid(t) is 1/(1 + e^−|t|) for t ≥ 0 and its complement below. The
// caller keeps n small enough (at most 1000 per lane) that the product
// cannot overflow: each factor is in (1, 2]. With mask (not nil) it runs one
// vector instead, counting and writing only the lanes whose 64 bits of the
// mask row are set: the last cells of an item, padded.
func (g *gen) cells(s isa) {
	d := s.lanes / 2 // float64 lanes
	g.text("cells1", s, 56)
	g.ins("MOVQ cells+0(FP), SI")
	g.ins("MOVQ n+8(FP), CX")
	g.ins("SHRQ $%d, CX", log2(d))
	g.ins("MOVQ theta+16(FP), DX")
	g.ins("MOVQ c+24(FP), AX")
	g.ins("MOVQ yt+32(FP), DI")
	g.ins("MOVQ mask+48(FP), R8")
	lin, prod, st, stt, sy, sty := s.r(10), s.r(11), s.r(12), s.r(13), s.r(14), s.r(15)
	for _, r := range []string{lin, st, stt, sy, sty} {
		g.zero(s, r)
	}
	g.ins("VMOVUPD %s, %s", f64("1 f64", 1), prod)
	g.ins("TESTQ R8, R8")
	g.ins("JNZ masked")
	g.ins("TESTQ CX, CX")
	g.ins("JZ done")
	g.label("loop")
	g.cellsBody(s, false)
	g.ins("ADDQ $%d, SI", 4*d)
	g.ins("DECQ CX")
	g.ins("JNZ loop")
	g.ins("JMP done")
	g.label("masked")
	g.cellsBody(s, true)
	g.label("done")
	g.ins("MOVQ out+40(FP), BX")
	for k, r := range []int{10, 11, 12, 13, 14, 15} {
		op := "VADDPD"
		if r == 11 {
			op = "VMULPD"
		}
		g.hreduce64(s, op, r, 0)
		g.ins("MOVSD X%d, %d(BX)", r, 8*k)
	}
	g.ret()
}

// cellsBody emits one vector of cells1. masked (the last cells of a call,
// padded to a vector) counts only the lanes whose 64 bits of the mask row
// at R8 are set, and writes only their targets.
func (g *gen) cellsBody(s isa, masked bool) {
	d := s.lanes / 2
	one, sign := f64("1 f64", 1), addRow(constant{"sign bit f64", 1 << 63, true})
	xor, or, and := "VXORPD", "VORPD", "VANDPD"
	if s.avx512 {
		xor, or, and = "VPXORQ", "VPORQ", "VPANDQ"
	}
	lin, prod, st, stt, sy, sty := s.r(10), s.r(11), s.r(12), s.r(13), s.r(14), s.r(15)
	TH, L, X, T, E, Z := s.r(0), s.r(1), s.r(2), s.r(3), s.r(4), s.r(9)
	// acc adds src into the accumulator, on the valid lanes only when masked
	// (AVX-512 by the mask register K3; AVX2 by having cleared the others).
	k3 := ""
	if masked && s.avx512 {
		k3 = "K3, "
	}
	// θ by the model index, the label as the sign bit of a float64.
	if s.avx512 {
		if masked {
			g.ins("VMOVUPD (R8), Z8")
			g.ins("VPTESTMQ Z8, Z8, K3")
		}
		g.ins("VMOVDQU (SI), Y1")
		g.ins("VPSRLD $1, Y1, Y2")
		g.ins("KXNORW K1, K1, K1")
		g.ins("VGATHERDPD (DX)(Y2*8), K1, Z0")
		g.ins("VPMOVZXDQ Y1, Z1")
	} else {
		g.ins("VMOVDQU (SI), X1")
		g.ins("VPSRLD $1, X1, X2")
		g.ins("VPCMPEQD Y9, Y9, Y9")
		g.ins("VGATHERDPD Y9, (DX)(X2*8), Y0")
		g.ins("VPMOVZXDQ X1, Y1")
	}
	g.ins("VPSLLQ $63, %s, %s", L, L)
	g.ins("VMULPD (AX), %s, %s", TH, X)
	g.ins("VADDPD 64(AX), %s, %s", X, X) // x = a·θ + b
	g.ins("VMULPD 128(AX), %s, %s", X, T)
	g.ins("%s %s, %s, %s", xor, L, T, T)   // t = −y±·x/σ: a label 1 flips the sign
	g.ins("%s %s, %s, %s", or, sign, T, Z) // −|t|
	g.exp64Body(s, 4, 9, &regs{next: 5})
	Q, SG, A, B := s.r(5), s.r(6), s.r(7), s.r(8)
	if masked && !s.avx512 {
		g.ins("VANDPD (R8), %s, %s", E, E) // e = 0, a factor 1, on the padding
	}
	g.ins("VADDPD %s, %s, %s", one, E, Q)
	g.ins("VMULPD %s, %s, %s%s", Q, prod, k3, prod)
	g.zero(s, A)
	g.ins("VMAXPD %s, %s, %s", A, T, A) // max(t, 0)
	if masked && !s.avx512 {
		g.ins("VANDPD (R8), %s, %s", A, A)
	}
	g.ins("VADDPD %s, %s, %s%s", A, lin, k3, lin)
	g.ins("TESTQ DI, DI")
	g.ins("JZ next%v", masked)
	g.signedSigmoid(s, one, Q, T, SG, A, B)
	g.ins("VMULPD 192(AX), %s, %s", SG, SG) // 4σ·sigmoid(t)
	g.ins("%s %s, %s, %s", xor, sign, L, L) // the sign of −y±
	g.ins("%s %s, %s, %s", xor, L, SG, SG)  // 4σ·y±·sigmoid(t)
	g.ins("VADDPD %s, %s, %s", X, SG, SG)   // ỹ
	switch {
	case !masked:
		g.ins("VMOVUPD %s, (DI)", SG)
		g.ins("ADDQ $%d, DI", 8*d)
	case s.avx512:
		g.ins("VMOVUPD %s, K3, (DI)", SG)
	default:
		g.ins("VMOVUPD (R8), %s", B)
		g.ins("VMASKMOVPD %s, %s, (DI)", SG, B)
		g.ins("%s %s, %s, %s", and, B, SG, SG)
		g.ins("%s %s, %s, %s", and, B, TH, TH)
	}
	g.ins("VADDPD %s, %s, %s%s", TH, st, k3, st)
	g.ins("VFMADD231PD %s, %s, %s%s", TH, TH, k3, stt)
	g.ins("VADDPD %s, %s, %s%s", SG, sy, k3, sy)
	g.ins("VFMADD231PD %s, %s, %s%s", SG, TH, k3, sty)
	g.label(fmt.Sprintf("next%v", masked))
}

// hreduce64 reduces the float64 vector n to its lanes' sum (op VADDPD) or
// product (VMULPD) in X<n>, with t as scratch.
func (g *gen) hreduce64(s isa, op string, n, t int) {
	if s.avx512 {
		g.ins("VEXTRACTF64X4 $1, Z%d, Y%d", n, t)
		g.ins("%s Y%d, Y%d, Y%d", op, t, n, n)
	}
	g.ins("VEXTRACTF128 $1, Y%d, X%d", n, t)
	g.ins("%s X%d, X%d, X%d", op, t, n, n)
	g.ins("VUNPCKHPD X%d, X%d, X%d", n, n, t)
	g.ins("%s X%d, X%d, X%d", op[:len(op)-2]+"SD", t, n, n)
}

// cellsWeighted emits func cellsW1ISA(cells *uint32, n int, theta *float64,
// c *float64, yt *float64, out *float64, w *float32, ybar *float64, q
// *float64): cells's pass for cells of n_k trials and observed fraction ȳ_k
// (a graded score alike), n a multiple of the float64 lanes. With u = x/σ:
//
//	out[0] = Σ n·(max(u, 0) − ȳ·u),  q[k] = 1 + e^−|u|   (the caller adds Σ n·log q)
//
// and with yt the targets ỹ = x + 4σ·(ȳ − sigmoid(u)) and out[1:6] = Σ n,
// Σ n·θ, Σ n·θ², Σ n·ỹ, Σ n·θ·ỹ. Cells of weight 0 add nothing (a padded
// vector's end).
func (g *gen) cellsWeighted(s isa) {
	d := s.lanes / 2
	g.text("cellsW1", s, 72)
	g.ins("MOVQ cells+0(FP), SI")
	g.ins("MOVQ n+8(FP), CX")
	g.ins("SHRQ $%d, CX", log2(d))
	g.ins("MOVQ theta+16(FP), DX")
	g.ins("MOVQ c+24(FP), AX")
	g.ins("MOVQ yt+32(FP), DI")
	g.ins("MOVQ w+48(FP), R8")
	g.ins("MOVQ ybar+56(FP), R9")
	g.ins("MOVQ q+64(FP), R10")
	one, sign := f64("1 f64", 1), addRow(constant{"sign bit f64", 1 << 63, true})
	or := "VORPD"
	if s.avx512 {
		or = "VPORQ"
	}
	lin, sw, st, stt, sy, sty := s.r(10), s.r(11), s.r(12), s.r(13), s.r(14), s.r(15)
	for _, r := range []string{lin, sw, st, stt, sy, sty} {
		g.zero(s, r)
	}
	TH, W, X, U, E, Z := s.r(0), s.r(1), s.r(2), s.r(3), s.r(4), s.r(9)
	g.ins("TESTQ CX, CX")
	g.ins("JZ done")
	g.label("loop")
	if s.avx512 {
		g.ins("VMOVDQU (SI), Y1")
		g.ins("VPSRLD $1, Y1, Y2")
		g.ins("KXNORW K1, K1, K1")
		g.ins("VGATHERDPD (DX)(Y2*8), K1, Z0")
	} else {
		g.ins("VMOVDQU (SI), X1")
		g.ins("VPSRLD $1, X1, X2")
		g.ins("VPCMPEQD Y9, Y9, Y9")
		g.ins("VGATHERDPD Y9, (DX)(X2*8), Y0")
	}
	g.ins("VCVTPS2PD (R8), %s", W)
	g.ins("VMULPD (AX), %s, %s", TH, X)
	g.ins("VADDPD 64(AX), %s, %s", X, X)  // x = a·θ + b
	g.ins("VMULPD 128(AX), %s, %s", X, U) // u = x/σ
	g.ins("%s %s, %s, %s", or, sign, U, Z)
	g.exp64Body(s, 4, 9, &regs{next: 5})
	Q, SG, A, B := s.r(5), s.r(6), s.r(7), s.r(8)
	g.ins("VADDPD %s, %s, %s", one, E, Q)
	g.ins("VMOVUPD %s, (R10)", Q)
	g.zero(s, A)
	g.ins("VMAXPD %s, %s, %s", A, U, A)        // max(u, 0)
	g.ins("VMULPD (R9), %s, %s", U, B)         // ȳ·u
	g.ins("VSUBPD %s, %s, %s", B, A, A)        //
	g.ins("VFMADD231PD %s, %s, %s", A, W, lin) // += n·(max(u, 0) − ȳ·u)
	g.ins("TESTQ DI, DI")
	g.ins("JZ next")
	g.signedSigmoid(s, one, Q, U, SG, A, B)
	g.ins("VMOVUPD (R9), %s", B)
	g.ins("VSUBPD %s, %s, %s", SG, B, B)  // ȳ − sigmoid(u)
	g.ins("VMULPD 192(AX), %s, %s", B, B) // 4σ·(…)
	g.ins("VADDPD %s, %s, %s", B, X, X)   // ỹ
	g.ins("VMOVUPD %s, (DI)", X)
	g.ins("ADDQ $%d, DI", 8*d)
	g.ins("VADDPD %s, %s, %s", W, sw, sw)
	g.ins("VMULPD %s, %s, %s", TH, W, A) // n·θ
	g.ins("VADDPD %s, %s, %s", A, st, st)
	g.ins("VFMADD231PD %s, %s, %s", TH, A, stt)
	g.ins("VFMADD231PD %s, %s, %s", X, W, sy)
	g.ins("VFMADD231PD %s, %s, %s", X, A, sty)
	g.label("next")
	g.ins("ADDQ $%d, SI", 4*d)
	g.ins("ADDQ $%d, R8", 4*d)
	g.ins("ADDQ $%d, R9", 8*d)
	g.ins("ADDQ $%d, R10", 8*d)
	g.ins("DECQ CX")
	g.ins("JNZ loop")
	g.label("done")
	g.ins("MOVQ out+40(FP), BX")
	for k, r := range []int{10, 11, 12, 13, 14, 15} {
		g.hreduce64(s, "VADDPD", r, 0)
		g.ins("MOVSD X%d, %d(BX)", r, 8*k)
	}
	g.ret()
}

// signedSigmoid emits SG = sigmoid(x) from Q = 1 + e^−|x|: sigmoid(|x|) =
// 1/Q, and for the lanes where x < 0 its complement 1 − 1/Q (A and B are
// scratch; B ends zero on AVX-512, the mask of x < 0 on AVX2).
func (g *gen) signedSigmoid(s isa, one, Q, x, SG, A, B string) {
	g.ins("VMOVUPD %s, %s", one, SG)
	g.ins("VDIVPD %s, %s, %s", Q, SG, SG) // sigmoid(|x|)
	g.ins("VMOVUPD %s, %s", one, A)
	g.ins("VSUBPD %s, %s, %s", SG, A, A) // sigmoid(−|x|)
	g.zero(s, B)
	if s.avx512 {
		g.ins("VCMPPD $0x11, %s, %s, K2", B, x) // x < 0
		g.ins("VMOVAPD %s, K2, %s", A, SG)
	} else {
		g.ins("VCMPPD $0x11, %s, %s, %s", B, x, B)
		g.ins("VBLENDVPD %s, %s, %s, %s", B, A, SG, SG)
	}
}
