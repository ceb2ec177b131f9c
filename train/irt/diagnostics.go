package irt

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/jeirt/jeirt/model"
	"gonum.org/v1/gonum/stat/distuv"
)

// Item flags written by Diagnose (with those of Analyze, an item may carry
// several; items.csv joins them with ";").
const (
	// FlagMisfit: the infit or the outfit mean square lies outside Linacre's
	// productive range [MisfitLow, MisfitHigh] and its standardised value
	// says so beyond |ZSTD| > MisfitZ (both conditions on the same statistic).
	FlagMisfit = "misfit"
	// FlagNegativeItemTotal: the rest-score (corrected item-total)
	// correlation is below 0: models that do better on the rest of the test
	// do worse on this item (a wrong key, or an item measuring something
	// else).
	FlagNegativeItemTotal = "negative_item_total"
	// FlagWeakItemTotal: the rest-score correlation is not negative but not
	// significantly above 0 either (one-sided t test of Pearson's r at the
	// WeakItemTotalLevel, n − 2 degrees of freedom): with this many models
	// the item cannot be told from one that measures nothing (pure noise).
	FlagWeakItemTotal = "weak_item_total"
)

// WeakItemTotalLevel is the one-sided significance level of the
// weak_item_total test.
const WeakItemTotalLevel = 0.05

// Thresholds of the misfit flag: Linacre's (2002) productive range of mean
// squares, 0.5-1.5 ("What do Infit and Outfit, Mean-square and Standardized
// mean?", Rasch Measurement Transactions 16:2, p. 878), with the usual
// significance screen |ZSTD| > 2 (Wright and Linacre 1994, "Reasonable
// mean-square fit values", RMT 8:3, p. 370).
const (
	MisfitLow  = 0.5
	MisfitHigh = 1.5
	MisfitZ    = 2.0
)

// ItemDiagnostics holds the classical and residual statistics of one item.
// A statistic that is undefined (an item nobody or everybody solved, fewer
// than two usable models, no variance) is NaN.
type ItemDiagnostics struct {
	// PointBiserial is Pearson's r between the item's 0/1 answers and the
	// models' total scores; RestScore is the same against the total score
	// of the other items (the corrected item-total correlation). Totals are
	// proportions correct over each model's observed items, so models that
	// answered different numbers of items are comparable; on complete data
	// this equals the correlation with the sum score.
	PointBiserial, RestScore float64
	// Infit and Outfit are the information-weighted and unweighted mean
	// squares of the standardised residuals (Wright and Masters 1982, Rating
	// Scale Analysis, ch. 5): outfit = mean z², z = (y − P)/√(P(1−P));
	// infit = Σ(y − P)²/ΣP(1−P). Both have expectation 1 when the data
	// follow the model. InfitZ and OutfitZ are their Wilson-Hilferty
	// standardisations (ZSTD, approximately N(0, 1)).
	Infit, InfitZ, Outfit, OutfitZ float64
	// Used is the number of models the mean squares were taken over;
	// RestN the number the rest-score correlation was (models with at
	// least one other answer).
	Used, RestN int
}

// TestDiagnostics are the statistics of the whole test.
type TestDiagnostics struct {
	// Alpha is Cronbach's α (AlphaMissing says how missing cells entered).
	Alpha float64
	// MarginalReliability (rank 1) is ∫ I(θ)/(I(θ) + 1) φ(θ) dθ with I the
	// test information of all items and φ the N(0, 1) of the gauge (Thissen
	// and Wainer 2001, Test Scoring; mirt's marginal_rxx), on 61 points of
	// [−6, 6]. EmpiricalReliability (rank 1) is var(θ̂)/(var(θ̂) + mean SE²)
	// with SE_i² = 1/I_i(θ̂_i) over each model's observed items (mirt's
	// empirical_rxx), over the models that are not all right or all wrong.
	// Both are NaN at rank > 1.
	MarginalReliability, EmpiricalReliability float64
	// Models left out of the mean squares: all right or all wrong over their
	// observed items (their θ is at infinity under joint ML).
	ExtremeModels int
}

