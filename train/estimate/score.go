// Package estimate turns a new model's answers to a few items of a fitted
// IRT bank into its score on every item of the bank, with an interval:
// the observed answers count as they are, and each unanswered item counts
// its expected value under the posterior of the model's ability θ
// (tinyBenchmarks' p-IRT, Maia Polo et al., "tinyBenchmarks: evaluating
// LLMs with fewer examples", ICML 2024, eq. 3.3). Beside it are the
// paper's gp-IRT (a convex combination of the observed mean and p-IRT,
// eq. 3.4), the observed mean, and Blend, the IRT prediction corrected by
// the answered items' mean residual, shrunk by how far that residual stands
// above its own noise (a difference estimator of survey sampling, Särndal,
// Swensson and Wretman, Model Assisted Survey Sampling, 1992, §6.3, with an
// empirical-Bayes factor; by default under Student-t priors on θ and on the
// residual, so that a model unlike the fitted ones is shrunk less).
// Anchors chooses the items to ask: tinyBenchmarks' anchor points,
// k-medoids of the items, each weighted by its cluster's share of the bank,
// on their fitted parameters (IRTEmbedding), their ranks (RankEmbedding,
// the default) or their answers (CorrectnessEmbedding).
package estimate

import (
	"fmt"
	"math"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/cat"
)

// The estimators (Scorer.Estimate's est).
const (
	Mean  = "mean"   // the (weighted) mean of the answered items
	IRT   = "irt"    // p-IRT
	GPIRT = "gp-irt" // gp-IRT: λ·mean + (1 − λ)·p-IRT
	Blend = "blend"  // p-IRT + β·(the answered items' weighted residual)
)

// Estimators lists the estimators in the order the tables show them.
var Estimators = []string{Mean, IRT, GPIRT, Blend}

// nodes is the number of quadrature points of θ's posterior at rank 1 (the
// prior mean ± 6 prior sd, 0.1 sd apart); draws the number of posterior
// draws at rank > 1.
const (
	nodes = 121
	draws = 64
)

// DefaultPriorDF is the degrees of freedom of Blend's Student-t priors on θ
// and on its residual (Scorer.PriorDF).
const DefaultPriorDF = 4

// Scorer estimates full-bank scores from the items of Fit (its models are
// not used; the prior is). Set the fields, then call Prepare once.
type Scorer struct {
	Fit *model.IRT
	// Group gives each item's category, an index into Groups (nil: none).
	Group  []int
	Groups []string
	// SEA (J x Rank) and SED (J) are the items' bootstrap standard errors
	// of a and d; nil (or NaN entries) when the fit has no bootstrap.
	SEA, SED []float64
	// Prior is θ's prior, e.g. cat.PopulationPrior of the fitted abilities.
	Prior cat.Prior
	// Level is the interval's level; 0 means 0.95.
	Level float64
	// PriorDF > 0 gives Blend's θ posterior (rank 1) a Student-t prior
	// with PriorDF degrees of freedom and Prior's location and scale
	// instead of the normal, and its residual a Student-t prior of scale
	// ResidSD instead of N(0, ResidSD²), so that a model beyond or unlike
	// the fitted ones is not pulled back to them by a handful of answers;
	// 0 keeps the normal priors. The other estimators keep the normal
	// prior on θ; p-IRT's and gp-IRT's misfit (Scorer.misfit) takes the
	// same residual prior as Blend.
	PriorDF float64
	// GPBias and GPVar feed gp-IRT's weight λ (GPLambda): p-IRT's mean
	// absolute error on held-out items of validation models, and the mean
	// over models of the variance of their answers.
	GPBias, GPVar float64
	// ResidSD is the spread over models of p-IRT's error (the root mean
	// square of SplitHalfBias's errors): Blend's prior on a model's mean
	// residual, and the least misfit that widens p-IRT's interval (and
	// gp-IRT's). 0 means unknown: the residual is then shrunk by a
	// James-Stein factor.
	ResidSD float64

	// tot, vr, q: per group (last: all items) and node, the sums over the
	// group's items of p_j(θ_g), p_j(1 − p_j) and the variance of p_j from
	// the item parameters' uncertainty (rank 1).
	tot, vr, q [][]float64
	theta      []float64 // the rank-1 nodes
	logPrior   []float64
	logPriorT  []float64 // the Student-t prior, when PriorDF > 0
	size       []int     // items per group (last: all)
	middle     float64   // the bank's mean P(correct) at the prior's mean θ
}

