package encoder

import (
	"context"
	"fmt"
	"syscall"
	"testing"
)

// cpuSeconds is the user plus system CPU time of this process so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

// BenchmarkHashEncoder reports sentences per second of the default hash
// encoder on benchmark-style questions.
func BenchmarkHashEncoder(b *testing.B) {
	enc, _ := Open("hash")
	texts := make([]string, 4096)
	for i := range texts {
		p := paraphrases[i%20]
		texts[i] = fmt.Sprintf("%s %s (variant %d)", p[0], p[1], i)
	}
	ctx := context.Background()
	b.ResetTimer()
	cpu0 := cpuSeconds()
	for i := 0; i < b.N; i++ {
		if _, err := enc.Encode(ctx, texts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(texts))/b.Elapsed().Seconds(), "sentences/s")
	b.ReportMetric(float64(b.N*len(texts))/(cpuSeconds()-cpu0), "sentences/cpu-s")
}
