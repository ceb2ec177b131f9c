package eval

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/jeirt/jeirt/model"
)

// knnBenchData is a synthetic sparse response matrix of models x items with
// each cell observed with probability density, split 80/10/10 by cell, and
// random encoder vectors of width dim.
func knnBenchData(b *testing.B, models, items, dim int, density float64) (trainR, valR, testR *model.Responses, feat []float32) {
	rng := rand.New(rand.NewPCG(1, 2))
	r := &model.Responses{Models: make([]string, models), Items: make([]string, items)}
	for i := range r.Models {
		r.Models[i] = fmt.Sprint("m", i)
	}
	for j := range r.Items {
		r.Items[j] = fmt.Sprint("i", j)
	}
	for i := 0; i < models; i++ {
		for j := 0; j < items; j++ {
			if rng.Float64() < density {
				r.Model, r.Item = append(r.Model, int32(i)), append(r.Item, int32(j))
				r.Label = append(r.Label, uint8(rng.IntN(2)))
			}
		}
	}
	feat = make([]float32, items*dim)
	for k := range feat {
		feat[k] = float32(rng.NormFloat64())
	}
	trainR, valR, testR, err := Split(r, SplitOptions{Val: 0.1, Test: 0.1, Seed: 42, By: "cell"})
	if err != nil {
		b.Fatal(err)
	}
	return trainR, valR, testR, feat
}

// BenchmarkKNNSparse is the kNN baseline on the shape of a sparse leaderboard
// file, 2,000 models x 43,234 items, 384-wide vectors (the hash encoder's),
// at 2% and 5% of the cells observed: the dense way (every asked item
// against every answered one, with a full sort of each row) took 372 s of a
// 416 s training on such a file.
//
//	go test -run XXX -bench KNNSparse -benchtime 1x ./train/eval/
func BenchmarkKNNSparse(b *testing.B) {
	for _, density := range []float64{0.02, 0.05} {
		b.Run(fmt.Sprintf("2000x43234-%g", density), func(b *testing.B) {
			trainR, valR, testR, feat := knnBenchData(b, 2000, 43234, 384, density)
			b.ReportMetric(float64(trainR.Len()+valR.Len()+testR.Len()), "cells")
			b.ResetTimer()
			for n := 0; n < b.N; n++ {
				if _, _, err := (KNN{Features: feat, Dim: 384}).Fit(context.Background(), trainR, valR, testR); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
