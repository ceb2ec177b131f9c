//go:build !amd64

package simd

func detectCPU() Level { return Go }

func opsFor(Level) *ops { return goOps }

func adamWAt(Level, *float32, *float32, *float32, *float32, int, *float32) {
	panic("kernel: no vector level")
}

func cells1At(Level, *uint32, int, *float64, *float64, *float64, *float64, *float64) {
	panic("kernel: no vector level")
}

func cellsW1At(Level, *uint32, int, *float64, *float64, *float64, *float64, *float32, *float64, *float64) {
	panic("kernel: no vector level")
}
