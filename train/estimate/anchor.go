package estimate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/jeirt/jeirt/model"
)

// Anchors chooses k anchor items among the n points of X (n x dim,
// row-major), as tinyBenchmarks does (Maia Polo et al. 2024, §3.1): the
// medoids of k clusters, each weighted by its cluster's share of the n
// items. The clustering is k-medoids under squared Euclidean distance
// (alternating assignment and update, Park and Jun 2009, from a k-means++
// start seeded by seed): under that distance a cluster's medoid is the
// member nearest its mean. It returns the anchors (indices into X) and
// their weights, which sum to 1.
func Anchors(X []float64, n, dim, k int, seed uint64) (anchors []int, weight []float64, err error) {
	if n <= 0 || dim <= 0 || len(X) != n*dim {
		return nil, nil, fmt.Errorf("estimate: anchors of %d values for %d points of dimension %d", len(X), n, dim)
	}
	if k < 1 || k > n {
		return nil, nil, model.FieldErrorf("Budget", "{Budget} %d must be in [1, %d] (the items)", k, n)
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	dist := func(i, m int) float64 {
		var s float64
		for d := 0; d < dim; d++ {
			x := X[i*dim+d] - X[m*dim+d]
			s += x * x
		}
		return s
	}
	// k-means++: each next medoid drawn with probability ∝ squared distance.
	med := []int{rng.IntN(n)}
	near := make([]float64, n)
	for i := range near {
		near[i] = dist(i, med[0])
	}
	for len(med) < k {
		var tot float64
		for _, d := range near {
			tot += d
		}
		next := rng.IntN(n)
		if tot > 0 {
			u := rng.Float64() * tot
			for i, d := range near {
				if u -= d; u <= 0 && d > 0 {
					next = i
					break
				}
			}
		}
		for contains(med, next) { // duplicates: the points left are all at distance 0
			next = (next + 1) % n
		}
		med = append(med, next)
		for i := range near {
			near[i] = math.Min(near[i], dist(i, next))
		}
	}
	label := make([]int, n)
	mean := make([]float64, k*dim)
	size := make([]int, k)
	for iter := 0; iter < 100; iter++ {
		for i := 0; i < n; i++ {
			best, bd := 0, math.Inf(1)
			for c, m := range med {
				if d := dist(i, m); d < bd {
					best, bd = c, d
				}
			}
			label[i] = best
		}
		clear(mean)
		clear(size)
		for i := 0; i < n; i++ {
			c := label[i]
			size[c]++
			for d := 0; d < dim; d++ {
				mean[c*dim+d] += X[i*dim+d]
			}
		}
		changed := false
		bestD := make([]float64, k)
		newMed := append([]int(nil), med...)
		for c := range bestD {
			bestD[c] = math.Inf(1)
		}
		for i := 0; i < n; i++ {
			c := label[i]
			var s float64
			for d := 0; d < dim; d++ {
				x := X[i*dim+d] - mean[c*dim+d]/float64(size[c])
				s += x * x
			}
			if s < bestD[c] || (s == bestD[c] && i == med[c]) {
				bestD[c], newMed[c] = s, i
			}
		}
		for c := range med {
			if newMed[c] != med[c] {
				changed = true
			}
		}
		med = newMed
		if !changed {
			break
		}
	}
	weight = make([]float64, k)
	for c := range med {
		weight[c] = float64(size[c]) / float64(n)
	}
	return med, weight, nil
}

func contains(s []int, x int) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// IRTEmbedding is each item's point in tinyBenchmarks' "anchor-irt"
// clustering: (a_j, d_j)/σ, J x (Rank + 1).
func IRTEmbedding(fit *model.IRT) (X []float64, dim int) {
	r, sg := fit.Rank, fit.Sigma
	if !(sg > 0) {
		sg = 1
	}
	dim = r + 1
	X = make([]float64, 0, len(fit.B)*dim)
	for j := range fit.B {
		for k := 0; k < r; k++ {
			X = append(X, fit.A[j*r+k]/sg)
		}
		X = append(X, fit.B[j]/sg)
	}
	return X, dim
}

// CorrectnessEmbedding is each item's point in tinyBenchmarks' "anchor"
// clustering: its column of answers over the models of r (fraction
// correct; an unobserved cell takes the item's observed mean, 0.5 when it
// has none), J x NumModels.
func CorrectnessEmbedding(r *model.Responses) (X []float64, dim int) {
	J, N := r.NumItems(), r.NumModels()
	X = make([]float64, J*N)
	acc := r.ItemAccuracy()
	for j := 0; j < J; j++ {
		fill := acc[j]
		if math.IsNaN(fill) {
			fill = 0.5
		}
		for i := 0; i < N; i++ {
			X[j*N+i] = fill
		}
	}
	for c := range r.Label {
		X[int(r.Item[c])*N+int(r.Model[c])] = r.ScoreAt(c)
	}
	return X, N
}

// RankEmbedding is IRTEmbedding with each coordinate replaced by its rank
// among the items, scaled to (0, 1); items that tie (the same fitted
// value) share their mean rank, as the model cannot tell them apart.
// k-medoids on it gives clusters of about equal size that follow the
// items' joint order in discrimination and difficulty, so that no anchor
// stands for a large share of the bank and items whose parameters ran off
// (answered right, or wrong, by every fitted model) do not take clusters
// of their own, as they do on (a, d) where the fitted models are few.
func RankEmbedding(fit *model.IRT) (X []float64, dim int) {
	raw, dim := IRTEmbedding(fit)
	J := len(fit.B)
	X = make([]float64, len(raw))
	idx := make([]int, J)
	for d := 0; d < dim; d++ {
		for j := range idx {
			idx[j] = j
		}
		sort.SliceStable(idx, func(a, b int) bool { return raw[idx[a]*dim+d] < raw[idx[b]*dim+d] })
		for lo := 0; lo < J; {
			hi := lo + 1
			for hi < J && raw[idx[hi]*dim+d] == raw[idx[lo]*dim+d] {
				hi++
			}
			rank := (float64(lo+hi-1)/2 + 0.5) / float64(J) // the tied items' mean rank
			for _, j := range idx[lo:hi] {
				X[j*dim+d] = rank
			}
			lo = hi
		}
	}
	return X, dim
}
