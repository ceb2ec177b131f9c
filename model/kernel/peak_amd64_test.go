package kernel

import (
	"runtime"
	"testing"
)

// BenchmarkPeak measures the cores all busy at once: their clock (64
// dependent integer adds take 64 cycles) and the float32 FMA rate of each
// level's registers-only loop, the roof of the sgemm micro-kernels. Each
// call is short (about a third of a millisecond) so that the best of many
// is rarely cut by another process.
func BenchmarkPeak(b *testing.B) {
	threads := float64(runtime.GOMAXPROCS(0))
	b.Run("clock", func(b *testing.B) {
		const rounds = 1 << 14
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				clockAdds(rounds)
			}
		})
		b.ReportMetric(64*rounds*float64(b.N)/threads/b.Elapsed().Seconds()/1e9, "GHz")
	})
	for _, l := range Levels()[1:] {
		b.Run("fma/"+l.String(), func(b *testing.B) {
			const rounds = 1 << 14
			f, flops := fmaPeakAVX2, 12*8*2
			if l == AVX512 {
				f, flops = fmaPeakAVX512, 24*16*2
			}
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					f(rounds)
				}
			})
			b.ReportMetric(float64(flops)*rounds*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
