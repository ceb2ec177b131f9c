package irtstat

import (
	"fmt"
	"math"
	"sort"

	"github.com/jeirt/jeirt/model"
)

// BenchMIRTSelect keeps round(keep·J) items by BenchMIRT's rule: the items
// are cut into bins of equal count by difficulty (model.Difficulty: −d/a, or
// −d/‖a‖ at rank > 1), and each bin keeps its most discriminating items
// (largest ‖a‖), as many as its share of the kept total (largest remainders
// get one more), so the kept set spans the difficulty range with the
// sharpest items at each level. bins 0 means 10. Items with no difficulty
// (a = 0) are never kept. It returns the chosen items (bin by bin, easiest
// bin first, most discriminating first) and each one's difficulty.
func BenchMIRTSelect(fit *model.IRT, keep float64, bins int) (items []int, at []float64, err error) {
	J, rk := len(fit.B), fit.Rank
	if !(keep > 0 && keep <= 1) {
		return nil, nil, fmt.Errorf("keep %v must be in (0, 1]", keep)
	}
	if bins == 0 {
		bins = 10
	}
	if bins < 1 {
		return nil, nil, fmt.Errorf("bins %d must be at least 1", bins)
	}
	type cand struct {
		j       int
		b, disc float64
	}
	var cs []cand
	for j := 0; j < J; j++ {
		a := fit.A[j*rk : (j+1)*rk]
		b := model.Difficulty(a, fit.B[j])
		if math.IsNaN(b) || math.IsInf(b, 0) {
			continue
		}
		n := 0.0
		for _, v := range a {
			n += v * v
		}
		cs = append(cs, cand{j, b, math.Sqrt(n)})
	}
	if len(cs) == 0 {
		return nil, nil, fmt.Errorf("no item has a difficulty (every slope is 0)")
	}
	n := max(1, min(int(math.Round(keep*float64(J))), len(cs)))
	bins = min(bins, len(cs))
	sort.SliceStable(cs, func(x, y int) bool { return cs[x].b < cs[y].b })
	// Bin k holds cs[lo(k):lo(k+1)]; its quota is n·size/len(cs), rounded by
	// largest remainders.
	lo := func(k int) int { return k * len(cs) / bins }
	quota := make([]int, bins)
	rem := make([]float64, bins)
	given := 0
	for k := 0; k < bins; k++ {
		q := float64(n) * float64(lo(k+1)-lo(k)) / float64(len(cs))
		quota[k] = int(q)
		rem[k] = q - float64(quota[k])
		given += quota[k]
	}
	order := make([]int, bins)
	for k := range order {
		order[k] = k
	}
	sort.SliceStable(order, func(x, y int) bool { return rem[order[x]] > rem[order[y]] })
	for _, k := range order[:n-given] {
		quota[k]++
	}
	for k := 0; k < bins; k++ {
		bin := append([]cand(nil), cs[lo(k):lo(k+1)]...)
		sort.SliceStable(bin, func(x, y int) bool { return bin[x].disc > bin[y].disc })
		for _, c := range bin[:quota[k]] {
			items = append(items, c.j)
			at = append(at, c.b)
		}
	}
	return items, at, nil
}
