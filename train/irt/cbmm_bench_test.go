package irt

import (
	"context"
	"testing"
	"time"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/backend"
)

// embedLLMSized is the EmbedLLM-sized synthetic set of the benchmarks:
// 112 models x 36,000 items, 10% missing, about 3.6 M observed cells.
func embedLLMSized(b *testing.B) *model.Responses {
	b.Helper()
	r, _, err := synth.Generate(synth.Options{Kind: "2pl", Models: 112, Items: 36000, Missing: 0.1, Seed: 2})
	if err != nil {
		b.Fatal(err)
	}
	return r
}

// BenchmarkCBMMIterationVsPasses reports one MM iteration on the
// EmbedLLM-sized set against two plain passes over its observed cells (the
// comparison with L-BFGS is train/irtlbfgs's BenchmarkCBMMEmbedLLM).
func BenchmarkCBMMIterationVsPasses(b *testing.B) {
	r := embedLLMSized(b)
	p := backend.NewCBMMProblem(r)
	for it := 0; it < b.N; it++ {
		// Two plain passes over the observed cells (one with exp and log, one
		// multiply-add), the memory and exp bound an iteration is measured against.
		batch, _ := cpuBackend{}.Load([]*backend.CBMMProblem{p}, 1, 1, 0)
		fit, _ := CBMM{}.Fit(context.Background(), r)
		batch.Set(0, fit.Theta, fit.A, fit.B)
		loss := make([]float64, 1)
		on := []bool{true}
		const reps = 10
		start := time.Now()
		for k := 0; k < reps; k++ {
			batch.Loss(context.Background(), on, loss)
		}
		lossPass := time.Since(start).Seconds() / reps
		cb := batch.(*cpuBatch)
		start = time.Now()
		for k := 0; k < reps; k++ {
			parallel(context.Background(), len(cb.probs[0].chunks)-1, cb.threads, func(c int) { modelsPass(cb, c) })
		}
		sumPass := time.Since(start).Seconds() / reps
		start = time.Now()
		for k := 0; k < reps; k++ {
			batch.Step(context.Background(), on, loss)
		}
		step := time.Since(start).Seconds() / reps
		b.Logf("loss pass (exp+log) %.1f ms, multiply-add pass %.1f ms, two passes %.1f ms; one MM iteration %.1f ms (%.2fx)",
			1000*lossPass, 1000*sumPass, 1000*(lossPass+sumPass), 1000*step, step/(lossPass+sumPass))
		b.ReportMetric(1000*step, "ms/iter")
		b.ReportMetric(step/(lossPass+sumPass), "iter/2passes")
	}
}

// BenchmarkCBMMPasses times the two passes of one rank-1 MM iteration and the
// loss-only pass on the EmbedLLM-sized set.
func BenchmarkCBMMPasses(b *testing.B) {
	r := embedLLMSized(b)
	p := backend.NewCBMMProblem(r)
	fit, err := CBMM{MaxIter: 5}.Fit(context.Background(), r)
	if err != nil {
		b.Fatal(err)
	}
	batch, _ := cpuBackend{}.Load([]*backend.CBMMProblem{p}, 1, 1, 0)
	batch.Set(0, fit.Theta, fit.A, fit.B)
	cb := batch.(*cpuBatch)
	pr := cb.probs[0]
	nc := len(pr.chunks) - 1
	ctx := context.Background()
	b.Run("loss", func(b *testing.B) {
		for it := 0; it < b.N; it++ {
			parallel(ctx, nc, cb.threads, func(c int) { cb.passA(pr, c, false) })
		}
	})
	b.Run("surrogate+items", func(b *testing.B) {
		for it := 0; it < b.N; it++ {
			batch.Set(0, fit.Theta, fit.A, fit.B)
			parallel(ctx, nc, cb.threads, func(c int) { cb.passA(pr, c, true) })
		}
	})
	b.Run("models", func(b *testing.B) {
		for it := 0; it < b.N; it++ {
			parallel(ctx, nc, cb.threads, func(c int) { modelsPass(cb, c) })
		}
	})
}

// modelsPass adds every item of chunk c to the θ-block normal equations (the
// multiply-add half of an iteration, which Step fuses with the item block).
func modelsPass(cb *cpuBatch, c int) {
	pr := cb.probs[0]
	p := pr.p
	acc := pr.acc[c]
	clear(acc)
	for j := pr.chunks[c]; j < pr.chunks[c+1]; j++ {
		cb.addItem(pr, acc, j, p.Cells[p.ItemStart[j]:p.ItemStart[j+1]], pr.yTilde[c])
	}
}

// BenchmarkCBMMFitEmbedLLM times one accelerated fit at the default tolerance.
func BenchmarkCBMMFitEmbedLLM(b *testing.B) {
	r := embedLLMSized(b)
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		r.Invalidate()
		fit, err := CBMM{Accelerate: true}.Fit(context.Background(), r)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(fit.Iterations), "iters")
	}
}
