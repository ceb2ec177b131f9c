package backend

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestNNLSMatchesEnumeration(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 200; trial++ {
		r := 1 + trial%4
		m := r + 1
		// Random least-squares problem with u = (θ, 1).
		w := NewSmallNNLS(m)
		n := 3 + rng.IntN(20)
		var rows [][]float64
		var ys []float64
		for i := 0; i < n; i++ {
			u := make([]float64, m)
			for d := 0; d < r; d++ {
				u[d] = rng.NormFloat64()
			}
			u[r] = 1
			rows = append(rows, u)
			ys = append(ys, rng.NormFloat64()*2)
		}
		obj := func(v []float64) float64 {
			s := 0.0
			for i, u := range rows {
				x := -ys[i]
				for d := range u {
					x += u[d] * v[d]
				}
				s += x * x
			}
			return s
		}
		fill := func() {
			clear(w.G)
			clear(w.H)
			for i, u := range rows {
				for a := 0; a < m; a++ {
					w.H[a] += u[a] * ys[i]
					for b := 0; b < m; b++ {
						w.G[a*m+b] += u[a] * u[b]
					}
				}
			}
		}
		fill()
		clear(w.X)
		w.SolveInPlace(m, r)
		got := obj(w.X)
		// Exhaustive: the optimum is the unconstrained solution on some support.
		best := math.Inf(1)
		for mask := 0; mask < 1<<r; mask++ {
			fill()
			for k := range w.inP {
				w.inP[k] = k == r || mask&(1<<k) != 0
			}
			z := make([]float64, m)
			if !w.solveP(m, z) {
				continue
			}
			ok := true
			for k := 0; k < r; k++ {
				if z[k] < 0 {
					ok = false
				}
			}
			if ok {
				best = math.Min(best, obj(z))
			}
		}
		for k := 0; k < r; k++ {
			if w.X[k] < 0 {
				t.Fatalf("trial %d: negative a %v", trial, w.X)
			}
		}
		if got > best*(1+1e-9)+1e-9 {
			t.Errorf("trial %d (r=%d): NNLS objective %.12g, enumeration %.12g", trial, r, got, best)
		}
	}
}
