package irt

import (
	"context"
	"math"
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

// traceRun fits with a Trace hook and returns the (seconds, loss) trace.
func traceRun(b *testing.B, c CBMM, r *model.Responses) (secs, loss []float64, fit *model.IRT) {
	start := time.Now()
	c.Trace = func(_, _ int, l float64) {
		secs = append(secs, time.Since(start).Seconds())
		loss = append(loss, l)
	}
	fit, err := c.Fit(context.Background(), r)
	if err != nil {
		b.Fatal(err)
	}
	return secs, loss, fit
}

// secondsToGap is the first time the trace came within gap (relative) of best.
func secondsToGap(secs, loss []float64, best, gap float64) float64 {
	for k := range loss {
		if loss[k]-best <= gap*math.Abs(best) {
			return secs[k]
		}
	}
	return math.NaN()
}

// BenchmarkCBMMEmbedLLM reports, for plain and accelerated cBMM and the L-BFGS
// baseline on the same objective, the seconds to come within a relative gap of
// 1e-6 of the best loss any of them reached, iterations and ms per iteration.
//
//	go test -run - -bench CBMMEmbedLLM -benchtime 1x ./train/
func BenchmarkCBMMEmbedLLM(b *testing.B) {
	r := embedLLMSized(b)
	p := backend.NewCBMMProblem(r)
	b.Logf("%d x %d, %d observed cells", r.NumModels(), r.NumItems(), r.Len())
	for it := 0; it < b.N; it++ {
		type run struct {
			name       string
			secs, loss []float64
			total      float64
			iters      int
		}
		var runs []run
		for _, acc := range []bool{false, true} {
			start := time.Now()
			secs, loss, fit := traceRun(b, CBMM{Tol: 1e-10, Accelerate: acc}, r)
			name := "cbmm"
			if acc {
				name = "cbmm-accel"
			}
			runs = append(runs, run{name, secs, loss, time.Since(start).Seconds(), fit.Iterations})
		}
		start := time.Now()
		var ls, ll []float64
		lb, err := LBFGS2PL{Tol: 1e-10, Trace: func(l float64) {
			ls = append(ls, time.Since(start).Seconds())
			ll = append(ll, l)
		}}.Fit(context.Background(), r)
		if err != nil {
			b.Fatal(err)
		}
		runs = append(runs, run{"lbfgs", ls, ll, time.Since(start).Seconds(), lb.Iterations})
		best := math.Inf(1)
		for _, ru := range runs {
			for _, l := range ru.loss {
				best = math.Min(best, l)
			}
		}
		for _, ru := range runs {
			t := secondsToGap(ru.secs, ru.loss, best, 1e-6)
			b.Logf("%-11s seconds to gap 1e-6: %.3f; %d iterations in %.3fs (%.1f ms each); final loss %.2f (best %.2f)",
				ru.name, t, ru.iters, ru.total, 1000*ru.total/float64(ru.iters), ru.loss[len(ru.loss)-1], best)
			b.ReportMetric(t, ru.name+"-s-to-gap")
		}
		// Two plain passes over the observed cells (one with exp and log, one
		// multiply-add), the memory and exp bound an iteration is measured against.
		batch, _ := cpuBackend{}.Load([]*backend.CBMMProblem{p}, 1, 1, 0)
		fit, _ := CBMM{}.Fit(context.Background(), r)
		batch.Set(0, fit.Theta, fit.A, fit.B)
		loss := make([]float64, 1)
		on := []bool{true}
		const reps = 10
		start = time.Now()
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
