//go:build !openblas

// Package gblas chooses the BLAS behind every Gorgonia graph of the program
// (the BERT forward, the JE-IRT graph step): Gonum's pure-Go one by default,
// OpenBLAS's sgemm and dgemm in a build with -tags openblas (apt-get install
// libopenblas-dev). Importing it is what installs the choice.
package gblas

// BLASName says which BLAS the Gorgonia graphs use: Gonum's pure-Go
// implementation, Gorgonia's default. Build with -tags openblas for OpenBLAS.
const BLASName = "gonum"
