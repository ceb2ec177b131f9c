package irtstat

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/irt"
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
	// standardisations (ZSTD: the function ZSTD, of the sign of the mean
	// square minus 1, about N(0, 1) at the true parameters).
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
const DiagnosticColumnsText = "item_total_r: Pearson r of the item's 0/1 answers with the models' proportion correct over their observed items; item_rest_r: the same with the proportion correct over their other observed items (corrected item-total); infit, outfit: information-weighted and unweighted mean squares of the residuals (y - P)/sqrt(P(1-P)) at the fitted theta (Wright and Masters 1982), expectation 1, over the models not all right or all wrong; infit_zstd, outfit_zstd: their Wilson-Hilferty standardisations (ms^(1/3) - 1)(3/q), q the model sd of the mean square from the fitted P, at most sqrt(2) (Winsteps' WHEXACT=No: of the sign of ms - 1); empty where undefined (an item all right or all wrong, no variance)"

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
//
// It is one pass over the cells model by model (the order readers store
// them in), each goroutine taking a share of the models and summing into
// its own per-item accumulators, which are added up at the end; no
// per-item list of answers is built.
func Diagnose(r *model.Responses, fit *model.IRT, threads int) ([]ItemDiagnostics, TestDiagnostics) {
	N, J := r.NumModels(), r.NumItems()
	bm := r.ByModel()
	// Each model's number observed and number correct.
	nObs, nRight := make([]int, N), make([]int, N)
	general := r.Weighted() || fit.C != nil
	for i := 0; i < N; i++ {
		for _, c := range bm.Row(i) {
			nRight[i] += int(r.Label[c])
		}
		nObs[i] = len(bm.Row(i))
	}
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	threads = max(1, min(threads, N))
	parts := make([]*diagSums, threads)
	var wg sync.WaitGroup
	for w := 0; w < threads; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			if general {
				parts[w] = diagnosePartFamily(r, fit, w*N/threads, (w+1)*N/threads)
			} else {
				parts[w] = diagnosePart(r, fit, nObs, nRight, w*N/threads, (w+1)*N/threads)
			}
		}(w)
	}
	wg.Wait()
	sum := parts[0]
	for _, p := range parts[1:] {
		sum.add(p)
	}
	// Graded scores have no variance of their own in the fractional logit
	// model (a score on 11 levels varies far less than a 0/1 answer): their
	// mean squares are taken relative to the test's, φ = Σz²/n over every
	// cell (the quasi-likelihood's dispersion), so 1 is again "as noisy as
	// the test" and misfit means unlike the other items.
	phi := 1.0
	if r.GradedCells() > 0 {
		var z2, n float64
		for j := 0; j < J; j++ {
			z2 += sum.it[j*itemSlots+sZ2]
			n += sum.it[j*itemSlots+sMN]
		}
		if n > 0 && z2 > 0 {
			phi = z2 / n
		}
	}
	items := make([]ItemDiagnostics, J)
	for j := range items {
		items[j] = sum.item(j, phi)
	}
	td := TestDiagnostics{ExtremeModels: sum.extreme, MarginalReliability: math.NaN(), EmpiricalReliability: math.NaN()}
	td.Alpha = sum.alpha(J)
	if fit.Rank == 1 {
		sigma := fit.Sigma
		if sigma == 0 {
			sigma = 1
		}
		var tpa []float64 // trials per answer of each item: its information's factor
		if r.Trials != nil {
			tpa = make([]float64, J)
			bi := r.ByItem()
			for j := range tpa {
				for _, c := range bi.Row(j) {
					tpa[j] += float64(r.TrialsAt(int(c)))
				}
				if n := len(bi.Row(j)); n > 0 {
					tpa[j] /= float64(n)
				}
			}
		}
		td.MarginalReliability = marginalReliability(fit.A, fit.B, fit.C, tpa, sigma)
		td.EmpiricalReliability = sum.empiricalReliability()
	}
	return items, td
}

