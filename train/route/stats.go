package route

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/jeirt/jeirt/model/widesum"
)

// meanSE is the mean of xs and its standard error, sd/√n with the n−1
// variance (0 for a single value).
func meanSE(xs []float64) (mean, se float64) {
	n := float64(len(xs))
	if n == 0 {
		return math.NaN(), math.NaN()
	}
	for _, x := range xs {
		mean += x
	}
	mean /= n
	if n < 2 {
		return mean, 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / (n - 1) / n)
}

// pairedDiff is the mean of a − b and its standard error over paired
// values.
func pairedDiff(a, b []float64) (diff, se float64) {
	d := make([]float64, len(a))
	for k := range a {
		d[k] = a[k] - b[k]
	}
	return meanSE(d)
}

// sign is +1, −1 or 0 for a difference, exact ties (within 1e-12) 0.
func sign(d float64) int {
	switch {
	case d > 1e-12:
		return 1
	case d < -1e-12:
		return -1
	}
	return 0
}

// bestSingleIndex is the index of the best-single point of pts, or −1.
func bestSingleIndex(pts []RoutePoint) int {
	for k, p := range pts {
		if p.Policy == "best-single" {
			return k
		}
	}
	return -1
}

// Intervals fills, in points of one split that kept their Outcomes
// (RouteEvalOptions.Outcomes), AccuracySE (the standard error of the mean
// label over the questions), VsBest and VsBestSE (the paired difference
// from best-single's labels on the same questions, and its standard
// error), and Wins or Losses (1 by the sign of VsBest). Points without
// outcomes are left as they are.
func Intervals(pts []RoutePoint) {
	b := bestSingleIndex(pts)
	for k := range pts {
		p := &pts[k]
		if len(p.Outcomes) == 0 {
			continue
		}
		_, p.AccuracySE = meanSE(p.Outcomes)
		if b < 0 || len(pts[b].Outcomes) != len(p.Outcomes) {
			continue
		}
		p.VsBest, p.VsBestSE = pairedDiff(p.Outcomes, pts[b].Outcomes)
		p.Wins, p.Losses = 0, 0
		switch sign(p.VsBest) {
		case 1:
			p.Wins = 1
		case -1:
			p.Losses = 1
		}
	}
}

// pointKey identifies a point across splits: the default point is one
// point whatever rule each split recorded, and so is margin-val whatever
// δ each split's validation questions chose.
func pointKey(p RoutePoint) string {
	if p.Policy == "router" && (p.Rule == "default" || p.Rule == "margin-val") {
		return "router|" + p.Rule
	}
	return p.Policy + "|" + p.Rule + "|" + strconv.FormatFloat(p.Param, 'g', 6, 64)
}

