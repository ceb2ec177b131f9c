//go:build !unix

package simd

func cpuSeconds() float64 { return 0 }
