package simd

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// bestRates runs f on every core at once, calls times each, and returns
// per core the best rate seen, work per call over the call's time: the
// calls are short (a third of a millisecond), so the best of many is rarely
// cut by another process, and all cores are busy while it is measured.
func bestRates(calls int, work float64, f func()) []float64 {
	threads := runtime.GOMAXPROCS(0)
	best := make([]float64, threads)
	var wg sync.WaitGroup
	for t := range best {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < calls; i++ {
				t0 := time.Now()
				f()
				best[t] = max(best[t], work/time.Since(t0).Seconds())
			}
		}()
	}
	wg.Wait()
	return best
}

// BenchmarkPeak measures the cores all busy at once: their clock (64
// dependent integer adds take 64 cycles; the slowest core's best) and the
// float32 FMA rate of each level's registers-only loop, the roof of the
// sgemm micro-kernels (summed over the cores).
func BenchmarkPeak(b *testing.B) {
	const rounds = 1 << 14
	b.Run("clock", func(b *testing.B) {
		rates := bestRates(b.N, 64*rounds, func() { clockAdds(rounds) })
		slowest := rates[0]
		for _, r := range rates {
			slowest = min(slowest, r)
		}
		b.ReportMetric(slowest/1e9, "GHz")
	})
	for _, l := range Levels()[1:] {
		b.Run("fma/"+l.String(), func(b *testing.B) {
			f, flops := fmaPeakAVX2, 12*8*2
			if l == AVX512 {
				f, flops = fmaPeakAVX512, 24*16*2
			}
			var sum float64
			for _, r := range bestRates(b.N, float64(flops*rounds), func() { f(rounds) }) {
				sum += r
			}
			b.ReportMetric(sum/1e9, "GFLOP/s")
		})
	}
}