// Answers are one model's answers: items (indices into Fit.Items), Y the
// fraction correct of each (0/1, or a graded score), Trials the trials
// behind each (nil: one), Weight the share of the bank each answered item
// stands for (nil: equal shares; anchor points carry their cluster's).
type Answers struct {
	Items  []int
	Y      []float64
	Trials []float64
	Weight []float64
}

// Score is one model's estimate on one category (Group "" is the whole
// bank): NAnswered answered items of N, their observed (unweighted) mean,
// the estimated score on all N items with its interval [Lo, Hi], and θ's
// posterior mean and standard deviation.
type Score struct {
	Group           string
	NAnswered, N    int
	Observed, Score float64
	Lo, Hi          float64
	Theta, SE       []float64
	Lambda          float64 // gp-IRT's λ or Blend's β (NaN for the others)
}

func (s *Scorer) sigma() float64 {
	if s.Fit.Sigma > 0 {
		return s.Fit.Sigma
	}
	return 1
}

// prob is P(correct) of item j at θ and dp/dx (the derivative with respect
// to the logit (θ·a + d)/σ).
func (s *Scorer) prob(j int, theta []float64) (p, dp float64) {
	r := s.Fit.Rank
	x := s.Fit.B[j]
	for k := 0; k < r; k++ {
		x += theta[k] * s.Fit.A[j*r+k]
	}
	q := model.Sigmoid(x / s.sigma())
	if s.Fit.C != nil {
		c := s.Fit.C[j]
		return c + (1-c)*q, (1 - c) * q * (1 - q)
	}
	return q, q * (1 - q)
}

// itemVar is the variance of p_j(θ) from the item parameters' standard
// errors (delta method, the items independent): (dp/dx)²·(Σ_k θ_k² SE(a_k)² + SE(d)²)/σ².
func (s *Scorer) itemVar(j int, theta []float64, dp float64) float64 {
	if s.SED == nil || math.IsNaN(s.SED[j]) {
		return 0
	}
	r := s.Fit.Rank
	v := s.SED[j] * s.SED[j]
	for k := 0; k < r; k++ {
		if e := s.SEA[j*r+k]; !math.IsNaN(e) {
			v += theta[k] * theta[k] * e * e
		}
	}
	sg := s.sigma()
	return dp * dp * v / (sg * sg)
}

// Prepare checks the scorer and sums the bank's expected scores over the
// rank-1 nodes once, so that each model then costs only its answers.
func (s *Scorer) Prepare() error {
	f := s.Fit
	if f == nil || f.Rank < 1 || len(f.B) == 0 || len(f.A) != len(f.B)*f.Rank {
		return fmt.Errorf("estimate: no fitted items")
	}
	J, r := len(f.B), f.Rank
	if s.Group != nil && len(s.Group) != J {
		return fmt.Errorf("estimate: %d categories for %d items", len(s.Group), J)
	}
	if len(s.Prior.Mean) != r || len(s.Prior.Cov) != r*r {
		return fmt.Errorf("estimate: prior of rank %d for a fit of rank %d", len(s.Prior.Mean), r)
	}
	if !(s.Level > 0 && s.Level < 1) {
		if s.Level != 0 {
			return model.FieldErrorf("Level", "{Level} %v must be in (0, 1)", s.Level)
		}
		s.Level = 0.95
	}
	G := len(s.Groups) + 1
	s.size = make([]int, G)
	for j := 0; j < J; j++ {
		s.size[G-1]++
		if s.Group != nil {
			if s.Group[j] < 0 || s.Group[j] >= len(s.Groups) {
				return fmt.Errorf("estimate: item %d in category %d of %d", j, s.Group[j], len(s.Groups))
			}
			s.size[s.Group[j]]++
		}
	}
	s.middle = 0
	for j := 0; j < J; j++ {
		p, _ := s.prob(j, s.Prior.Mean)
		s.middle += p / float64(J)
	}
	if r != 1 {
		return nil
	}
	mu, sd := s.Prior.Mean[0], math.Sqrt(s.Prior.Cov[0])
	if !(sd > 0) || math.IsInf(sd, 0) || math.IsNaN(mu) {
		return fmt.Errorf("estimate: prior N(%v, %v)", mu, s.Prior.Cov[0])
	}
	if !(s.PriorDF >= 0) || math.IsInf(s.PriorDF, 0) {
		return model.FieldErrorf("PriorDF", "{PriorDF} %v must be finite and at least 0", s.PriorDF)
	}
	s.theta, s.logPrior = make([]float64, nodes), make([]float64, nodes)
	s.logPriorT = nil
	if s.PriorDF > 0 {
		s.logPriorT = make([]float64, nodes)
	}
	s.tot, s.vr, s.q = make([][]float64, G), make([][]float64, G), make([][]float64, G)
	for g := range s.tot {
		s.tot[g], s.vr[g], s.q[g] = make([]float64, nodes), make([]float64, nodes), make([]float64, nodes)
	}
	th := []float64{0}
	for n := range s.theta {
		z := -6 + 12*float64(n)/(nodes-1)
		s.theta[n], s.logPrior[n] = mu+z*sd, -z*z/2
		if s.logPriorT != nil {
			s.logPriorT[n] = -(s.PriorDF + 1) / 2 * math.Log1p(z*z/s.PriorDF)
		}
		th[0] = s.theta[n]
		for j := 0; j < J; j++ {
			p, dp := s.prob(j, th)
			iv := s.itemVar(j, th, dp)
			s.tot[G-1][n] += p
			s.vr[G-1][n] += p * (1 - p)
			s.q[G-1][n] += iv
			if s.Group != nil {
				g := s.Group[j]
				s.tot[g][n] += p
				s.vr[g][n] += p * (1 - p)
				s.q[g][n] += iv
			}
		}
	}
	return nil
}

