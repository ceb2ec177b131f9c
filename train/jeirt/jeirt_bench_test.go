package jeirt

import (
	"context"
	"math/rand/v2"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/backend"
	"github.com/jeirt/jeirt/train/eval"
)

// embedLLMBatch is one batch of the EmbedLLM-sized problem (112 models,
// D = 384, hidden 768, d = 256, batch 512): by question, 5 questions with
// about 100 of their 112 models each; per pair, 512 rows.
func embedLLMBatch(perPair bool) (*backend.JEIRTParams, *backend.JEIRTBatch) {
	rng := rand.New(rand.NewPCG(1, 1))
	const D, H, d, N, J = 384, 768, 256, 112, 36000
	p := initJEIRTParams(rng, D, H, d, N, J, 0)
	b := &backend.JEIRTBatch{}
	q := 0
	for len(b.Row) < 512 {
		b.Item = append(b.Item, int32(rng.IntN(J)))
		for k := 0; k < 102 && len(b.Row) < 512; k++ {
			b.Row = append(b.Row, int32(q))
			b.Model = append(b.Model, int32(rng.IntN(N)))
			b.Label = append(b.Label, float32(rng.IntN(2)))
		}
		q++
	}
	if perPair {
		items := b.Item
		b.Item = b.Item[:0:0]
		for k, r := range b.Row {
			b.Item = append(b.Item, items[r])
			b.Row[k] = int32(k)
		}
	}
	b.X = make([]float32, len(b.Item)*D)
	for k := range b.X {
		b.X[k] = float32(rng.NormFloat64() / 20)
	}
	b.Mask = backend.JEIRTDropout{P: 0.5, Seed: rng.Uint64()}.Mask(0, len(b.Item), H, nil)
	return p, b
}

func benchmarkStep(b *testing.B, perPair bool) {
	for _, step := range []string{StepFused, StepGraph} {
		b.Run(step, func(b *testing.B) {
			p, batch := embedLLMBatch(perPair)
			var grad gradientFunc = newFusedGradient(p)
			if step == StepGraph {
				grad = newGraphGradient(p)
			}
			st := newHostStepper(p, backend.AdamW{WeightDecay: 0.01}, grad)
			if _, err := st.Step(batch, 1e-4); err != nil { // compile outside the timing
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := st.Step(batch, 1e-4); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(batch.Row)*b.N)/b.Elapsed().Seconds(), "pairs/s")
		})
	}
}

// One training step (forward, backward, AdamW) on an EmbedLLM-sized batch of
// 512 pairs, with the fused and the graph step.
func BenchmarkJEIRTStepByQuestion(b *testing.B) { benchmarkStep(b, false) }
func BenchmarkJEIRTStepPerPair(b *testing.B)    { benchmarkStep(b, true) }

// BenchmarkJEIRTGraphOverFused runs the fused and the graph step in turn on
// one EmbedLLM-sized batch by question (each on its own copy of the
// parameters) and reports each one's fastest step and the ratio of the
// fastest and of the median steps: alternating the two, the ratio holds up
// on a machine others are using, where the times themselves do not.
func BenchmarkJEIRTGraphOverFused(b *testing.B) {
	pf, batch := embedLLMBatch(false)
	pg := pf.Clone()
	fused := newHostStepper(pf, backend.AdamW{WeightDecay: 0.01}, newFusedGradient(pf))
	graph := newHostStepper(pg, backend.AdamW{WeightDecay: 0.01}, newGraphGradient(pg))
	for _, s := range []*hostStepper{fused, graph} {
		if _, err := s.Step(batch, 1e-4); err != nil { // compile outside the timing
			b.Fatal(err)
		}
	}
	var tf, tg []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		fused.Step(batch, 1e-4)
		t1 := time.Now()
		graph.Step(batch, 1e-4)
		tf, tg = append(tf, t1.Sub(t0).Seconds()), append(tg, time.Since(t1).Seconds())
	}
	sort.Float64s(tf)
	sort.Float64s(tg)
	b.ReportMetric(tf[0]*1e6, "fused-min-µs")
	b.ReportMetric(tg[0]*1e6, "graph-min-µs")
	b.ReportMetric(tg[0]/tf[0], "ratio-min")
	b.ReportMetric(tg[b.N/2]/tf[b.N/2], "ratio-median")
}

// One epoch on EmbedLLM-sized synthetic data: 112 models x 36,000 questions,
// D = 384, d = 256, 3.6 M cells, 80/10/10 cell split, by-question batches of
// 512 (set JEIRT_BENCH_BATCHING=per-pair for the reference batching, slow;
// JEIRT_BENCH_ITEMS=N for fewer questions),
// with the fused step and the graph step in the same run. Reports seconds per
// epoch, the validation accuracy after the epoch and the peak resident set.
func BenchmarkJEIRTEpochEmbedLLM(b *testing.B) {
	items := 36000
	if v, err := strconv.Atoi(os.Getenv("JEIRT_BENCH_ITEMS")); err == nil && v > 0 {
		items = v // a smaller problem of the same shape, for profiling
	}
	r, _, feat := synthJEIRT(b, 112, items, 384, 8, 1)
	tr, va, _, err := eval.Split(r, eval.SplitOptions{Val: 0.1, Test: 0.1, Seed: 42})
	if err != nil {
		b.Fatal(err)
	}
	batching := "by-question"
	if v := os.Getenv("JEIRT_BENCH_BATCHING"); v != "" {
		batching = v
	}
	for _, step := range []string{StepFused, StepGraph} {
		b.Run(step, func(b *testing.B) {
			runtime.GC()
			b.ResetTimer()
			var secs, acc float64
			for i := 0; i < b.N; i++ {
				fit, err := Trainer{Dim: 256, Dropout: 0.5, Epochs: 1, BatchSize: 512, LR: 5e-5, WeightDecay: 0.01, Seed: 1,
					Batching: batching, Device: stepDevice[step]}.Fit(context.Background(), tr, va, feat, 384)
				if err != nil {
					b.Fatal(err)
				}
				secs += fit.SecondsPerEpoch
				acc += fit.History[len(fit.History)-1].ValAcc
			}
			b.ReportMetric(secs/float64(b.N), "s/epoch")
			b.ReportMetric(acc/float64(b.N), "val-acc")
			b.ReportMetric(float64(peakRSS())/(1<<20), "peakRSS-MiB")
		})
	}
	_ = model.Norm
}

// peakRSS is the process's peak resident set size in bytes (Linux VmHWM), or 0.
func peakRSS() int64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}