// Per-item accumulator slots of diagSums.it (stride itemSlots).
const (
	sN = iota // answers
	sY        // right answers
	sT        // Σ total, Σ total², Σ total·y (point-biserial)
	sTT
	sTY
	sRN // answers of models with another answer (rest score)
	sRY
	sR
	sRR
	sRYR
	sMN // answers in the mean squares (models not extreme)
	sZ2 // Σ z²
	sE2 // Σ (y − P)²
	sW  // Σ W, W = P(1 − P)
	sQO // Σ C/W² = Σ (1/W − 3)
	sQI // Σ (C − W²) = Σ (W − 4W²)
	sAD // Σ (y − m_i) and Σ (y² − m_i²) (α)
	sAD2
	itemSlots
)

// diagSums holds the sums of Diagnose over a share of the models.
type diagSums struct {
	it []float64 // J x itemSlots
	// Over models with an answer: their number, Σ m_i and Σ m_i² (m_i the
	// proportion correct, α); over models that are not extreme (rank 1): Σ θ,
	// Σ θ², Σ 1/I_i(θ_i), their number (empirical reliability).
	models, sumM, sumM2     float64
	erN, erTh, erTh2, erSE2 float64
	extreme                 int
}

// diagnosePart sums models lo..hi−1. Per cell: one exponential. With
// e = exp(−x) (x = (θ·a + d)/σ), P = 1/(1 + e), 1 − P = e/(1 + e),
// z² = e for a right answer and 1/e for a wrong one, 1/W = e + 2 + 1/e
// (and so with e^x for x < 0, swapping the answers); C = W(1 − 3W) is the fourth central moment of a 0/1 answer (Wright and
// Masters 1982, ch. 5), so C/W² = 1/W − 3 and C − W² = W − 4W².
func diagnosePart(r *model.Responses, fit *model.IRT, nObs, nRight []int, lo, hi int) *diagSums {
	J, rk := r.NumItems(), fit.Rank
	sigma := fit.Sigma
	if sigma == 0 {
		sigma = 1
	}
	s := &diagSums{it: make([]float64, J*itemSlots)}
	bm := r.ByModel()
	for i := lo; i < hi; i++ {
		cells := bm.Row(i)
		if len(cells) == 0 {
			continue
		}
		n, R := float64(nObs[i]), float64(nRight[i])
		m := R / n
		s.addModel(m)
		extreme := nRight[i] == 0 || nRight[i] == nObs[i]
		if extreme {
			s.extreme++
		}
		th := fit.Theta[i*rk : (i+1)*rk]
		info := 0.0
		for _, c := range cells {
			j := int(r.Item[c])
			y := float64(r.Label[c])
			a := s.it[j*itemSlots : (j+1)*itemSlots]
			addClassical(a, y, m, R, n)
			if extreme {
				continue
			}
			x := fit.B[j]
			for k := 0; k < rk; k++ {
				x += th[k] * fit.A[j*rk+k]
			}
			x /= sigma
			// e = e^−|x| ≤ 1 (irt.ExpNeg, clamped at e^−708 so 1/e stays
			// finite); the answer the model expects (right when x ≥ 0) has
			// z² = e and (y − P)² = (e/(1 + e))², the other 1/e and (1/(1 + e))².
			e := irt.ExpNeg(math.Max(-math.Abs(x), -708))
			ie := 1 / e
			q := 1 / (1 + e)
			w := e * q * q
			if (y == 1) == (x >= 0) {
				a[sZ2] += e
				a[sE2] += e * q * e * q
			} else {
				a[sZ2] += ie
				a[sE2] += q * q
			}
			a[sMN]++
			a[sW] += w
			a[sQO] += e + 2 + ie - 3
			a[sQI] += w - 4*w*w
			if rk == 1 {
				info += fit.A[j] * fit.A[j] / (sigma * sigma) * w
			}
		}
		if rk == 1 && !extreme && info > 0 {
			s.addReliability(th[0], info)
		}
	}
	return s
}

