// Package simd holds the dense kernels of the encoders and the trainers
// (and of any other code that wants them): a blocked, multi-threaded SGEMM
// with the arguments of blas.Float32's Sgemm (and paths for products of a
// few rows), torch.nn.Linear on top of it, the vectorised elementwise
// kernels of a transformer layer (exp, exact GELU, softmax, LayerNorm, add,
// multiply), AdamW's update, axpy, float64 dot products, log1p and softplus,
// and cBMM's cell pass (LogisticCells).
//
// Each kernel has three implementations, picked once at start by CPU
// feature: AVX-512 (F and DQ), AVX2 with FMA, and pure Go. The assembly is
// generated (simd_amd64.s, from internal/asmgen: `go generate`); the pure-Go
// versions are the reference the others are tested against, and the only
// ones on other architectures. JEIRT_SIMD=avx2 or JEIRT_SIMD=go in the
// environment caps the level (for comparisons and to rule the assembly out
// when chasing a numerical difference); it never raises it above what the
// CPU has.
//
// The package imports nothing of jeirt: the encoders and the trainers both
// build on it.
package simd

//go:generate go run gen.go