// posterior is θ's posterior given the answers, as nodes with weights
// summing to 1: the rank-1 grid (under the Student-t prior when robust and
// PriorDF > 0), or at rank > 1 draws from the normal at the posterior mode
// with the posterior covariance there (cat's MAP).
func (s *Scorer) posterior(a Answers, pa []float64, robust bool) (theta [][]float64, w []float64, err error) {
	r := s.Fit.Rank
	if r == 1 {
		prior := s.logPrior
		if robust && s.logPriorT != nil {
			prior = s.logPriorT
		}
		lp := append([]float64(nil), prior...)
		for k := range a.Items {
			t, y := trials(a, k), a.Y[k]
			for n, p := range pa[k*nodes : (k+1)*nodes] {
				lp[n] += t * (y*math.Log(math.Max(p, 1e-300)) + (1-y)*math.Log(math.Max(1-p, 1e-300)))
			}
		}
		w = softmax(lp)
		return s.nodes1(), w, nil
	}
	if s.Fit.C != nil {
		return nil, nil, fmt.Errorf("estimate: a 3PL fit of rank %d (rank > 1 takes 1PL and 2PL fits)", r)
	}
	y := make([]uint8, len(a.Y))
	for k, v := range a.Y {
		if v >= 0.5 {
			y[k] = 1
		}
	}
	bank := &cat.Bank{Rank: r, Sigma: s.Fit.Sigma, A: s.Fit.A, D: s.Fit.B}
	mode, cov, err := cat.EstimateCov(bank, s.Prior, cat.MAP, a.Items, y)
	if err != nil {
		return nil, nil, err
	}
	L, ok := cholesky(cov, r)
	if !ok { // not positive definite: the standard deviations alone
		L = make([]float64, r*r)
		for k := 0; k < r; k++ {
			L[k*r+k] = math.Sqrt(math.Max(cov[k*r+k], 0))
		}
	}
	theta, w = make([][]float64, draws), make([]float64, draws)
	z := make([]float64, r)
	for n := range theta {
		theta[n] = make([]float64, r)
		for k := range z {
			z[k] = normalDraw(n, k)
		}
		for k := 0; k < r; k++ {
			theta[n][k] = mode[k]
			for l := 0; l <= k; l++ {
				theta[n][k] += L[k*r+l] * z[l]
			}
		}
		w[n] = 1.0 / draws
	}
	return theta, w, nil
}

// cholesky is the lower-triangular L with L·Lᵀ = c (r x r, row-major), and
// false when c is not positive definite.
func cholesky(c []float64, r int) ([]float64, bool) {
	L := make([]float64, r*r)
	for i := 0; i < r; i++ {
		for j := 0; j <= i; j++ {
			sum := c[i*r+j]
			for k := 0; k < j; k++ {
				sum -= L[i*r+k] * L[j*r+k]
			}
			if i == j {
				if !(sum > 0) {
					return nil, false
				}
				L[i*r+i] = math.Sqrt(sum)
			} else {
				L[i*r+j] = sum / L[j*r+j]
			}
		}
	}
	return L, true
}