// DiagnosticColumnsText states items.csv's diagnostic columns, as fit.json
// records them.
const DiagnosticColumnsText = "item_total_r: Pearson r of the item's 0/1 answers with the models' proportion correct over their observed items; item_rest_r: the same with the proportion correct over their other observed items (corrected item-total); infit, outfit: information-weighted and unweighted mean squares of the residuals (y - P)/sqrt(P(1-P)) at the fitted theta (Wright and Masters 1982), expectation 1, over the models not all right or all wrong; infit_zstd, outfit_zstd: their Wilson-Hilferty standardisations; empty where undefined (an item all right or all wrong, no variance)"

// FlagRules states the rule of each item flag with its reference, as
// fit.json records them; minA is the uninformative threshold (0: 0.1).
func FlagRules(minA float64) map[string]string {
	if minA == 0 {
		minA = 0.1
	}
	return map[string]string{
		FlagNeverSolved:       "no model answered it correctly (its difficulty is at infinity under joint ML)",
		FlagAlwaysSolved:      "every model that answered it answered correctly",
		FlagUninformative:     fmt.Sprintf("discrimination |a|/sigma below %g (--min-a)", minA),
		FlagMisfit:            fmt.Sprintf("infit or outfit mean square outside [%g, %g] with its ZSTD beyond %g on the same side (Linacre 2002, Rasch Measurement Transactions 16:2 p. 878: 0.5-1.5 is productive for measurement; Wright and Linacre 1994, RMT 8:3 p. 370)", MisfitLow, MisfitHigh, MisfitZ),
		FlagNegativeItemTotal: "rest-score (corrected item-total) correlation below 0: models better on the rest of the test do worse on this item (a wrong key, or an item measuring something else)",
		FlagWeakItemTotal:     fmt.Sprintf("rest-score correlation not negative but not significantly above 0 (one-sided t test of Pearson's r, level %g, n - 2 degrees of freedom): with this many models it cannot be told from an item of pure noise", WeakItemTotalLevel),
	}
}

// AlphaMissing states how Cronbach's α treats missing cells.
const AlphaMissing = "a missing cell is filled with the model's proportion correct over its observed items (person-mean imputation), so each total is the model's proportion correct times the number of items; with no missing cells this is the usual alpha"

// Diagnose computes the item statistics (one per item of fit) and the test
// statistics of fit on the responses r, over threads goroutines (0: all
// cores). r and fit must have the same models and items in the same order.
func Diagnose(r *model.Responses, fit *model.IRT, threads int) ([]ItemDiagnostics, TestDiagnostics) {
	N, J, rk := r.NumModels(), r.NumItems(), fit.Rank
	sigma := fit.Sigma
	if sigma == 0 {
		sigma = 1
	}
	bm, by := r.ByModel(), r.ByItem()
	// Each model's number observed and number correct.
	nObs, nRight := make([]int, N), make([]int, N)
	for i := 0; i < N; i++ {
		for _, c := range bm.Row(i) {
			nRight[i] += int(r.Label[c])
		}
		nObs[i] = len(bm.Row(i))
	}
	extreme := func(i int) bool { return nRight[i] == 0 || nRight[i] == nObs[i] }
	var td TestDiagnostics
	for i := 0; i < N; i++ {
		if nObs[i] > 0 && extreme(i) {
			td.ExtremeModels++
		}
	}
	items := make([]ItemDiagnostics, J)
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	var wg sync.WaitGroup
	next := make(chan int, threads)
	for w := 0; w < threads; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var tot, rest, y []float64
			for j := range next {
				cells := by.Row(j)
				tot, rest, y = tot[:0], rest[:0], y[:0]
				var restY []float64
				for _, c := range cells {
					i := int(r.Model[c])
					lab := float64(r.Label[c])
					y = append(y, lab)
					tot = append(tot, float64(nRight[i])/float64(nObs[i]))
					if nObs[i] > 1 {
						rest = append(rest, (float64(nRight[i])-lab)/float64(nObs[i]-1))
						restY = append(restY, lab)
					}
				}
				d := ItemDiagnostics{PointBiserial: pearsonR(y, tot), RestScore: pearsonR(restY, rest), RestN: len(rest)}
				d.Infit, d.InfitZ, d.Outfit, d.OutfitZ = math.NaN(), math.NaN(), math.NaN(), math.NaN()
				right := 0
				for _, v := range y {
					right += int(v)
				}
				if right > 0 && right < len(y) {
					var fit2 meanSquares
					for _, c := range cells {
						i := int(r.Model[c])
						if extreme(i) {
							continue
						}
						x := fit.B[j]
						for k := 0; k < rk; k++ {
							x += fit.Theta[i*rk+k] * fit.A[j*rk+k]
						}
						fit2.add(float64(r.Label[c]), model.Sigmoid(x/sigma))
					}
					d.Infit, d.InfitZ, d.Outfit, d.OutfitZ = fit2.result()
					d.Used = fit2.n
				}
				items[j] = d
			}
		}()
	}
	for j := 0; j < J; j++ {
		next <- j
	}
	close(next)
	wg.Wait()

	td.Alpha = cronbachAlpha(r, nObs, nRight)
	td.MarginalReliability, td.EmpiricalReliability = math.NaN(), math.NaN()
	if rk == 1 {
		td.MarginalReliability = marginalReliability(fit.A, fit.B, sigma)
		td.EmpiricalReliability = empiricalReliability(r, fit, sigma, extreme)
	}
	return items, td
}

