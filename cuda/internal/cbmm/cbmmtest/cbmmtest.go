// Package cbmmtest holds the helpers the tests of the GPU's cBMM share
// (packages cuda and cuda/internal/cbmm): simulated problems, random start
// points and the relative difference of two parameter vectors.
package cbmmtest

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/synth"
)

// Problems returns one synthetic response matrix of kind (2pl or mirt) at
// rank per seed, each of a different shape, 30% of the cells missing.
func Problems(t testing.TB, kind string, rank int, seeds ...int64) []*model.Responses {
	t.Helper()
	var rs []*model.Responses
	for k, s := range seeds {
		r, _, err := synth.Generate(synth.Options{Kind: kind, Models: 25 + 7*k, Items: 60 + 13*k, Rank: rank, Missing: 0.3, Seed: s})
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	return rs
}

// RandomStart fills a start point of n models and j items at rank r
// (A ≥ 0) from rng.
func RandomStart(rng *rand.Rand, n, j, r int) (theta, a, b []float64) {
	theta, a, b = make([]float64, n*r), make([]float64, j*r), make([]float64, j)
	for k := range theta {
		theta[k] = rng.NormFloat64()
	}
	for k := range a {
		a[k] = math.Abs(rng.NormFloat64())
	}
	for k := range b {
		b[k] = rng.NormFloat64()
	}
	return
}

// MaxRelDiff is the largest |x−y| / (1+|x|) over the elements.
func MaxRelDiff(x, y []float64) float64 {
	m := 0.0
	for i := range x {
		m = math.Max(m, math.Abs(x[i]-y[i])/(1+math.Abs(x[i])))
	}
	return m
}
