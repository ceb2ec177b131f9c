//go:build !openblas

package transformer

// BLASName says which BLAS the Gorgonia graphs use: Gonum's pure-Go
// implementation, Gorgonia's default. Build with -tags openblas for OpenBLAS.
const BLASName = "gonum"