// meanSquares accumulates the residual sums of one item (Wright and Masters
// 1982, eqs. 5.4.2-5.4.6 for dichotomies: W = P(1−P) the variance and
// C = P(1−P)(P³ + (1−P)³) the fourth central moment of each answer).
type meanSquares struct {
	n                    int
	z2, sq, w, qOut, qIn float64
}

func (m *meanSquares) add(y, p float64) {
	w := p * (1 - p)
	if w < 1e-300 {
		w = 1e-300
	}
	e := y - p
	c := w * (p*p*p + (1-p)*(1-p)*(1-p))
	m.n++
	m.z2 += e * e / w
	m.sq += e * e
	m.w += w
	m.qOut += c / (w * w)
	m.qIn += c - w*w
}

// result returns infit, its ZSTD, outfit and its ZSTD (NaN with fewer than
// two answers). ZSTD = (MNSQ^⅓ − 1)(3/q) + q/3 with q the model sd of the
// mean square: q² = Σ C/W² / n² − 1/n for outfit, Σ(C − W²)/(ΣW)² for infit.
func (m *meanSquares) result() (infit, infitZ, outfit, outfitZ float64) {
	if m.n < 2 || m.w <= 0 {
		return math.NaN(), math.NaN(), math.NaN(), math.NaN()
	}
	n := float64(m.n)
	outfit = m.z2 / n
	infit = m.sq / m.w
	wh := func(ms, q2 float64) float64 {
		if !(q2 > 0) {
			return math.NaN()
		}
		q := math.Sqrt(q2)
		return (math.Cbrt(ms)-1)*(3/q) + q/3
	}
	outfitZ = wh(outfit, m.qOut/(n*n)-1/n)
	infitZ = wh(infit, m.qIn/(m.w*m.w))
	return infit, infitZ, outfit, outfitZ
}