// nodes1 is the rank-1 grid as θ vectors.
func (s *Scorer) nodes1() [][]float64 {
	theta := make([][]float64, nodes)
	for n := range theta {
		theta[n] = s.theta[n : n+1]
	}
	return theta
}

func trials(a Answers, k int) float64 {
	if a.Trials == nil {
		return 1
	}
	return a.Trials[k]
}

func softmax(lp []float64) []float64 {
	top := math.Inf(-1)
	for _, l := range lp {
		top = math.Max(top, l)
	}
	w := make([]float64, len(lp))
	var sum float64
	for n, l := range lp {
		w[n] = math.Exp(l - top)
		sum += w[n]
	}
	for n := range w {
		w[n] /= sum
	}
	return w
}

// normalDraw is a fixed standard normal number for draw n of dimension k
// (Box-Muller on a Weyl sequence), so that estimates are reproducible.
func normalDraw(n, k int) float64 {
	u1 := math.Mod(float64(n+1)*0.7548776662466927+float64(k)*0.31, 1)
	u2 := math.Mod(float64(n+1)*0.5698402909980532+float64(k)*0.57, 1)
	u1 = math.Max(u1, 1e-12)
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}

// z is the standard normal quantile of the interval's level.
func (s *Scorer) z() float64 { return math.Sqrt2 * math.Erfinv(s.Level) }

