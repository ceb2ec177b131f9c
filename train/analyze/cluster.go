package analyze

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/eval"
)

// Directions clusters question directions by spherical k-means (Dhillon and
// Modha 2001: k-means on the unit sphere, cosine similarity, centroids
// renormalised) and compares the clusters with the items' categories: the
// JE-IRT paper's finding that question directions organise by subject.
// Lengths are ignored; in JE-IRT the direction of q says what a question
// tests and its length how hard it is.
//
// The zero value works: K = the number of categories, 10 restarts from
// k-means++ seeds (the one with the highest total cosine is kept), 100
// iterations each, seed 0.
type Directions struct {
	K        int
	Restarts int
	MaxIter  int
	Seed     int64
}

// DirectionsResult is a clustering of the items and its agreement with the
// categories.
type DirectionsResult struct {
	K        int
	Assign   []int     // cluster of each item (-1 for a zero vector)
	ARI, NMI float64   // against the categories (items with a category only)
	Clusters []Cluster // by cluster index
}

// Cluster is one cluster: its size and the categories nearest to it.
type Cluster struct {
	Size int
	// Top: the categories most frequent among its items, with their share
	// of the cluster (at most 3).
	Top []Share
	// Nearest: the categories whose mean direction has the highest cosine
	// with the cluster's centroid (at most 3).
	Nearest []Share
}

// Share is a category with a number: a share of items or a cosine.
type Share struct {
	Category string
	Value    float64
}

// Run clusters the J x dim question embeddings q (row-major) and compares
// with category (one entry per item; "" is no category).
func (c Directions) Run(q []float32, dim int, category []string) (*DirectionsResult, error) {
	J := len(category)
	if len(q) != J*dim || dim < 1 {
		return nil, fmt.Errorf("directions: %d values for %d items of dimension %d", len(q), J, dim)
	}
	cats := categories(category)
	if c.K == 0 {
		c.K = len(cats)
	}
	if c.Restarts == 0 {
		c.Restarts = 10
	}
	if c.MaxIter == 0 {
		c.MaxIter = 100
	}
	// Unit rows.
	x := make([]float64, J*dim)
	var live []int
	for j := 0; j < J; j++ {
		n := 0.0
		for d := 0; d < dim; d++ {
			n += float64(q[j*dim+d]) * float64(q[j*dim+d])
		}
		if n == 0 {
			continue
		}
		n = math.Sqrt(n)
		for d := 0; d < dim; d++ {
			x[j*dim+d] = float64(q[j*dim+d]) / n
		}
		live = append(live, j)
	}
	if c.K < 2 || c.K > len(live) {
		return nil, model.FieldErrorf("K", "directions: k = %d clusters for %d items (need 2 <= k <= items; give {K}, or items with at least two categories)", c.K, len(live))
	}
	rng := rand.New(rand.NewPCG(uint64(c.Seed), 0x9e3779b97f4a7c15))
	best, bestObj := []int(nil), math.Inf(-1)
	var bestCent []float64
	for rs := 0; rs < c.Restarts; rs++ {
		assign, cent, obj := sphericalKMeans(x, dim, live, c.K, c.MaxIter, rng)
		if obj > bestObj {
			best, bestObj, bestCent = assign, obj, cent
		}
	}
	res := &DirectionsResult{K: c.K, Assign: make([]int, J)}
	for j := range res.Assign {
		res.Assign[j] = -1
	}
	for k, j := range live {
		res.Assign[j] = best[k]
	}
	// Agreement on the items that have a category and a direction.
	var a, b []int
	catIdx := map[string]int{}
	for k, name := range cats {
		catIdx[name] = k
	}
	for _, j := range live {
		if category[j] != "" {
			a, b = append(a, res.Assign[j]), append(b, catIdx[category[j]])
		}
	}
	res.ARI, res.NMI = ARI(a, b), NMI(a, b)
	// Category mean directions, for the nearest categories of each cluster.
	catMean := make([][]float64, len(cats))
	for k := range catMean {
		catMean[k] = make([]float64, dim)
	}
	for _, j := range live {
		if category[j] == "" {
			continue
		}
		m := catMean[catIdx[category[j]]]
		for d := 0; d < dim; d++ {
			m[d] += x[j*dim+d]
		}
	}
	res.Clusters = make([]Cluster, c.K)
	count := make([]map[string]int, c.K)
	for k := range count {
		count[k] = map[string]int{}
	}
	for _, j := range live {
		k := res.Assign[j]
		res.Clusters[k].Size++
		if category[j] != "" {
			count[k][category[j]]++
		}
	}
	for k := range res.Clusters {
		var top, near []Share
		for name, n := range count[k] {
			top = append(top, Share{name, float64(n) / float64(res.Clusters[k].Size)})
		}
		for ci, name := range cats {
			near = append(near, Share{name, eval.Cosine(bestCent[k*dim:(k+1)*dim], catMean[ci])})
		}
		res.Clusters[k].Top, res.Clusters[k].Nearest = first(top, 3), first(near, 3)
	}
	return res, nil
}

// first sorts s by decreasing value (ties by name) and keeps n.
func first(s []Share, n int) []Share {
	sort.Slice(s, func(a, b int) bool {
		if s[a].Value != s[b].Value {
			return s[a].Value > s[b].Value
		}
		return s[a].Category < s[b].Category
	})
	return s[:min(n, len(s))]
}