// diagnosePartFamily is diagnosePart for cells of several trials or graded
// scores and for the 3PL, one cell at a time with the fitted P (the 3PL's
// when the fit has asymptotes). A cell's answer y is its fraction ȳ = k/n
// for the classical statistics (item-total, rest-score, α); its residual is
// that of k successes in n trials, z² = n(ȳ − P)²/(P(1 − P)), with W =
// nP(1 − P) and the binomial fourth central moment C = W(1 + 3(n − 2)P(1 − P))
// (n = 1: a 0/1 answer's; a graded score is given the variance of one
// trial, the fractional logit model's). A model is extreme when all its
// cells are all right or all wrong.
func diagnosePartFamily(r *model.Responses, fit *model.IRT, lo, hi int) *diagSums {
	J, rk := r.NumItems(), fit.Rank
	sigma := fit.Sigma
	if sigma == 0 {
		sigma = 1
	}
	s := &diagSums{it: make([]float64, J*itemSlots)}
	bm := r.ByModel()
	for i := lo; i < hi; i++ {
		cells := bm.Row(i)
		if len(cells) == 0 {
			continue
		}
		var R, K, T float64 // Σȳ; successes and trials
		for _, c := range cells {
			R += r.ScoreAt(int(c))
			K += r.SuccessesAt(int(c))
			T += float64(r.TrialsAt(int(c)))
		}
		n := float64(len(cells))
		m := R / n
		s.addModel(m)
		extreme := K == 0 || K == T
		if extreme {
			s.extreme++
		}
		th := fit.Theta[i*rk : (i+1)*rk]
		info := 0.0
		for _, c := range cells {
			j := int(r.Item[c])
			y := r.ScoreAt(int(c))
			a := s.it[j*itemSlots : (j+1)*itemSlots]
			addClassical(a, y, m, R, n)
			if extreme {
				continue
			}
			x := fit.B[j]
			a2 := 0.0
			for k := 0; k < rk; k++ {
				x += th[k] * fit.A[j*rk+k]
				a2 += fit.A[j*rk+k] * fit.A[j*rk+k]
			}
			cj := 0.0
			if fit.C != nil {
				cj = fit.C[j]
			}
			p, ij := model.Response3PL(x, sigma, cj)
			p = math.Min(math.Max(p, 1e-300), 1-1e-16)
			nt := float64(r.TrialsAt(int(c)))
			pq := p * (1 - p)
			w := nt * pq
			d := y - p
			a[sZ2] += nt * d * d / pq
			a[sE2] += nt * nt * d * d
			a[sMN]++
			a[sW] += w
			cm := w * (1 + 3*(nt-2)*pq)
			a[sQO] += cm / (w * w)
			a[sQI] += cm - w*w
			if rk == 1 {
				info += a2 * ij * nt
			}
		}
		if rk == 1 && !extreme && info > 0 {
			s.addReliability(th[0], info)
		}
	}
	return s
}

// addClassical adds one answer y (of a model with proportion correct m,
// total R over n answers) to an item's classical sums: point-biserial,
// rest score (when the model has another answer) and α.
func addClassical(a []float64, y, m, R, n float64) {
	a[sN]++
	a[sY] += y
	a[sT] += m
	a[sTT] += m * m
	a[sTY] += m * y
	a[sAD] += y - m
	a[sAD2] += y - m*m
	if n > 1 {
		rest := (R - y) / (n - 1)
		a[sRN]++
		a[sRY] += y
		a[sR] += rest
		a[sRR] += rest * rest
		a[sRYR] += rest * y
	}
}

// addModel and addReliability add a model's proportion correct (α) and
// its θ and information (empirical reliability).
func (s *diagSums) addModel(m float64) {
	s.models++
	s.sumM += m
	s.sumM2 += m * m
}

