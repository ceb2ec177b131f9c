//go:build openblas

package transformer

/*
#cgo LDFLAGS: -lopenblas
#include <cblas.h>
*/
import "C"

import (
	"unsafe"

	"github.com/jeirt/jeirt/model/kernel"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	G "gorgonia.org/gorgonia"
)

// openBLAS is Gonum's pure-Go BLAS with the two matrix products swapped for
// OpenBLAS's cblas_sgemm and cblas_dgemm. Built with -tags openblas
// (apt-get install libopenblas-dev), it is handed to Gorgonia through its
// Use hook, so every Gorgonia product in the program runs on OpenBLAS, and
// the encoders' Linear layers go to it through matmul; attention's small
// per-head products stay on model/kernel (see matmulSerial).
type openBLAS struct{ gonum.Implementation }

// BLASName says which BLAS the Gorgonia graphs use.
const BLASName = "openblas"

func init() { G.Use(openBLAS{}) }

// matmul is C = alpha·op(A)·op(B) + bias + beta·C (bias nil: none) on
// OpenBLAS (its own threads). matmulSerial, attention's per-head products,
// stays on model/kernel: the encoders run one head per core, and OpenBLAS
// called from both cores at once spends its time in its own threads' waits
// (a MiniLM-sized forward at 14 GFLOP per CPU-second).
var matmulSerial = kernel.SgemmSerial

func matmul(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, bias []float32) {
	openBLAS{}.Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	if bias != nil {
		forRows(m, func(lo, hi int) {
			for r := lo; r < hi; r++ {
				kernel.Add(c[r*ldc:r*ldc+n], c[r*ldc:r*ldc+n], bias)
			}
		})
	}
}

func cblasTrans(t blas.Transpose) C.enum_CBLAS_TRANSPOSE {
	if t == blas.NoTrans {
		return C.CblasNoTrans
	}
	return C.CblasTrans
}

func (o openBLAS) Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 || k == 0 || len(a) == 0 || len(b) == 0 {
		o.Implementation.Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	C.cblas_sgemm(C.CblasRowMajor, cblasTrans(tA), cblasTrans(tB), C.blasint(m), C.blasint(n), C.blasint(k),
		C.float(alpha), (*C.float)(unsafe.Pointer(&a[0])), C.blasint(lda),
		(*C.float)(unsafe.Pointer(&b[0])), C.blasint(ldb),
		C.float(beta), (*C.float)(unsafe.Pointer(&c[0])), C.blasint(ldc))
}

func (o openBLAS) Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	if m == 0 || n == 0 || k == 0 || len(a) == 0 || len(b) == 0 {
		o.Implementation.Dgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	C.cblas_dgemm(C.CblasRowMajor, cblasTrans(tA), cblasTrans(tB), C.blasint(m), C.blasint(n), C.blasint(k),
		C.double(alpha), (*C.double)(unsafe.Pointer(&a[0])), C.blasint(lda),
		(*C.double)(unsafe.Pointer(&b[0])), C.blasint(ldb),
		C.double(beta), (*C.double)(unsafe.Pointer(&c[0])), C.blasint(ldc))
}

// linearWeights is a Linear layer's W transposed, in × out, so that a layer
// is one cblas_sgemm x·W.
type linearWeights []float32

// newLinearWeights transposes W as torch stores it, out × in.
func newLinearWeights(w []float32, out, in int) linearWeights {
	t := make([]float32, in*out)
	for o := 0; o < out; o++ {
		for i := 0; i < in; i++ {
			t[i*out+o] = w[o*in+i]
		}
	}
	return t
}

// applyLinear is y = x·W + b on rows rows.
func applyLinear(y, x []float32, w linearWeights, b []float32, rows, in, out int) {
	matmul(blas.NoTrans, blas.NoTrans, rows, out, in, 1, x, in, w, out, 0, y, out, b)
}

// torchLayout returns W as torch stores it, out × in.
func torchLayout(w linearWeights, out, in int) []float32 {
	t := make([]float32, out*in)
	for i := 0; i < in; i++ {
		for o := 0; o < out; o++ {
			t[o*in+i] = w[i*out+o]
		}
	}
	return t
}
