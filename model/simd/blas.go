package simd

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// BLAS is Gonum's BLAS with Sgemm taken from this package: hand it to
// gorgonia.Use (or blas32.Use) and every float32 matrix product of the
// graphs goes to these kernels. The other routines, float64 included, stay
// Gonum's.
type BLAS struct{ gonum.Implementation }

// Sgemm implements blas.Float32 (see the package function Sgemm).
func (BLAS) Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}
