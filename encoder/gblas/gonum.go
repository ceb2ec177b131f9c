//go:build !openblas

// Package gblas chooses the BLAS behind every Gorgonia graph of the program
// (the BERT forward, the JE-IRT graph step): jeirt's own kernels (package
// model/simd: AVX-512, AVX2 with FMA or pure Go, chosen at start by CPU
// feature) by default, OpenBLAS's sgemm and dgemm in a build with -tags
// openblas (apt-get install libopenblas-dev). Importing it is what installs
// the choice.
package gblas

import (
	"github.com/jeirt/jeirt/model/simd"
	G "gorgonia.org/gorgonia"
)

// BLASName says which BLAS the Gorgonia graphs use: jeirt's own kernels.
// Build with -tags openblas for OpenBLAS.
const BLASName = "jeirt"

func init() { G.Use(simd.BLAS{}) }
