package irt

import (
	"context"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/backend"
)

// BenchmarkCBMMStepBinary times one MM iteration of the CPU backend on the
// 0/1 cells of BenchmarkCBMMStepFamily (112 x 20,000, 10% missing). It uses
// only what every release has, so that scripts/bench-graded.sh can run it
// on an earlier commit's code in the same run and compare:
//
//	go test -run '^$' -bench CBMMStepBinary -benchtime 20x ./train/irt/
func BenchmarkCBMMStepBinary(b *testing.B) {
	r, _, err := synth.Generate(synth.Options{Kind: "2pl", Models: 112, Items: 20000, Missing: 0.1, Seed: 2})
	if err != nil {
		b.Fatal(err)
	}
	p, th, a, bb := stepStart(b, r)
	batch, err := cpuBackend{}.Load([]*backend.CBMMProblem{p}, 1, 1, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer batch.Close()
	batch.Set(0, th, a, bb)
	loss := []float64{0}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := batch.Step(context.Background(), []bool{true}, loss); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(p.Len()), "ns/cell")
}

// stepStart lays r out for the CPU backend and gives the SVD start.
func stepStart(b *testing.B, r *model.Responses) (p *backend.CBMMProblem, th, a, bb []float64) {
	p, err := layoutCells(r, 2)
	if err != nil {
		b.Fatal(err)
	}
	if th, a, bb, err = SVDStart(context.Background(), p, 1, 1, 1, true); err != nil {
		b.Fatal(err)
	}
	return p, th, a, bb
}
