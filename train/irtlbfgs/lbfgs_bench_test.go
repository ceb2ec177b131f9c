package irtlbfgs

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/irt"
)

// embedLLMSized is the EmbedLLM-sized synthetic set of train/irt's
// benchmarks: 112 models x 36,000 items, 10% missing, about 3.6 M observed
// cells.
func embedLLMSized(b *testing.B) *model.Responses {
	b.Helper()
	r, _, err := synth.Generate(synth.Options{Kind: "2pl", Models: 112, Items: 36000, Missing: 0.1, Seed: 2})
	if err != nil {
		b.Fatal(err)
	}
	return r
}

// traceRun fits with a Trace hook and returns the (seconds, loss) trace.
func traceRun(b *testing.B, c irt.CBMM, r *model.Responses) (secs, loss []float64, fit *model.IRT) {
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
//	go test -run - -bench CBMMEmbedLLM -benchtime 1x ./train/irtlbfgs
func BenchmarkCBMMEmbedLLM(b *testing.B) {
	r := embedLLMSized(b)
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
			secs, loss, fit := traceRun(b, irt.CBMM{Tol: 1e-10, Accelerate: acc}, r)
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
	}
}
