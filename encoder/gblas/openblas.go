//go:build openblas

package gblas

/*
#cgo LDFLAGS: -lopenblas
#include <cblas.h>
*/
import "C"

import (
	"unsafe"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	G "gorgonia.org/gorgonia"
)

// openBLAS is Gonum's pure-Go BLAS with the two matrix products swapped for
// OpenBLAS's cblas_sgemm and cblas_dgemm. Built with -tags openblas
// (apt-get install libopenblas-dev), it is handed to Gorgonia through its
// Use hook, so every Mul and BatchedMatMul of the BERT graph (and any other
// Gorgonia graph in the program) runs on OpenBLAS.
type openBLAS struct{ gonum.Implementation }

// BLASName says which BLAS the Gorgonia graphs use.
const BLASName = "openblas"

func init() { G.Use(openBLAS{}) }

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

// Sgemm is OpenBLAS's cblas_sgemm on row-major operands, for the callers
// that multiply outside a graph (the encoders' Linear layers).
func Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	openBLAS{}.Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}
