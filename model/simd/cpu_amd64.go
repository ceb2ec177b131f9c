package simd

import "golang.org/x/sys/cpu"

func detectCPU() Level {
	switch {
	case cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ && cpu.X86.HasFMA && cpu.X86.HasAVX2:
		return AVX512
	case cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		return AVX2
	}
	return Go
}

// Cache blocks (see sgemm.go; kc is the largest depth block, balancedBlock
// evens them out). kc·nr·4 bytes of the packed right panel stay in L1 (48 KB
// on AVX-512, 24 KB on AVX2, whose machines may have a 32 KB L1); kc·nc·4
// bytes of the packed right block (768 KB, 384 KB) and mc·kc·4 of the left
// operand share L2 (1 MB on AVX-512 machines, 512 KB on older AVX2 ones).
// Chosen by sweeping the encoder shapes on a Zen 5 (both levels): kc 384
// against 256 gave up to 1.17x (one block for a depth of 384); mc and nc
// within 3% either way.
var (
	avx2Ops = &ops{level: AVX2, mr: 6, nr: 16, kc: 384, mc: 96, nc: 256, kern: sgemmAVX2,
		lanes: 8, exp: expAVX2, gelu: geluAVX2, sigmoid: sigmoidAVX2, exp64: exp64AVX2, sigmoid64: sigmoid64AVX2, max: maxAVX2, expSubSum: expSubSumAVX2, scale: scaleAVX2,
		add: addAVX2, mul: mulAVX2, sum64: sum64AVX2, sumSqDev64: sumSqDev64AVX2, norm64: norm64AVX2,
		rows: sgemmRowsAVX2, rowsNR: 16,
		sdot: []sdotKernel{sdot1AVX2, sdot2AVX2, sdot3AVX2},
		axpy: axpyAVX2, dot64: dot64AVX2, log1p64: log1p64AVX2, softplus64: softplus64AVX2,
		packedFlopsPerElement: 40}
	avx512Ops = &ops{level: AVX512, mr: 12, nr: 32, kc: 384, mc: 144, nc: 512, kern: sgemmAVX512,
		lanes: 16, exp: expAVX512, gelu: geluAVX512, sigmoid: sigmoidAVX512, exp64: exp64AVX512, sigmoid64: sigmoid64AVX512, max: maxAVX512, expSubSum: expSubSumAVX512, scale: scaleAVX512,
		add: addAVX512, mul: mulAVX512, sum64: sum64AVX512, sumSqDev64: sumSqDev64AVX512, norm64: norm64AVX512,
		rows: sgemmRowsAVX512, rowsNR: 64,
		sdot: []sdotKernel{sdot1AVX512, sdot2AVX512, sdot3AVX512, sdot4AVX512, sdot5AVX512, sdot6AVX512},
		axpy: axpyAVX512, dot64: dot64AVX512, log1p64: log1p64AVX512, softplus64: softplus64AVX512,
		packedFlopsPerElement: 80}
)

func opsFor(l Level) *ops {
	switch l {
	case AVX512:
		return avx512Ops
	case AVX2:
		return avx2Ops
	}
	return goOps
}

// The kernels called directly rather than through ops, so that the
// compiler sees their //go:noescape and the small arrays passed to them stay
// on the stack (a call through a func value makes them escape: an
// allocation per call).

func adamWAt(l Level, p, grad, m, v *float32, n int, c *float32) {
	if l == AVX512 {
		adamWAVX512(p, grad, m, v, n, c)
		return
	}
	adamWAVX2(p, grad, m, v, n, c)
}

func cells1At(l Level, cells *uint32, n int, theta *float64, c *float64, yt *float64, out *float64, mask *float64) {
	if l == AVX512 {
		cells1AVX512(cells, n, theta, c, yt, out, mask)
		return
	}
	cells1AVX2(cells, n, theta, c, yt, out, mask)
}

func cellsW1At(l Level, cells *uint32, n int, theta *float64, c *float64, yt *float64, out *float64, w *float32, ybar *float64, q *float64) {
	if l == AVX512 {
		cellsW1AVX512(cells, n, theta, c, yt, out, w, ybar, q)
		return
	}
	cellsW1AVX2(cells, n, theta, c, yt, out, w, ybar, q)
}

// The assembly of simd_amd64.s; see internal/asmgen for what each does.

//go:noescape
func sgemmAVX2(kc int, a *float32, rsa, csa int, b, c *float32, ldc int, bias *float32, load int, alpha float32, pf *float32)

//go:noescape
func sgemmAVX512(kc int, a *float32, rsa, csa int, b, c *float32, ldc int, bias *float32, load int, alpha float32, pf *float32)

//go:noescape
func expAVX2(dst, src *float32, n int)

//go:noescape
func expAVX512(dst, src *float32, n int)

//go:noescape
func geluAVX2(dst, src *float32, n int)

//go:noescape
func geluAVX512(dst, src *float32, n int)

//go:noescape
func maxAVX2(x *float32, n int) float32

//go:noescape
func maxAVX512(x *float32, n int) float32

