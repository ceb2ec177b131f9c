package irt

import (
	"context"
	"testing"

	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/backend"
)

// BenchmarkCBMMStepFamily times one MM iteration (backend Step: loss,
// surrogate, item and θ blocks) of the CPU backend on 112 x 20,000 cells of
// the same simulated 2PL, observed as 0/1 answers (binary), as k of n
// trials with n ~ U{1..10} (binomial), and as scores on 11 levels (graded),
// and of the 1PL and the 3PL on the binary cells. The weighted fits must
// cost at most 1.3x the binary one per iteration:
//
//	go test -run '^$' -bench CBMMStepFamily -benchtime 20x ./train/irt/
func BenchmarkCBMMStepFamily(b *testing.B) {
	base := synth.Options{Kind: "2pl", Models: 112, Items: 20000, Missing: 0.1, Seed: 2}
	for _, c := range []struct {
		name           string
		trials, levels int
		fam            backend.CBMMModel
	}{
		{"binary", 0, 0, backend.CBMMModel{}},
		{"binomial", 10, 0, backend.CBMMModel{}},
		{"graded", 0, 11, backend.CBMMModel{}},
		{"1pl", 0, 0, backend.CBMMModel{FixedA: true}},
		{"3pl", 0, 0, backend.CBMMModel{Guess: true, FitGuess: true, MaxGuess: 0.5, GuessPrior: DefaultGuessPrior}},
	} {
		o := base
		o.Trials, o.Levels = c.trials, c.levels
		r, _, err := synth.Generate(o)
		if err != nil {
			b.Fatal(err)
		}
		p, th, a, bb := stepStart(b, r)
		b.Run(c.name, func(b *testing.B) {
			var batch backend.CBMMBatch
			var err error
			if c.name == "binary" {
				batch, err = cpuBackend{}.Load([]*backend.CBMMProblem{p}, 1, 1, 0)
			} else {
				batch, err = cpuBackend{}.LoadFamily([]*backend.CBMMProblem{p}, 1, 1, 0, c.fam)
			}
			if err != nil {
				b.Fatal(err)
			}
			defer batch.Close()
			batch.Set(0, th, a, bb)
			if g, ok := batch.(backend.CBMMGuessing); ok && c.fam.Guess {
				cs := make([]float64, p.J)
				for j := range cs {
					cs[j] = 0.1
				}
				g.SetC(0, cs)
			}
			loss := []float64{0}
			b.SetBytes(int64(p.Len()))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := batch.Step(context.Background(), []bool{true}, loss); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(p.Len()), "ns/cell")
		})
	}
}

// BenchmarkCBMMFitFamily times whole fits (accelerated, to a relative loss
// change of 1e-6 from the SVD start) of the cells of BenchmarkCBMMStepFamily
// as 0/1 answers, k of n trials and graded scores, and reports the
// iterations each took:
//
//	go test -run '^$' -bench CBMMFitFamily -benchtime 3x ./train/irt/
func BenchmarkCBMMFitFamily(b *testing.B) {
	base := synth.Options{Kind: "2pl", Models: 112, Items: 20000, Missing: 0.1, Seed: 2}
	for _, c := range []struct {
		name           string
		trials, levels int
	}{{"binary", 0, 0}, {"binomial", 10, 0}, {"graded", 0, 11}} {
		o := base
		o.Trials, o.Levels = c.trials, c.levels
		r, _, err := synth.Generate(o)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			iters := 0
			for i := 0; i < b.N; i++ {
				f, err := CBMM{Accelerate: true}.Fit(context.Background(), r)
				if err != nil {
					b.Fatal(err)
				}
				iters = f.Iterations
			}
			b.ReportMetric(float64(iters), "iterations")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(iters*r.Len()), "ns/cell/iteration")
		})
	}
}
