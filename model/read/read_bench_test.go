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

	"github.com/cespare/xxhash/v2"
	"github.com/jeirt/jeirt/model/fileio"
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

// BenchmarkReadCached loads the response cache of a 112 x 36,000 long CSV:
// "hashed" is the default (the whole file hashed while the cache loads),
// "trust-mtime" skips the hash (--cache-trust-mtime); the difference is what
// the content key costs. It reports seconds per load and the text file's
// MB per second. At leaderboard scale, scripts/bench-scale.sh's rows
// csv-cached and csv-cached-mtime measure the same.
func BenchmarkReadCached(b *testing.B) {
	path := filepath.Join(b.TempDir(), "embedllm-size.csv")
	if err := writeEmbedLLMSize(path); err != nil {
		b.Fatal(err)
	}
	st, _ := os.Stat(path)
	cache := filepath.Join(b.TempDir(), "cache")
	if _, rep, err := File(path, Options{CacheDir: cache, CacheMin: -1}); err != nil || rep.Cache != "written" {
		b.Fatalf("writing the cache: %v %q", err, rep.Cache)
	}
	for _, trust := range []bool{false, true} {
		name := "hashed"
		if trust {
			name = "trust-mtime"
		}
		b.Run(name, func(b *testing.B) {
			for n := 0; n < b.N; n++ {
				_, rep, err := File(path, Options{CacheDir: cache, CacheMin: -1, CacheTrustMtime: trust})
				if err != nil || !strings.HasPrefix(rep.Cache, "loaded") {
					b.Fatalf("%v %q", err, rep.Cache)
				}
			}
			secs := b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(secs, "s/load")
			b.ReportMetric(float64(st.Size())/1e6/secs, "text-MB/s")
		})
	}
}

// BenchmarkReadParquet reads the 112 x 36,000 long file of
// BenchmarkReadLongEmbedLLMSize as Parquet (ConvertToParquet: dictionary-coded
// string columns, one row group of 1,048,576 rows at a time), in seconds per
// load.
func BenchmarkReadParquet(b *testing.B) {
	dir := b.TempDir()
	path, pq := filepath.Join(dir, "embedllm-size.csv"), filepath.Join(dir, "embedllm-size.parquet")
	if err := writeEmbedLLMSize(path); err != nil {
		b.Fatal(err)
	}
	if _, err := ConvertToParquet(path, pq, 0); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		r, _, err := File(pq, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if r.Len() < 3_600_000 || r.NumModels() != 112 || r.NumItems() != 36000 {
			b.Fatalf("read %d models, %d items, %d cells", r.NumModels(), r.NumItems(), r.Len())
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/load")
}

// BenchmarkHashText is the content hash alone: one read of the file through
// the input reader into xxHash64, in MB per second.
func BenchmarkHashText(b *testing.B) {
	path := filepath.Join(b.TempDir(), "embedllm-size.csv")
	if err := writeEmbedLLMSize(path); err != nil {
		b.Fatal(err)
	}
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		in, err := fileio.OpenInput(path)
		if err != nil {
			b.Fatal(err)
		}
		h := xxhash.New()
		in.Hash(h)
		if err := in.Drain(); err != nil {
			b.Fatal(err)
		}
		in.Close()
		if h.Sum64() == 0 {
			b.Fatal("zero hash")
		}
	}
}
