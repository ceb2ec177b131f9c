package irtguard

import (
	"math"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/irt"
)

// embed returns the nested fit n as a starting point of the model c: the
// same X = θAᵀ + 1bᵀ, so the same probabilities (a 1PL is a 2PL whose
// slopes are equal; a 2PL a 3PL with c_j at the fit's start value, which
// the 3PL's EM moves; rank r − 1 is rank r with a zero column of A). The new
// ability column is the leading left singular vector of the nested fit's
// residuals y − P on the observed cells (three sweeps of subspace
// iteration), signed so that the larger share of its item loadings is
// positive: where the nested fit leaves the most to explain.
func embed(r *model.Responses, n *model.IRT, c irt.CBMM) *model.IRT {
	e := &model.IRT{Models: n.Models, Items: n.Items, Rank: c.Rank, Sigma: n.Sigma, Family: c.Model, Signed: c.Signed,
		B: append([]float64(nil), n.B...)}
	if c.Rank == n.Rank {
		e.Theta, e.A = append([]float64(nil), n.Theta...), append([]float64(nil), n.A...)
		return e
	}
	N, J, q, rk := len(n.Models), len(n.Items), n.Rank, c.Rank
	res := make([]float64, r.Len())
	for cell := range r.Label {
		i, j := int(r.Model[cell]), int(r.Item[cell])
		res[cell] = r.SuccessesAt(cell) - float64(r.TrialsAt(cell))*n.Prob(i, j)
	}
	u, v := make([]float64, N), make([]float64, J)
	for j := range v {
		v[j] = 1 + 0.5*math.Sin(float64(j)*2.399963) // a fixed start, not orthogonal to anything likely
	}
	for sweep := 0; sweep < 3; sweep++ {
		clear(u)
		for cell, x := range res {
			u[r.Model[cell]] += x * v[r.Item[cell]]
		}
		clear(v)
		for cell, x := range res {
			v[r.Item[cell]] += x * u[r.Model[cell]]
		}
		normalize(v)
	}
	var pos, neg float64
	for _, x := range v {
		if x > 0 {
			pos += x * x
		} else {
			neg += x * x
		}
	}
	if neg > pos {
		for i := range u {
			u[i] = -u[i]
		}
	}
	standardize(u)
	e.Theta, e.A = make([]float64, N*rk), make([]float64, J*rk)
	for i := 0; i < N; i++ {
		copy(e.Theta[i*rk:i*rk+q], n.Theta[i*q:(i+1)*q])
		e.Theta[i*rk+q] = u[i]
	}
	for j := 0; j < J; j++ {
		copy(e.A[j*rk:j*rk+q], n.A[j*q:(j+1)*q])
	}
	return e
}

func normalize(v []float64) {
	s := 0.0
	for _, x := range v {
		s += x * x
	}
	if s = math.Sqrt(s); s > 0 {
		for k := range v {
			v[k] /= s
		}
	}
}

// standardize centres u and scales it to population sd 1 (a constant u
// becomes 0).
func standardize(u []float64) {
	if len(u) == 0 {
		return
	}
	mu := 0.0
	for _, x := range u {
		mu += x / float64(len(u))
	}
	sd := 0.0
	for _, x := range u {
		sd += (x - mu) * (x - mu) / float64(len(u))
	}
	sd = math.Sqrt(sd)
	for k := range u {
		u[k] -= mu
		if sd > 0 {
			u[k] /= sd
		}
	}
}
