package read

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// writeEmbedLLMSize writes a long CSV the size of EmbedLLM's training set:
// 112 models x 36,000 items with 10% of cells missing at random (about 3.63 M
// rows), each item's models in shuffled order as evaluation dumps come.
func writeEmbedLLMSize(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	fmt.Fprintln(w, "prompt_id,model_id,category,label")
	for j := 0; j < 36000; j++ {
		for _, i := range rng.Perm(112) {
			if rng.Float64() < 0.1 {
				continue
			}
			fmt.Fprintf(w, "%d,%d,cat%d,%d\n", j, i, j%10, rng.IntN(2))
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// BenchmarkReadLongEmbedLLMSize reads a 112 x 36,000 long CSV and reports the
// seconds per load and the peak heap in use during the load (sampled every
// millisecond) as peak-heap-MB, and the process's peak resident memory
// (VmHWM, Linux) as peak-RSS-MB.
func BenchmarkReadLongEmbedLLMSize(b *testing.B) {
	path := filepath.Join(b.TempDir(), "embedllm-size.csv")
	if err := writeEmbedLLMSize(path); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	var peak atomic.Uint64
	for n := 0; n < b.N; n++ {
		runtime.GC()
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			var ms runtime.MemStats
			t := time.NewTicker(time.Millisecond)
			defer t.Stop()
			for {
				runtime.ReadMemStats(&ms)
				if v := ms.HeapInuse + ms.StackInuse; v > peak.Load() {
					peak.Store(v)
				}
				select {
				case <-stop:
					return
				case <-t.C:
				}
			}
		}()
		r, _, err := File(path, Options{})
		close(stop)
		<-done
		if err != nil {
			b.Fatal(err)
		}
		if r.Len() < 3_600_000 || r.NumModels() != 112 || r.NumItems() != 36000 {
			b.Fatalf("read %d models, %d items, %d cells", r.NumModels(), r.NumItems(), r.Len())
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/load")
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MB")
	if hwm := peakRSS(); hwm > 0 {
		b.ReportMetric(hwm/(1<<20), "peak-RSS-MB")
	}
}

// peakRSS returns the process's peak resident set size in bytes from
// /proc/self/status, or 0 where that is not available.
func peakRSS() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			if err != nil {
				return 0
			}
			return kb * 1024
		}
	}
	return 0
}