// pearsonR is Pearson's correlation of x and y, NaN with fewer than two
// pairs or no variance in either.
func pearsonR(x, y []float64) float64 {
	n := len(x)
	if n < 2 {
		return math.NaN()
	}
	var mx, my float64
	for k := range x {
		mx += x[k]
		my += y[k]
	}
	mx /= float64(n)
	my /= float64(n)
	var sxy, sxx, syy float64
	for k := range x {
		dx, dy := x[k]-mx, y[k]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx <= 1e-12*float64(n) || syy <= 1e-12*float64(n) {
		return math.NaN()
	}
	return sxy / math.Sqrt(sxx*syy)
}

// cronbachAlpha is α = J/(J−1)·(1 − Σ_j s_j²/s_T²) over the models with at
// least one answer, a missing cell filled with the model's proportion
// correct m_i (AlphaMissing). Item j's sum and sum of squares over all models
// are then its observed values plus Σ m_i (and Σ m_i²) over the models that
// did not answer it, so no dense matrix is built. NaN with fewer than two
// items or models, or totals without variance.
func cronbachAlpha(r *model.Responses, nObs, nRight []int) float64 {
	J := r.NumItems()
	var m []float64 // per model with answers
	idx := make([]int, r.NumModels())
	var sumM, sumM2 float64
	for i := range nObs {
		idx[i] = -1
		if nObs[i] > 0 {
			idx[i] = len(m)
			v := float64(nRight[i]) / float64(nObs[i])
			m = append(m, v)
			sumM += v
			sumM2 += v * v
		}
	}
	n := float64(len(m))
	if J < 2 || len(m) < 2 {
		return math.NaN()
	}
	by := r.ByItem()
	var sumVar float64
	for j := 0; j < J; j++ {
		s, s2 := sumM, sumM2
		for _, c := range by.Row(j) {
			mi := m[idx[r.Model[c]]]
			y := float64(r.Label[c])
			s += y - mi
			s2 += y*y - mi*mi
		}
		mean := s / n
		sumVar += s2/n - mean*mean
	}
	// Totals T_i = J m_i.
	meanT := float64(J) * sumM / n
	varT := float64(J)*float64(J)*sumM2/n - meanT*meanT
	if !(varT > 1e-12) {
		return math.NaN()
	}
	return float64(J) / float64(J-1) * (1 - sumVar/varT)
}

// marginalReliability is ∫ I/(I+1) φ over 61 points of [−6, 6] (normalised
// weights), I(θ) = Σ_j (a_j/σ)² p_j(1 − p_j).
func marginalReliability(a, d []float64, sigma float64) float64 {
	const points = 61
	var num, den float64
	for g := 0; g < points; g++ {
		th := -6 + 12*float64(g)/(points-1)
		info := 0.0
		for j := range d {
			p := model.Sigmoid((th*a[j] + d[j]) / sigma)
			info += a[j] * a[j] / (sigma * sigma) * p * (1 - p)
		}
		w := math.Exp(-th * th / 2)
		num += w * info / (info + 1)
		den += w
	}
	return num / den
}

// empiricalReliability is var(θ̂)/(var(θ̂) + mean SE²) over the models with
// answers that are not extreme, SE_i² = 1/I_i(θ̂_i).
func empiricalReliability(r *model.Responses, fit *model.IRT, sigma float64, extreme func(int) bool) float64 {
	bm := r.ByModel()
	var th, se2 []float64
	for i := 0; i < r.NumModels(); i++ {
		if len(bm.Row(i)) == 0 || extreme(i) {
			continue
		}
		info := 0.0
		for _, c := range bm.Row(i) {
			j := int(r.Item[c])
			p := model.Sigmoid((fit.Theta[i]*fit.A[j] + fit.B[j]) / sigma)
			info += fit.A[j] * fit.A[j] / (sigma * sigma) * p * (1 - p)
		}
		if info <= 0 {
			continue
		}
		th = append(th, fit.Theta[i])
		se2 = append(se2, 1/info)
	}
	if len(th) < 2 {
		return math.NaN()
	}
	var mu, v, e float64
	for k := range th {
		mu += th[k]
		e += se2[k]
	}
	mu /= float64(len(th))
	e /= float64(len(th))
	for _, x := range th {
		v += (x - mu) * (x - mu)
	}
	v /= float64(len(th))
	if !(v+e > 0) {
		return math.NaN()
	}
	return v / (v + e)
}

// DiagnosticFlags returns the diagnostic flags of one item: FlagMisfit, then
// FlagNegativeItemTotal or FlagWeakItemTotal.
func DiagnosticFlags(d ItemDiagnostics) []string {
	var out []string
	out1 := func(ms, z float64) bool {
		return (ms > MisfitHigh && z > MisfitZ) || (ms < MisfitLow && z < -MisfitZ)
	}
	if out1(d.Infit, d.InfitZ) || out1(d.Outfit, d.OutfitZ) {
		out = append(out, FlagMisfit)
	}
	switch r := d.RestScore; {
	case r < 0:
		out = append(out, FlagNegativeItemTotal)
	case d.RestN > 2 && r < 1:
		df := float64(d.RestN - 2)
		if r*math.Sqrt(df)/math.Sqrt(1-r*r) < (distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}).Quantile(1-WeakItemTotalLevel) {
			out = append(out, FlagWeakItemTotal)
		}
	}
	return out
}
