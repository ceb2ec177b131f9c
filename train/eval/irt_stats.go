package eval

import (
	"fmt"
	"math"
	"sort"
)

// KendallTau returns Kendall's τ_b between x and y (ties handled as in τ_b;
// pairs involving NaN are left out), NaN when either is constant or they
// differ in length. O(n²), fine for the model counts of LLM leaderboards.
func KendallTau(x, y []float64) float64 {
	n := len(x)
	if n != len(y) || n < 2 {
		return math.NaN()
	}
	var conc, disc, tx, ty float64
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			dx, dy := x[i]-x[j], y[i]-y[j]
			switch {
			case math.IsNaN(dx) || math.IsNaN(dy): // a model without cells: left out
			case dx == 0 && dy == 0:
			case dx == 0:
				tx++
			case dy == 0:
				ty++
			case (dx > 0) == (dy > 0):
				conc++
			default:
				disc++
			}
		}
	}
	den := math.Sqrt((conc + disc + tx) * (conc + disc + ty))
	if den == 0 {
		return math.NaN()
	}
	return (conc - disc) / den
}

// CorrelationNote says why a rank correlation between x (named xName) and y
// is undefined, or "" when it is defined: fewer than two pairs without NaN,
// or one side constant over them (a ranking without order).
func CorrelationNote(xName string, x []float64, yName string, y []float64) string {
	var xs, ys []float64
	for i := range x {
		if i < len(y) && !math.IsNaN(x[i]) && !math.IsNaN(y[i]) {
			xs, ys = append(xs, x[i]), append(ys, y[i])
		}
	}
	constant := func(v []float64) bool {
		for _, a := range v {
			if a != v[0] {
				return false
			}
		}
		return true
	}
	switch {
	case len(x) != len(y):
		return fmt.Sprintf("%d values of %s against %d of %s", len(x), xName, len(y), yName)
	case len(xs) < 2:
		return fmt.Sprintf("%d pair(s) of %s and %s; a rank correlation needs 2", len(xs), xName, yName)
	case constant(xs) && constant(ys):
		return fmt.Sprintf("%s and %s are each the same for all %d", xName, yName, len(xs))
	case constant(xs):
		return fmt.Sprintf("%s is the same for all %d (%.4g)", xName, len(xs), xs[0])
	case constant(ys):
		return fmt.Sprintf("%s is the same for all %d (%.4g)", yName, len(ys), ys[0])
	}
	return ""
}

// Spearman returns Spearman's rank correlation (Pearson of mid-ranks).
func Spearman(x, y []float64) float64 {
	if len(x) != len(y) || len(x) < 2 {
		return math.NaN()
	}
	return pearson(midRanks(x), midRanks(y))
}

// midRanks returns 1-based ranks of x in ascending order, ties sharing their mean rank.
func midRanks(x []float64) []float64 {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return x[idx[a]] < x[idx[b]] })
	r := make([]float64, len(x))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && x[idx[j+1]] == x[idx[i]] {
			j++
		}
		mid := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			r[idx[k]] = mid
		}
		i = j + 1
	}
	return r
}

// DescRanks returns 1-based ranks with 1 = largest value (ties share the best
// rank; NaN ranks last).
func DescRanks(v []float64) []int {
	x := make([]float64, len(v))
	for i, a := range v {
		x[i] = a
		if math.IsNaN(a) {
			x[i] = math.Inf(-1)
		}
	}
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return x[idx[a]] > x[idx[b]] })
	r := make([]int, len(x))
	for i, k := range idx {
		if i > 0 && x[k] == x[idx[i-1]] {
			r[k] = r[idx[i-1]]
		} else {
			r[k] = i + 1
		}
	}
	return r
}

// Pearson is Pearson's correlation of x and y (NaN when either is constant).
func Pearson(x, y []float64) float64 { return pearson(x, y) }

func pearson(x, y []float64) float64 {
	n := float64(len(x))
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= n
	my /= n
	var sxy, sxx, syy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return math.NaN()
	}
	return sxy / math.Sqrt(sxx*syy)
}

// Percentile returns the q-quantile (0 ≤ q ≤ 1) of sorted values by linear
// interpolation between order statistics.
func Percentile(sorted []float64, q float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	pos := q * float64(n-1)
	lo := int(math.Floor(pos))
	if lo >= n-1 {
		return sorted[n-1]
	}
	f := pos - float64(lo)
	return sorted[lo]*(1-f) + sorted[lo+1]*f
}
