//go:build openblas

package transformer

import (
	"github.com/jeirt/jeirt/encoder/gblas"
	"github.com/jeirt/jeirt/model/simd"
	"gonum.org/v1/gonum/blas"
)

// matmul is C = alpha·op(A)·op(B) + bias + beta·C (bias nil: none) on
// OpenBLAS (its own threads; package gblas also hands it to Gorgonia).
// matmulSerial, attention's per-head products, stays on model/simd: the
// encoders run one head per core, and OpenBLAS called from both cores at
// once spends its time in its own threads' waits (a MiniLM-sized forward at
// 14 GFLOP per CPU-second).
var matmulSerial = simd.SgemmSerial

func matmul(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, bias []float32) {
	gblas.Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	if bias != nil {
		forRows(m, func(lo, hi int) {
			for r := lo; r < hi; r++ {
				simd.Add(c[r*ldc:r*ldc+n], c[r*ldc:r*ldc+n], bias)
			}
		})
	}
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