func (s *diagSums) addReliability(th, info float64) {
	s.erN++
	s.erTh += th
	s.erTh2 += th * th
	s.erSE2 += 1 / info
}

func (s *diagSums) add(o *diagSums) {
	for k, v := range o.it {
		s.it[k] += v
	}
	s.models, s.sumM, s.sumM2 = s.models+o.models, s.sumM+o.sumM, s.sumM2+o.sumM2
	s.erN, s.erTh, s.erTh2, s.erSE2 = s.erN+o.erN, s.erTh+o.erTh, s.erTh2+o.erTh2, s.erSE2+o.erSE2
	s.extreme += o.extreme
}

// corrFromSums is Pearson's r from n, Σx, Σx², Σy, Σy² and Σxy (NaN with
// fewer than two pairs or no variance in either).
func corrFromSums(n, sx, sxx, sy, syy, sxy float64) float64 {
	if n < 2 {
		return math.NaN()
	}
	vx, vy := sxx-sx*sx/n, syy-sy*sy/n
	if vx <= 1e-12*n || vy <= 1e-12*n {
		return math.NaN()
	}
	return (sxy - sx*sy/n) / math.Sqrt(vx*vy)
}

func (s *diagSums) item(j int, phi float64) ItemDiagnostics {
	a := s.it[j*itemSlots : (j+1)*itemSlots]
	d := ItemDiagnostics{
		PointBiserial: corrFromSums(a[sN], a[sT], a[sTT], a[sY], a[sY], a[sTY]),
		RestScore:     corrFromSums(a[sRN], a[sR], a[sRR], a[sRY], a[sRY], a[sRYR]),
		RestN:         int(a[sRN]),
		Infit:         math.NaN(), InfitZ: math.NaN(), Outfit: math.NaN(), OutfitZ: math.NaN(),
	}
	if a[sY] == 0 || a[sY] == a[sN] || a[sMN] < 2 || !(a[sW] > 0) {
		return d // everyone or no one solved it: no residuals to judge
	}
	n := a[sMN]
	d.Used = int(n)
	d.Outfit, d.Infit = a[sZ2]/n, a[sE2]/a[sW]
	if phi != 1 {
		d.Outfit, d.Infit = d.Outfit/phi, d.Infit/phi
	}
	// q² is the model variance of the mean square, from the fitted P of
	// each cell: Σ C/W² / n² − 1/n for outfit, Σ(C − W²)/(ΣW)² for infit.
	d.OutfitZ = ZSTD(d.Outfit, a[sQO]/(n*n)-1/n)
	d.InfitZ = ZSTD(d.Infit, a[sQI]/(a[sW]*a[sW]))
	return d
}

// maxZSTDQ is the largest model sd q of a mean square that ZSTD uses: √2,
// which keeps the scaled χ² of 2/q² degrees of freedom that the
// Wilson–Hilferty transformation stands on at one degree of freedom or
// more, as Winsteps does (Linacre, Winsteps manual, WHEXACT=: the
// transformation is accurate above about 25 degrees of freedom and
// misleading with very few).
const maxZSTDQ = math.Sqrt2

// ZSTD is the Wilson–Hilferty standardisation of a mean square ms whose
// model variance is q2 (Wright and Masters 1982, Rating Scale Analysis,
// p. 100-101): t = (ms^⅓ − 1)(3/q), q = min(√q2, maxZSTDQ), as Winsteps
// reports it with WHEXACT=No, without the final +q/3 of the exact form.
// That term centres the cube root of a χ²/k on its mean 1 − q²/9 rather
// than on 1, so that every ms in ((1 − q²/9)³, 1) (an overfit item) got a
// positive t; an item with one cell of P near 10⁻⁸ has q near 100 and then
// t ≈ q/3 ≫ 2 whatever its mean square. Without it the sign of t is the
// sign of ms − 1, and under the model t has mean about −q/3 (−0.003 to
// −0.09 in TestZSTDUnderTheModel, 80 to 500 answers an item) and sd about
// 1. NaN when q2 is not positive or ms is not a number.
func ZSTD(ms, q2 float64) float64 {
	if !(q2 > 0) || math.IsNaN(ms) {
		return math.NaN()
	}
	q := math.Min(math.Sqrt(q2), maxZSTDQ)
	return (math.Cbrt(ms) - 1) * (3 / q)
}

