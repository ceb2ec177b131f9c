//go:build !openblas

package encoder

// BLASName says which BLAS the Gorgonia graphs use: Gonum's pure-Go
// implementation, Gorgonia's default. Build with -tags openblas for OpenBLAS.
const BLASName = "gonum"