// Estimate is the estimate est (Mean, IRT, GPIRT or Blend) of one model's
// score from its answers a: first on the whole bank (or on the items of
// target, when not nil: the items whose mean is to be estimated), then on
// each category of Groups. Every answered item must be one of the bank's,
// answered once.
func (s *Scorer) Estimate(est string, a Answers, target []int) ([]Score, error) {
	switch est {
	case Mean, IRT, GPIRT, Blend:
	default:
		return nil, model.FieldErrorf("Estimator", "{Estimator} %q: want mean, irt, gp-irt or blend", est)
	}
	J := len(s.Fit.B)
	if len(a.Y) != len(a.Items) || (a.Weight != nil && len(a.Weight) != len(a.Items)) || (a.Trials != nil && len(a.Trials) != len(a.Items)) {
		return nil, fmt.Errorf("estimate: %d answers, %d items, %d weights, %d trials", len(a.Y), len(a.Items), len(a.Weight), len(a.Trials))
	}
	answered := make(map[int]int, len(a.Items))
	for k, j := range a.Items {
		if j < 0 || j >= J {
			return nil, fmt.Errorf("estimate: answer %d is to item %d of %d", k, j, J)
		}
		if _, dup := answered[j]; dup {
			return nil, fmt.Errorf("estimate: item %s answered twice", s.Fit.Items[j])
		}
		if y := a.Y[k]; !(y >= 0 && y <= 1) {
			return nil, fmt.Errorf("estimate: item %s: answer %v is not in [0, 1]", s.Fit.Items[j], y)
		}
		answered[j] = k
	}
	// pa, dpa: each answered item's P(correct) and dP/dx at each node.
	var pa, dpa []float64
	probs := func(theta [][]float64) {
		pa, dpa = make([]float64, len(a.Items)*len(theta)), make([]float64, len(a.Items)*len(theta))
		for k, j := range a.Items {
			for n, th := range theta {
				pa[k*len(theta)+n], dpa[k*len(theta)+n] = s.prob(j, th)
			}
		}
	}
	if s.Fit.Rank == 1 {
		probs(s.nodes1())
	}
	theta, w, err := s.posterior(a, pa, est == Blend)
	if err != nil {
		return nil, err
	}
	if pa == nil {
		probs(theta)
	}
	G := len(s.Groups) + 1
	group := func(j int) int {
		if s.Group == nil {
			return -1
		}
		return s.Group[j]
	}
	// u, v, q: per group and node, the unanswered target items' sums.
	u, v, q := make([][]float64, G), make([][]float64, G), make([][]float64, G)
	size := make([]int, G)
	for g := range u {
		u[g], v[g], q[g] = make([]float64, len(w)), make([]float64, len(w)), make([]float64, len(w))
	}
	// add adds (sign 1) or takes away (sign −1) item j's terms; k ≥ 0 is
	// its answer, whose probabilities pa holds.
	add := func(j, k int, sign float64) {
		for n, th := range theta {
			var p, dp float64
			if k >= 0 {
				p, dp = pa[k*len(theta)+n], dpa[k*len(theta)+n]
			} else {
				p, dp = s.prob(j, th)
			}
			iv := s.itemVar(j, th, dp)
			for _, g := range [2]int{G - 1, group(j)} {
				if g >= 0 {
					u[g][n] += sign * p
					v[g][n] += sign * p * (1 - p)
					q[g][n] += sign * iv
				}
			}
		}
	}
	var inTarget []bool
	if target == nil && s.tot != nil {
		copy(size, s.size)
		for g := range u {
			copy(u[g], s.tot[g])
			copy(v[g], s.vr[g])
			copy(q[g], s.q[g])
		}
		for k, j := range a.Items {
			add(j, k, -1)
		}
	} else {
		if target == nil {
			target = make([]int, J)
			for j := range target {
				target[j] = j
			}
		}
		inTarget = make([]bool, J)
		for _, j := range target {
			if j < 0 || j >= J || inTarget[j] {
				return nil, fmt.Errorf("estimate: target item %d of %d (or given twice)", j, J)
			}
			inTarget[j] = true
			size[G-1]++
			if g := group(j); g >= 0 {
				size[g]++
			}
			if _, ok := answered[j]; !ok {
				add(j, -1, 1)
			}
		}
	}
	// pHat: each answered item's posterior expected P(correct).
	pHat := make([]float64, len(a.Items))
	for k := range a.Items {
		for n := range theta {
			pHat[k] += w[n] * pa[k*len(theta)+n]
		}
	}
	mean, se := make([]float64, s.Fit.Rank), make([]float64, s.Fit.Rank)
	for n, th := range theta {
		for k := range mean {
			mean[k] += w[n] * th[k]
		}
	}
	for n, th := range theta {
		for k := range se {
			se[k] += w[n] * (th[k] - mean[k]) * (th[k] - mean[k])
		}
	}
	for k := range se {
		se[k] = math.Sqrt(se[k])
	}
	out := make([]Score, 0, G)
	for _, g := range append([]int{G - 1}, seq(G-1)...) {
		sc := Score{Theta: mean, SE: se, N: size[g], Lambda: math.NaN()}
		if g < G-1 {
			sc.Group = s.Groups[g]
		}
		var obs, wsum, wy, wres float64
		var ks []int
		for k, j := range a.Items {
			if g != G-1 && group(j) != g {
				continue
			}
			if inTarget != nil && !inTarget[j] {
				continue // only answers to target items count
			}
			ks = append(ks, k)
			obs += a.Y[k]
			wk := 1.0
			if a.Weight != nil {
				wk = a.Weight[k]
			}
			wsum += wk
			wy += wk * a.Y[k]
			wres += wk * (a.Y[k] - pHat[k])
		}
		sc.NAnswered = len(ks)
		if sc.N == 0 {
			sc.Observed, sc.Score, sc.Lo, sc.Hi = math.NaN(), math.NaN(), math.NaN(), math.NaN()
			out = append(out, sc)
			continue
		}
		N, n := float64(sc.N), float64(len(ks))
		var eu, eu2, ev float64
		for i := range w {
			eu += w[i] * u[g][i]
			eu2 += w[i] * u[g][i] * u[g][i]
			ev += w[i] * (v[g][i] + q[g][i])
		}
		pirt := (obs + eu) / N
		varPIRT := (math.Max(eu2-eu*eu, 0) + math.Max(ev, 0)) / (N * N)
		lo, hi := obs/N, (obs+N-n)/N // every unanswered item wrong, or right
		var m, varData, w2 float64
		if len(ks) > 0 && wsum > 0 {
			m = wy / wsum
			var s2 float64
			for _, k := range ks {
				wk := 1.0
				if a.Weight != nil {
					wk = a.Weight[k]
				}
				s2 += wk / wsum * (a.Y[k] - m) * (a.Y[k] - m)
				w2 += (wk / wsum) * (wk / wsum)
			}
			varData = s2 * w2 * math.Max(0, 1-n/N)
			sc.Observed = obs / n
		} else {
			m, varData, sc.Observed = math.NaN(), math.NaN(), math.NaN()
		}
		// res and nv: the answered items' weighted mean residual against
		// the fitted curve and its binomial variance; pm and pv the
		// posterior mean and variance of the model's misfit e (its mean
		// residual on the unanswered items), Misfit.
		var res, nv, beta, pm, pv float64
		if len(ks) > 0 && wsum > 0 {
			res = wres / wsum
			for _, k := range ks {
				wk := 1.0
				if a.Weight != nil {
					wk = a.Weight[k]
				}
				nv += (wk / wsum) * (wk / wsum) * pHat[k] * (1 - pHat[k]) / trials(a, k)
			}
			beta, pm, pv = s.misfit(res, nv)
		}
		f := (N - n) / N // the unanswered share, which the misfit moves
		// e2: p-IRT's expected squared misfit on the unanswered items, at
		// least the spread τ² of its error on validation models (the
		// answered items may not show a misfit that the unanswered ones
		// carry: the curve can be right on the one and wrong on the other),
		// and the model's own E[e²] = pm² + pv when that is larger.
		e2 := math.Max(s.ResidSD*s.ResidSD, pm*pm+pv)
		// bounded is s.bound of a model-based score x with the answers
		// at hand (x itself for the mean, or without answers).
		bounded := func(x float64) (float64, bool, float64, float64) {
			if est == Mean || len(ks) == 0 || !(wsum > 0) {
				return x, false, 0, 0
			}
			return s.bound(x, m, w2, obs, n, N)
		}
		// raw is the score before the bound; moved, wlo and whi as bound's.
		pirtB, moved, wlo, whi := bounded(pirt)
		var score, raw, vr float64
		switch est {
		case Mean:
			score, vr, lo, hi = m, varData, 0, 1
		case IRT:
			// p-IRT does not correct for the misfit, so its error
			// carries it whole: e2 widens its interval.
			score, raw, vr = pirtB, pirt, varPIRT+e2*f*f
		case GPIRT:
			// on p-IRT bounded: a mix of it and the answered mean is
			// then within the bound too
			lam := 0.0
			varIRT := varPIRT + e2*f*f
			if len(ks) > 0 {
				nv := s.GPVar / n
				if a.Weight != nil {
					nv /= 4
				}
				lam = GPLambda(s.GPBias, nv)
				score, vr = lam*m+(1-lam)*pirtB, lam*lam*varData+(1-lam)*(1-lam)*varIRT
				raw = lam*m + (1-lam)*pirt
			} else {
				score, raw, vr = pirtB, pirt, varIRT
			}
			sc.Lambda = lam
		case Blend:
			raw, vr, sc.Lambda = pirt+pm*f, varPIRT+pv*f*f, beta
			score, moved, wlo, whi = bounded(raw)
		}
		h := s.z() * math.Sqrt(vr)
		sc.Lo, sc.Hi = math.Max(lo, math.Min(score, score-h)), math.Min(hi, math.Max(score, score+h))
		if moved {
			// the model and the answers disagree: the interval spans
			// both, the model's around the score before and after the
			// bound, and the answered mean's Wilson interval
			sc.Lo = math.Max(lo, math.Min(math.Min(raw-h, wlo), math.Min(score-h, score)))
			sc.Hi = math.Min(hi, math.Max(math.Max(raw+h, whi), math.Max(score+h, score)))
		}
		sc.Score = score
		if math.IsNaN(score) {
			sc.Lo, sc.Hi = math.NaN(), math.NaN()
		}
		out = append(out, sc)
	}
	return out, nil
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// GPLambda is gp-IRT's weight on the observed mean (Maia Polo et al. 2024,
// §3.3): λ = b²/(b² + v), with b p-IRT's mean absolute error on held-out
// items and v the variance of the observed mean (a model's answer
// variance over the number of answered items, over 4 times that number
// for anchor points, as in the paper's code). λ is 0 when both are 0.
func GPLambda(b, v float64) float64 {
	if b*b+v == 0 {
		return 0
	}
	return b * b / (b*b + v)
}

// residPosterior is the posterior mean and variance of a model's mean
// residual e given its observed residual res ~ N(e, nv), under a
// Student-t prior on e with df degrees of freedom and scale tau: about
// res·τ²/(τ² + nv) while res is within a few τ of 0, and nearer res when
// it is far beyond them (a model unlike the fitted ones), with the wider
// posterior such a conflict gives. On 801 points of e within 8 sd of the
// observation (where the likelihood is not negligible) and in [−1, 1], so
// the grid is fine however small the noise.
func residPosterior(res, nv, tau, df float64) (mean, variance float64) {
	if !(nv > 0) {
		return res, 0 // no noise: the residual is what was observed
	}
	const pts = 801
	lo, hi := math.Max(-1, res-8*math.Sqrt(nv)), math.Min(1, res+8*math.Sqrt(nv))
	at := func(i int) float64 { return lo + (hi-lo)*float64(i)/(pts-1) }
	lp := make([]float64, pts)
	for i := range lp {
		e := at(i)
		lp[i] = -(df+1)/2*math.Log1p(e*e/(df*tau*tau)) - (res-e)*(res-e)/(2*nv)
	}
	w := softmax(lp)
	for i, wi := range w {
		mean += wi * at(i)
	}
	for i, wi := range w {
		d := at(i) - mean
		variance += wi * d * d
	}
	return mean, variance
}

// misfit is the posterior of a model's misfit e, the mean residual of its
// answers against the fitted curve, given the observed weighted residual
// res of binomial variance nv: its mean pm and variance pv, and β = pm/res,
// the shrinkage (Blend's λ). Under the prior ResidSD (p-IRT's error on
// validation models): a Student-t of PriorDF degrees of freedom when
// PriorDF > 0, else the normal N(0, ResidSD²), β = τ²/(τ² + nv); with
// ResidSD unknown (0), the James-Stein factor β = max(0, 1 − nv/res²).
func (s *Scorer) misfit(res, nv float64) (beta, pm, pv float64) {
	switch t2 := s.ResidSD * s.ResidSD; {
	case t2 > 0 && s.PriorDF > 0:
		pm, pv = residPosterior(res, nv, s.ResidSD, s.PriorDF)
		beta = t2 / (t2 + nv)
		if res != 0 {
			beta = pm / res // the shrinkage the t prior gave
		}
	case t2 > 0:
		beta = t2 / (t2 + nv)
		pm, pv = beta*res, beta*nv
	case res != 0:
		beta = math.Max(0, 1-nv/(res*res))
		pm, pv = beta*res, beta*nv
	}
	return beta, pm, pv
}

// bound keeps a model-based score from moving the wrong way from the
// model's own answers further than they allow: a model whose answered
// mean m lies below the bank's score at the prior's mean θ (s.middle) is
// pulled up by the prior, one above it down, so the unanswered items' mean
// is held below (above) the upper (lower) end of the one-standard-error
// Wilson score interval of m (Wilson 1927; z = 1), m's effective number of
// answers 1/w2 (w2 the sum of the squared normalised weights). obs is the
// answered items' sum, n their number and N the target's. moved tells
// whether the bound held the score back, and [lo, hi] is then the score
// whose unanswered mean is at the ends of m's Wilson interval at the
// scorer's level. So a model near 0% or 100% (the floor and the ceiling
// of the fitted range) is not pulled toward the fitted models' middle by
// more than a binomial sample of its answers could be off.
func (s *Scorer) bound(score, m, w2, obs, n, N float64) (out float64, moved bool, lo, hi float64) {
	if N <= n || !(w2 > 0) || math.IsNaN(score) {
		return score, false, 0, 0
	}
	at := func(x float64) float64 { return (obs + (N-n)*x) / N }
	l1, h1 := wilson(m, 1/w2, 1)
	out = score
	switch {
	case m < s.middle && score > at(h1):
		out = at(h1)
	case m > s.middle && score < at(l1):
		out = at(l1)
	default:
		return score, false, 0, 0
	}
	lz, hz := wilson(m, 1/w2, s.z())
	return out, true, at(lz), at(hz)
}

// wilson is the Wilson score interval of a proportion m observed on n
// trials at the normal quantile z: (m + z²/2n ± z·√(m(1 − m)/n + z²/4n²))
// / (1 + z²/n). Unlike m ± z·√(m(1 − m)/n) it is not empty at m = 0 or 1.
func wilson(m, n, z float64) (lo, hi float64) {
	z2 := z * z
	c := (m + z2/(2*n)) / (1 + z2/n)
	h := z / (1 + z2/n) * math.Sqrt(m*(1-m)/n+z2/(4*n*n))
	return math.Max(0, c-h), math.Min(1, c+h)
}
