//go:build !openblas

package transformer

import "github.com/jeirt/jeirt/model/simd"

// matmul is C = alpha·op(A)·op(B) + bias + beta·C (bias nil: none) on every
// core; matmulSerial is Sgemm on the calling goroutine.
var (
	matmul       = simd.SgemmBias
	matmulSerial = simd.SgemmSerial
)

// linearWeights is a Linear layer's W as the default build's products read
// it: packed once at load into model/simd's panels, in place of a copy in
// any other layout.
type linearWeights = *simd.Packed

// newLinearWeights packs W as torch stores it, out × in.
func newLinearWeights(w []float32, out, in int) linearWeights { return simd.PackLinear(w, out, in) }

// applyLinear is y = x·Wᵀ + b on rows rows, on every core.
func applyLinear(y, x []float32, w linearWeights, b []float32, rows, in, out int) {
	simd.LinearPacked(y, x, w, b, rows)
}

// torchLayout returns W as torch stores it, out × in.
func torchLayout(w linearWeights, out, in int) []float32 { return w.Unpack() }