//go:noescape
func expSubSumAVX2(x *float32, n int, shift float32) float64

//go:noescape
func expSubSumAVX512(x *float32, n int, shift float32) float64

//go:noescape
func scaleAVX2(x *float32, n int, c float32)

//go:noescape
func scaleAVX512(x *float32, n int, c float32)

//go:noescape
func addAVX2(dst, a, b *float32, n int)

//go:noescape
func addAVX512(dst, a, b *float32, n int)

//go:noescape
func mulAVX2(dst, a, b *float32, n int)

//go:noescape
func mulAVX512(dst, a, b *float32, n int)

//go:noescape
func sum64AVX2(x *float32, n int) float64

//go:noescape
func sum64AVX512(x *float32, n int) float64

//go:noescape
func sumSqDev64AVX2(x *float32, n int, mean float64) float64

//go:noescape
func sumSqDev64AVX512(x *float32, n int, mean float64) float64

//go:noescape
func norm64AVX2(dst, src, gamma, beta *float32, n int, mean, inv float64)

//go:noescape
func norm64AVX512(dst, src, gamma, beta *float32, n int, mean, inv float64)

//go:noescape
func fmaPeakAVX2(n int)

//go:noescape
func fmaPeakAVX512(n int)

//go:noescape
func clockAdds(n int)

//go:noescape
func sigmoidAVX2(dst, src *float32, n int)

//go:noescape
func sigmoidAVX512(dst, src *float32, n int)

//go:noescape
func exp64AVX2(dst, src *float64, n int)

//go:noescape
func exp64AVX512(dst, src *float64, n int)

//go:noescape
func sigmoid64AVX2(dst, src *float64, n int)

//go:noescape
func sigmoid64AVX512(dst, src *float64, n int)

//go:noescape
func adamWAVX2(p, grad, m, v *float32, n int, c *float32)

//go:noescape
func adamWAVX512(p, grad, m, v *float32, n int, c *float32)

//go:noescape
func axpyAVX2(dst, x *float32, n int, alpha float32)

//go:noescape
func axpyAVX512(dst, x *float32, n int, alpha float32)

//go:noescape
func dot64AVX2(x, y *float32, n int) float64

//go:noescape
func dot64AVX512(x, y *float32, n int) float64

//go:noescape
func log1p64AVX2(dst, src *float64, n int)

//go:noescape
func log1p64AVX512(dst, src *float64, n int)

//go:noescape
func softplus64AVX2(dst, src *float64, n int)

//go:noescape
func softplus64AVX512(dst, src *float64, n int)

//go:noescape
func sdot1AVX2(k int, a *float32, lda int, w *float32, ldw int, c *float32, ldc int, bias *float32, load int, alpha float32)

//go:noescape
func sdot2AVX2(k int, a *float32, lda int, w *float32, ldw int, c *float32, ldc int, bias *float32, load int, alpha float32)

//go:noescape
func sdot3AVX2(k int, a *float32, lda int, w *float32, ldw int, c *float32, ldc int, bias *float32, load int, alpha float32)

//go:noescape
func sdot1AVX512(k int, a *float32, lda int, w *float32, ldw int, c *float32, ldc int, bias *float32, load int, alpha float32)

//go:noescape
func sdot2AVX512(k int, a *float32, lda int, w *float32, ldw int, c *float32, ldc int, bias *float32, load int, alpha float32)

//go:noescape
func sdot3AVX512(k int, a *float32, lda int, w *float32, ldw int, c *float32, ldc int, bias *float32, load int, alpha float32)

//go:noescape
func sdot4AVX512(k int, a *float32, lda int, w *float32, ldw int, c *float32, ldc int, bias *float32, load int, alpha float32)

//go:noescape
func sdot5AVX512(k int, a *float32, lda int, w *float32, ldw int, c *float32, ldc int, bias *float32, load int, alpha float32)

//go:noescape
func sdot6AVX512(k int, a *float32, lda int, w *float32, ldw int, c *float32, ldc int, bias *float32, load int, alpha float32)

//go:noescape
func sgemmRowsAVX2(kc int, a *float32, rsa, csa int, b *float32, ldb int, c *float32, ldc int, bias *float32, load int, alpha float32)

//go:noescape
func sgemmRowsAVX512(kc int, a *float32, rsa, csa int, b *float32, ldb int, c *float32, ldc int, bias *float32, load int, alpha float32)

//go:noescape
func cells1AVX2(cells *uint32, n int, theta *float64, c *float64, yt *float64, out *float64, mask *float64)

//go:noescape
func cells1AVX512(cells *uint32, n int, theta *float64, c *float64, yt *float64, out *float64, mask *float64)

//go:noescape
func cellsW1AVX2(cells *uint32, n int, theta *float64, c *float64, yt *float64, out *float64, w *float32, ybar *float64, q *float64)

//go:noescape
func cellsW1AVX512(cells *uint32, n int, theta *float64, c *float64, yt *float64, out *float64, w *float32, ybar *float64, q *float64)