// alpha is Cronbach's α = J/(J−1)·(1 − Σ_j s_j²/s_T²) over the models with
// an answer, a missing cell filled with the model's proportion correct m_i
// (AlphaMissing): item j's sum over all models is Σ_i m_i plus Σ (y − m_i)
// over its answers (and so for the squares), and the totals are J·m_i.
// NaN with fewer than two items or models, or totals without variance.
func (s *diagSums) alpha(J int) float64 {
	n := s.models
	if J < 2 || n < 2 {
		return math.NaN()
	}
	var sumVar float64
	for j := 0; j < J; j++ {
		a := s.it[j*itemSlots : (j+1)*itemSlots]
		mean := (s.sumM + a[sAD]) / n
		sumVar += (s.sumM2+a[sAD2])/n - mean*mean
	}
	meanT := float64(J) * s.sumM / n
	varT := float64(J)*float64(J)*s.sumM2/n - meanT*meanT
	if !(varT > 1e-12) {
		return math.NaN()
	}
	return float64(J) / float64(J-1) * (1 - sumVar/varT)
}

// empiricalReliability is var(θ̂)/(var(θ̂) + mean SE²) over the models
// with answers that are not extreme, SE_i² = 1/I_i(θ̂_i).
func (s *diagSums) empiricalReliability() float64 {
	if s.erN < 2 {
		return math.NaN()
	}
	mu := s.erTh / s.erN
	v := s.erTh2/s.erN - mu*mu
	e := s.erSE2 / s.erN
	if !(v+e > 0) {
		return math.NaN()
	}
	return v / (v + e)
}

// marginalReliability is ∫ I/(I+1) φ over 61 points of [−6, 6] (normalised
// weights), I(θ) = Σ_j (a_j/σ)² p_j(1 − p_j); with lower asymptotes c (nil:
// none) the 3PL's information (model.Response3PL), and with trials per
// answer tpa (nil: 1) each item's information that many times.
func marginalReliability(a, d, c, tpa []float64, sigma float64) float64 {
	const points = 61
	var num, den float64
	for g := 0; g < points; g++ {
		th := -6 + 12*float64(g)/(points-1)
		info := 0.0
		for j := range d {
			var ij float64
			if c != nil {
				_, ij = model.Response3PL(th*a[j]+d[j], sigma, c[j])
				ij *= a[j] * a[j]
			} else {
				p := model.Sigmoid((th*a[j] + d[j]) / sigma)
				ij = a[j] * a[j] / (sigma * sigma) * p * (1 - p)
			}
			if tpa != nil {
				ij *= tpa[j]
			}
			info += ij
		}
		w := math.Exp(-th * th / 2)
		num += w * info / (info + 1)
		den += w
	}
	return num / den
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
		if r*math.Sqrt(df)/math.Sqrt(1-r*r) < weakThreshold(d.RestN-2) {
			out = append(out, FlagWeakItemTotal)
		}
	}
	return out
}

// tQuantiles caches the weak_item_total threshold per degrees of freedom
// (items mostly share a handful of model counts; the quantile is costly).
var tQuantiles sync.Map

// weakThreshold is the one-sided (1 − WeakItemTotalLevel) quantile of
// Student's t with df degrees of freedom.
func weakThreshold(df int) float64 {
	if v, ok := tQuantiles.Load(df); ok {
		return v.(float64)
	}
	q := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}.Quantile(1 - WeakItemTotalLevel)
	tQuantiles.Store(df, q)
	return q
}
