// Package irttest holds the helpers the tests of the IRT packages share:
// simulated data, dense label matrices, the monotone-loss check and the
// documented negative log posterior.
package irttest

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/synth"
)

// Gen simulates responses, failing the test on a bad option.
func Gen(t testing.TB, opt synth.Options) (*model.Responses, *synth.Truth) {
	t.Helper()
	r, truth, err := synth.Generate(opt)
	if err != nil {
		t.Fatal(err)
	}
	return r, truth
}

// AssertMonotone fails if the loss history ever increases by more than the
// rounding of a sum of |Ω| terms.
func AssertMonotone(t *testing.T, name string, h []float64) {
	t.Helper()
	for k := 1; k < len(h); k++ {
		if h[k] > h[k-1]*(1+1e-12) {
			t.Errorf("%s: loss rose at iteration %d: %.15g -> %.15g", name, k, h[k-1], h[k])
		}
	}
}

// Column is dimension d of the rows of a row-major matrix with r columns.
func Column(v []float64, r, d int) []float64 {
	out := make([]float64, len(v)/r)
	for i := range out {
		out[i] = v[i*r+d]
	}
	return out
}

// RespFromLabels builds Responses from a dense matrix with −1 for missing.
func RespFromLabels(y [][]int) *model.Responses {
	r := &model.Responses{}
	for i := range y {
		r.Models = append(r.Models, fmt.Sprintf("m%d", i))
	}
	for j := range y[0] {
		r.Items = append(r.Items, fmt.Sprintf("q%d", j))
	}
	for i, row := range y {
		for j, v := range row {
			if v >= 0 {
				r.Model = append(r.Model, int32(i))
				r.Item = append(r.Item, int32(j))
				r.Label = append(r.Label, uint8(v))
			}
		}
	}
	return r
}

// DenseFrom is r as a dense matrix with −1 for missing.
func DenseFrom(r *model.Responses) [][]int {
	y := make([][]int, r.NumModels())
	for i := range y {
		y[i] = make([]int, r.NumItems())
		for j := range y[i] {
			y[i][j] = -1
		}
	}
	for c := range r.Label {
		y[r.Model[c]][r.Item[c]] = int(r.Label[c])
	}
	return y
}

// Guttman returns responses where model i answers item j right iff
// i > 2j+jitter: the items separate the models perfectly.
func Guttman(n, m int) *model.Responses {
	r := &model.Responses{}
	for i := 0; i < n; i++ {
		r.Models = append(r.Models, fmt.Sprintf("m%d", i))
	}
	for j := 0; j < m; j++ {
		r.Items = append(r.Items, fmt.Sprintf("q%d", j))
	}
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			var y uint8
			if i > 2*j {
				y = 1
			}
			r.Model, r.Item, r.Label = append(r.Model, int32(i)), append(r.Item, int32(j)), append(r.Label, y)
		}
	}
	return r
}

// SignedTruth simulates a rank-2 MIRT with three item groups of 40: "alpha"
// loads on dimension 1, "beta" on dimension 2, and "gamma" positively on 1
// and negatively on 2 (a benchmark that penalises the second ability). θ is
// N(0, I) over n models; every cell is observed.
func SignedTruth(n int, seed uint64) (*model.Responses, []float64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	const per, r = 40, 2
	groups := []string{"alpha", "beta", "gamma"}
	J := per * len(groups)
	A := make([]float64, J*r)
	B := make([]float64, J)
	res := &model.Responses{}
	for j := 0; j < J; j++ {
		u := func(lo, hi float64) float64 { return lo + (hi-lo)*rng.Float64() }
		switch j / per {
		case 0:
			A[j*r], A[j*r+1] = u(1.2, 2.2), u(-0.2, 0.2)
		case 1:
			A[j*r], A[j*r+1] = u(-0.2, 0.2), u(0.8, 1.6)
		case 2:
			A[j*r], A[j*r+1] = u(0.6, 1.2), -u(0.6, 1.2)
		}
		B[j] = u(-1.5, 1.5)
		res.Items = append(res.Items, fmt.Sprintf("i%03d", j))
		res.ItemGroup = append(res.ItemGroup, groups[j/per])
	}
	for i := 0; i < n; i++ {
		res.Models = append(res.Models, fmt.Sprintf("m%03d", i))
		t1, t2 := rng.NormFloat64(), rng.NormFloat64()
		for j := 0; j < J; j++ {
			p := model.Sigmoid(t1*A[j*r] + t2*A[j*r+1] + B[j])
			var y uint8
			if rng.Float64() < p {
				y = 1
			}
			res.Model, res.Item, res.Label = append(res.Model, int32(i)), append(res.Item, int32(j)), append(res.Label, y)
		}
	}
	return res, A
}

// NegLogPosterior is the documented objective of a fit under prior p
// (model.Prior), written out from the formula: the binomial negative
// log-likelihood of the cells, Σ θ²/(2s_θ²), Σ (a/σ − μ_a)²/(2s_a²) and
// Σ (d − μ_d)²/(2s_d²) with d = b/σ. It is computed independently of the
// fitters (at rank 1 and without asymptotes).
func NegLogPosterior(r *model.Responses, f *model.IRT, p model.Prior) float64 {
	s := f.Sigma
	loss := 0.0
	for c := range r.Label {
		i, j := int(r.Model[c]), int(r.Item[c])
		u := f.Logit(i, j) / s
		n, k := float64(r.TrialsAt(c)), r.SuccessesAt(c)
		loss += n*model.Softplus(u) - k*u
	}
	for _, v := range f.Theta {
		loss += v * v / (2 * p.Theta * p.Theta)
	}
	for j := range f.B {
		da := f.A[j]/s - p.AMean
		dd := f.B[j]/s - p.DMean
		loss += da*da/(2*p.A*p.A) + dd*dd/(2*p.D*p.D)
	}
	return loss
}
