//go:build !openblas

package transformer

import (
	"github.com/jeirt/jeirt/model/kernel"
	G "gorgonia.org/gorgonia"
)

// BLASName says which matrix products the encoders use: jeirt's own kernels
// (package model/kernel: AVX-512, AVX2 with FMA or pure Go, chosen at start
// by CPU feature), which Gorgonia also gets through its Use hook, so that
// every float32 product of every graph in the program runs on them. Build
// with -tags openblas for OpenBLAS instead.
const BLASName = "jeirt"

func init() { G.Use(kernel.BLAS{}) }

// matmul is C = alpha·op(A)·op(B) + bias + beta·C (bias nil: none) on every
// core; matmulSerial is Sgemm on the calling goroutine.
var (
	matmul       = kernel.SgemmBias
	matmulSerial = kernel.SgemmSerial
)