func categories(c []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, g := range c {
		if g != "" && !seen[g] {
			seen[g] = true
			out = append(out, g)
		}
	}
	sort.Strings(out)
	return out
}

// sphericalKMeans runs one restart on the unit rows live of x: k-means++
// seeding on 1 − cosine, then alternating assignment to the most similar
// centroid and renormalised means. It returns each live row's cluster, the
// centroids (k x dim) and Σ cos(x_j, centroid).
func sphericalKMeans(x []float64, dim int, live []int, k, maxIter int, rng *rand.Rand) ([]int, []float64, float64) {
	n := len(live)
	cent := make([]float64, k*dim)
	row := func(i int) []float64 { j := live[i]; return x[j*dim : (j+1)*dim] }
	dot := func(a, b []float64) float64 {
		s := 0.0
		for d := range a {
			s += a[d] * b[d]
		}
		return s
	}
	// k-means++ (Arthur and Vassilvitskii 2007) with distance 1 − cos.
	copy(cent[:dim], row(rng.IntN(n)))
	dist := make([]float64, n)
	for i := range dist {
		dist[i] = math.Inf(1)
	}
	for c := 1; c < k; c++ {
		total := 0.0
		for i := 0; i < n; i++ {
			dist[i] = math.Min(dist[i], math.Max(0, 1-dot(row(i), cent[(c-1)*dim:c*dim])))
			total += dist[i]
		}
		pick := rng.IntN(n)
		if total > 0 {
			u := rng.Float64() * total
			for i := 0; i < n; i++ {
				u -= dist[i]
				if u <= 0 {
					pick = i
					break
				}
			}
		}
		copy(cent[c*dim:(c+1)*dim], row(pick))
	}
	assign := make([]int, n)
	for i := range assign {
		assign[i] = -1
	}
	obj := 0.0
	for it := 0; it < maxIter; it++ {
		changed := false
		obj = 0
		for i := 0; i < n; i++ {
			best, bv := 0, math.Inf(-1)
			for c := 0; c < k; c++ {
				if v := dot(row(i), cent[c*dim:(c+1)*dim]); v > bv {
					best, bv = c, v
				}
			}
			obj += bv
			if assign[i] != best {
				assign[i], changed = best, true
			}
		}
		if !changed && it > 0 {
			break
		}
		clear(cent)
		for i := 0; i < n; i++ {
			c := cent[assign[i]*dim : (assign[i]+1)*dim]
			for d, v := range row(i) {
				c[d] += v
			}
		}
		for c := 0; c < k; c++ {
			v := cent[c*dim : (c+1)*dim]
			nv := math.Sqrt(dot(v, v))
			if nv == 0 {
				// An empty cluster takes a random row.
				copy(v, row(rng.IntN(n)))
				continue
			}
			for d := range v {
				v[d] /= nv
			}
		}
	}
	return assign, cent, obj
}

// ARI is the adjusted Rand index of two labellings of the same items
// (Hubert and Arabie 1985): 1 for identical partitions, about 0 for
// independent ones.
func ARI(a, b []int) float64 {
	n := len(a)
	if n < 2 {
		return math.NaN()
	}
	table, ra, rb := contingency(a, b)
	c2 := func(x int) float64 { return float64(x) * float64(x-1) / 2 }
	var sij, sa, sb float64
	for _, v := range table {
		sij += c2(v)
	}
	for _, v := range ra {
		sa += c2(v)
	}
	for _, v := range rb {
		sb += c2(v)
	}
	exp := sa * sb / c2(n)
	den := (sa+sb)/2 - exp
	if den == 0 {
		if sij == exp {
			return 1
		}
		return 0
	}
	return (sij - exp) / den
}

// NMI is the normalised mutual information I(a; b)/√(H(a)H(b)) of two
// labellings (Strehl and Ghosh 2002): 1 for identical partitions, 0 for
// independent ones.
func NMI(a, b []int) float64 {
	n := float64(len(a))
	if n == 0 {
		return math.NaN()
	}
	table, ra, rb := contingency(a, b)
	// Sums in key order: a map's order changes from run to run, and so
	// would the last digits of a sum taken in it.
	h := func(m map[int]int) float64 {
		s := 0.0
		for _, k := range slices.Sorted(maps.Keys(m)) {
			p := float64(m[k]) / n
			s -= p * math.Log(p)
		}
		return s
	}
	keys := slices.SortedFunc(maps.Keys(table), func(x, y [2]int) int {
		if x[0] != y[0] {
			return x[0] - y[0]
		}
		return x[1] - y[1]
	})
	mi := 0.0
	for _, key := range keys {
		p := float64(table[key]) / n
		mi += p * math.Log(p/(float64(ra[key[0]])/n*float64(rb[key[1]])/n))
	}
	ha, hb := h(ra), h(rb)
	if ha == 0 || hb == 0 {
		if ha == hb {
			return 1
		}
		return 0
	}
	return mi / math.Sqrt(ha*hb)
}

func contingency(a, b []int) (map[[2]int]int, map[int]int, map[int]int) {
	t, ra, rb := map[[2]int]int{}, map[int]int{}, map[int]int{}
	for i := range a {
		t[[2]int{a[i], b[i]}]++
		ra[a[i]]++
		rb[b[i]]++
	}
	return t, ra, rb
}