// Combine is the points of K repeated splits in one curve: each point's
// Accuracy, costs and VsBest are the means over the splits it appears in,
// Items and Fallbacks the totals, Wins and Losses the splits where it beat
// or lost to that split's best-single. AccuracySE and VsBestSE are the
// corrected resampled standard errors of Nadeau and Bengio (2003, Machine
// Learning 52:239): sqrt((1/K + n_test/n_train)·s²), s² the variance over
// the splits, which widens the naive s/√K for the overlap of random
// splits' training and test questions; testOverTrain is n_test/n_train.
// One split is returned with Intervals (over its questions) instead.
// The default point's Spec lists each recorded rule with its count, and
// margin-val's each chosen δ when they differ.
func Combine(splits [][]RoutePoint, testOverTrain float64) []RoutePoint {
	if len(splits) == 1 {
		out := append([]RoutePoint(nil), splits[0]...)
		Intervals(out)
		return out
	}
	type acc struct {
		pt              RoutePoint
		accs, diffs     []float64
		totals, means   widesum.Sum
		specs           map[string]int
		wins, losses, n int
	}
	byKey := map[string]*acc{}
	var order []string
	for _, pts := range splits {
		b := bestSingleIndex(pts)
		for _, p := range pts {
			key := pointKey(p)
			a, ok := byKey[key]
			if !ok {
				a = &acc{pt: p, specs: map[string]int{}}
				byKey[key] = a
				order = append(order, key)
				a.pt.Items, a.pt.Fallbacks, a.pt.Flagged, a.pt.Departures = 0, 0, 0, 0
			}
			a.n++
			a.accs = append(a.accs, p.Accuracy)
			a.totals.Add(p.TotalCost)
			a.means.Add(p.MeanCost)
			a.pt.Items += p.Items
			a.pt.Fallbacks += p.Fallbacks
			a.pt.Flagged += p.Flagged
			a.pt.Departures += p.Departures
			switch {
			case p.Spec != "":
				a.specs[p.Spec]++
			case p.Rule == "margin-val":
				a.specs[strconv.FormatFloat(p.Param, 'g', 6, 64)]++
			}
			if b >= 0 {
				d := p.Accuracy - pts[b].Accuracy
				a.diffs = append(a.diffs, d)
				switch sign(d) {
				case 1:
					a.wins++
				case -1:
					a.losses++
				}
			}
		}
	}
	corrected := func(xs []float64) (float64, float64) { return CorrectedMeanSE(xs, testOverTrain) }
	out := make([]RoutePoint, 0, len(order))
	for _, key := range order {
		a := byKey[key]
		p := a.pt
		p.Outcomes = nil
		p.Accuracy, p.AccuracySE = corrected(a.accs)
		p.TotalCost, p.MeanCost = a.totals.Mean(a.n), a.means.Mean(a.n)
		p.VsBest, p.VsBestSE = math.NaN(), math.NaN()
		if len(a.diffs) > 0 {
			p.VsBest, p.VsBestSE = corrected(a.diffs)
		}
		p.Wins, p.Losses = a.wins, a.losses
		p.Spec = specCounts(a.specs)
		if p.Rule == "margin-val" {
			// One δ over every split is a number; several are a Spec.
			p.Param, p.Spec = math.NaN(), specCounts(a.specs)
			if v, err := strconv.ParseFloat(p.Spec, 64); err == nil {
				p.Param, p.Spec = v, ""
			}
		}
		out = append(out, p)
	}
	return out
}

// CorrectedMeanSE is the mean of a figure over K repeated random splits
// and Nadeau and Bengio's corrected standard error,
// sqrt((1/K + testOverTrain)·s²), s² the variance over the splits (n−1).
func CorrectedMeanSE(xs []float64, testOverTrain float64) (mean, se float64) {
	mean, se = meanSE(xs)
	k := float64(len(xs))
	// meanSE's se² is s²/K; the correction replaces 1/K by 1/K + ratio.
	return mean, se * math.Sqrt(k*(1/k+testOverTrain))
}

// specCounts is one spec, or several with their counts, most frequent first.
func specCounts(specs map[string]int) string {
	if len(specs) <= 1 {
		for s := range specs {
			return s
		}
		return ""
	}
	names := make([]string, 0, len(specs))
	for s := range specs {
		names = append(names, s)
	}
	sort.Slice(names, func(a, b int) bool {
		if specs[names[a]] != specs[names[b]] {
			return specs[names[a]] > specs[names[b]]
		}
		return names[a] < names[b]
	})
	parts := make([]string, len(names))
	for k, s := range names {
		parts[k] = fmt.Sprintf("%s*%d", s, specs[s])
	}
	return strings.Join(parts, "|")
}

// HalfWidth95 is the half-width of a 95% interval for a standard error
// over splits repeated splits (Student's t with splits−1 degrees of
// freedom), or over the questions of one split (the normal 1.96).
func HalfWidth95(se float64, splits int) float64 {
	if splits < 2 {
		return 1.959963984540054 * se
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(splits - 1)}.Quantile(0.975) * se
}
