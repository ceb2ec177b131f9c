package simd

import (
	"os"
	"strings"
)

// Level is an instruction-set level of the kernels.
type Level int

// The levels, lowest first.
const (
	Go     Level = iota // pure Go, every architecture
	AVX2                // amd64 with AVX2 and FMA
	AVX512              // amd64 with AVX-512 F and DQ
)

func (l Level) String() string {
	switch l {
	case AVX2:
		return "avx2"
	case AVX512:
		return "avx512"
	}
	return "go"
}

// ops is one level's implementation of every kernel.
type ops struct {
	level Level
	// mr×nr is the micro-kernel's tile; kc, mc and nc the cache blocks of
	// the depth, the rows and the columns (see sgemm.go).
	mr, nr, kc, mc, nc int
	kern               func(kc int, a *float32, rsa, csa int, b, c *float32, ldc int, bias *float32, load int, alpha float32, pf *float32)
	// rows is the 6×rowsNR micro-kernel of a product with few rows and op(B)
	// = B, read in place (see rows.go); none at the pure-Go level.
	rows   rowsKernel
	rowsNR int
	// sdot[i−1] is the kernel of a product A·Wᵀ on i rows of A (see sdot.go);
	// none at the pure-Go level.
	sdot []sdotKernel
	// lanes is the float32 vector width: the vector kernels below take n a
	// multiple of it (norm64 a multiple of lanes/2).
	lanes                 int
	exp, gelu, sigmoid    func(dst, src *float32, n int)
	exp64, sigmoid64      func(dst, src *float64, n int) // n a multiple of lanes/2
	max                   func(x *float32, n int) float32
	expSubSum             func(x *float32, n int, shift float32) float64
	scale                 func(x *float32, n int, c float32)
	add, mul              func(dst, a, b *float32, n int)
	sum64                 func(x *float32, n int) float64
	sumSqDev64            func(x *float32, n int, mean float64) float64
	norm64                func(dst, src, gamma, beta *float32, n int, mean, inv float64)
	axpy                  func(dst, x *float32, n int, alpha float32)
	dot64                 func(x, y *float32, n int) float64
	log1p64, softplus64   func(dst, src *float64, n int) // n a multiple of lanes/2
	packedFlopsPerElement float64                        // rough cost of packing one element, in flops
}

var goOps = &ops{level: Go, mr: goMR, nr: goNR, kc: 256, mc: 64, nc: 512, kern: sgemmGo, packedFlopsPerElement: 2}

// use is the level in force; tests switch it with SetLevel.
var use = detect()

// detected is the highest level this CPU runs, JEIRT_SIMD aside.
var detected = detectCPU()

// Current returns the level the kernels run at.
func Current() Level { return use.level }

func detect() *ops {
	l := detectCPU()
	switch strings.ToLower(strings.TrimSpace(os.Getenv("JEIRT_SIMD"))) {
	case "go", "off", "none", "purego":
		l = Go
	case "avx2":
		l = min(l, AVX2)
	}
	return opsFor(l)
}

// SetLevel switches every kernel to level l (at most what the CPU has) and
// returns the level it replaced: for tests and benchmarks that compare the
// levels, never while a kernel runs.
func SetLevel(l Level) Level {
	old := use.level
	use = opsFor(min(l, detected))
	return old
}

// Levels returns the levels this CPU runs, lowest first.
func Levels() []Level {
	var ls []Level
	for l := Go; l <= detected; l++ {
		ls = append(ls, l)
	}
	return ls
}
