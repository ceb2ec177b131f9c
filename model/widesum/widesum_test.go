package widesum

import (
	"math"
	"testing"
)

// Sum is the plain sum bit for bit while it fits, and past the float64
// range still gives a finite mean and an infinite total.
func TestSum(t *testing.T) {
	big := math.MaxFloat64
	for _, tc := range []struct {
		name        string
		xs          []float64
		total, mean float64
	}{
		{"small", []float64{0.1, 0.2, 0.3}, 0.1 + 0.2 + 0.3, (0.1 + 0.2 + 0.3) / 3},
		{"none", nil, 0, math.NaN()},
		{"three of 1e308", []float64{1e308, 1e308, 1e308}, math.Inf(1), 1e308},
		{"a thousand of the largest", repeat(big, 1000), math.Inf(1), big},
		{"1e308 then small", []float64{1e308, 1e308, 2, 4}, math.Inf(1), 5e307},
		{"a NaN", []float64{1, math.NaN()}, math.NaN(), math.NaN()},
	} {
		var s Sum
		for _, x := range tc.xs {
			s.Add(x)
		}
		same := func(got, want float64) bool {
			return got == want || math.IsNaN(got) && math.IsNaN(want) || math.Abs(got-want) <= 1e-15*math.Abs(want)
		}
		if got := s.Total(); !same(got, tc.total) {
			t.Errorf("%s: total %v, want %v", tc.name, got, tc.total)
		}
		if got := s.Mean(len(tc.xs)); !same(got, tc.mean) {
			t.Errorf("%s: mean %v, want %v", tc.name, got, tc.mean)
		}
	}
}

func repeat(x float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = x
	}
	return out
}
