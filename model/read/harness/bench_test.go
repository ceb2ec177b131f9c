package harness

import (
	"archive/zip"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model/machine"
	"github.com/jeirt/jeirt/model/read/harness/harnesstest"
)

// benchSet is 8 models on 2,000 items with 1 KB texts, so that most of
// the bytes are text, as in real logs.
func benchSet() harnesstest.Set {
	s := harnesstest.Set{Task: "bench"}
	for m := range 8 {
		s.Models = append(s.Models, fmt.Sprintf("org/model-%d", m))
	}
	pad := strings.Repeat("lorem ipsum dolor sit amet ", 38)
	for j := range 2000 {
		s.Items = append(s.Items, harnesstest.Item{ID: fmt.Sprint(j), Text: fmt.Sprintf("question %d: %s", j, pad)})
	}
	for m := range s.Models {
		row := make([][]float64, len(s.Items))
		for j := range row {
			row[j] = []float64{float64((j + m) % 2)}
		}
		s.Scores = append(s.Scores, row)
	}
	return s
}

func treeBytes(b *testing.B, dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			fi, _ := d.Info()
			n += fi.Size()
		}
		return nil
	})
	return n
}

// unzipped is the uncompressed size of the zip files under dir.
func unzipped(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if zr, err := zip.OpenReader(p); err == nil {
				for _, f := range zr.File {
					n += int64(f.UncompressedSize64)
				}
				zr.Close()
			}
		}
		return nil
	})
	return n
}

// benchRead reads tool's logs of benchSet, reporting MB/s of log files
// (b.SetBytes) and the heap held by the result per cell, which must not
// grow with the texts: 16,000 cells and their 2,000 item texts.
func benchRead(b *testing.B, tool string) { benchReadOnly(b, tool, "") }

// benchReadOnly is benchRead keeping, of the logs written, only the files
// whose names end in ext ("": all).
func benchReadOnly(b *testing.B, tool, ext string) {
	dir := b.TempDir()
	s := benchSet()
	if ext != "" {
		// harnesstest writes the even models' inspect logs as .json, the
		// odd ones' as .eval: twice the models, half of them kept.
		s.Models = append(s.Models, s.Models...)
		for m := range s.Models[len(s.Models)/2:] {
			s.Models[len(s.Models)/2+m] += "x"
		}
		s.Scores = append(s.Scores, s.Scores...)
	}
	if err := harnesstest.Write(dir, tool, s); err != nil {
		b.Fatal(err)
	}
	if ext != "" {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && !strings.HasSuffix(p, ext) {
				os.Remove(p)
			}
			return nil
		})
	}
	size := treeBytes(b, dir)
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := machine.CPUSeconds()
	for range b.N {
		r, _, _, err := Read(dir, Options{Tool: tool})
		if err != nil || r.Len() != 16000 {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	// The process's CPU time, which a busy machine stretches less than the
	// wall time: with -cpu 1, MB per second of one core.
	if cpu := machine.CPUSeconds() - cpu0; cpu > 0 {
		b.ReportMetric(float64(size)*float64(b.N)/1e6/cpu, "MB/cpu-s")
		if ext == ".eval" {
			b.ReportMetric(float64(unzipped(dir))*float64(b.N)/1e6/cpu, "MB-unzipped/cpu-s")
		}
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r, _, _, _ := Read(dir, Options{Tool: tool})
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(r.Len()), "held-B/cell")
	runtime.KeepAlive(r)
}

// go test -run '^$' -bench 'BenchmarkRead' -benchtime 20x -cpu 1 ./model/read/harness
// (MB/s: wall time; MB/cpu-s: the CPU time of the process, one core with -cpu 1)
func BenchmarkReadLMEval(b *testing.B)  { benchRead(b, LMEval) }
func BenchmarkReadHELM(b *testing.B)    { benchRead(b, HELM) }
func BenchmarkReadInspect(b *testing.B) { benchRead(b, Inspect) }
func BenchmarkReadEEE(b *testing.B)     { benchRead(b, EEE) }

// The two kinds of inspect log on their own (MB/s of an .eval is of its
// compressed bytes).
func BenchmarkReadInspectJSON(b *testing.B) { benchReadOnly(b, Inspect, ".json") }
func BenchmarkReadInspectEval(b *testing.B) { benchReadOnly(b, Inspect, ".eval") }

// TestWriteBenchTree writes, when JEIRT_BENCH_LOGS_DIR names a folder,
// each tool's logs of JEIRT_BENCH_LOGS_MODELS models (default 40) on
// JEIRT_BENCH_LOGS_ITEMS items (default 4,000) with 1 KB texts under it,
// for scripts/bench-logs.sh; otherwise it is skipped.
func TestWriteBenchTree(t *testing.T) {
	dir := os.Getenv("JEIRT_BENCH_LOGS_DIR")
	if dir == "" {
		t.Skip("JEIRT_BENCH_LOGS_DIR is not set")
	}
	n, j := 40, 4000
	fmt.Sscan(os.Getenv("JEIRT_BENCH_LOGS_MODELS"), &n)
	fmt.Sscan(os.Getenv("JEIRT_BENCH_LOGS_ITEMS"), &j)
	s := harnesstest.Set{Task: "bench"}
	for m := range n {
		s.Models = append(s.Models, fmt.Sprintf("org/model-%d", m))
	}
	pad := strings.Repeat("lorem ipsum dolor sit amet ", 38)
	for k := range j {
		s.Items = append(s.Items, harnesstest.Item{ID: fmt.Sprint(k), Text: fmt.Sprintf("question %d: %s", k, pad)})
	}
	for m := range s.Models {
		row := make([][]float64, len(s.Items))
		for k := range row {
			row[k] = []float64{float64((k + m) % 2)}
		}
		s.Scores = append(s.Scores, row)
	}
	for _, tool := range Tools {
		if err := harnesstest.Write(filepath.Join(dir, tool), tool, s); err != nil {
			t.Fatal(err)
		}
	}
}
