package estimate

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/progress"
	"github.com/jeirt/jeirt/train/cat"
	"github.com/jeirt/jeirt/train/irt"
	"github.com/jeirt/jeirt/train/irtguard"
	"github.com/jeirt/jeirt/train/irtstat"
)

// The selection rules of Eval (and of jeirt irt select --budget).
const (
	Random        = "random"         // K items drawn uniformly
	Anchor        = "anchor"         // anchor points on the fitted IRT embedding (tinyBenchmarks' anchor-irt)
	AnchorCorrect = "anchor-correct" // anchor points on the correctness pattern (tinyBenchmarks' anchor)
	AnchorRank    = "anchor-rank"    // anchor points on the ranks of the fitted IRT embedding (jeirt's default)
	Info          = "info"           // irtstat.InformationSelect
)

// Rules lists the selection rules in the order the tables show them.
var Rules = []string{Random, Anchor, AnchorCorrect, AnchorRank, Info}

// Default is jeirt's estimator and DefaultRule its selection, chosen by
// the held-out-model evaluation of docs/irt.md.
const (
	Default     = Blend
	DefaultRule = AnchorRank
)

// ModelsOf is r restricted to the models keep (indices into r.Models, in
// that order), every item kept.
func ModelsOf(r *model.Responses, keep []int) *model.Responses {
	s := &model.Responses{Items: r.Items, ItemText: r.ItemText, ItemGroup: r.ItemGroup}
	for k, i := range keep {
		s.Models = append(s.Models, r.Models[i])
		for _, c := range r.ByModel().Row(i) {
			s.AppendFrom(int32(k), r.Item[c], r, int(c))
		}
	}
	return s
}

// AnswerVariance is gp-IRT's v before the division by the number of
// answers: the mean over r's models of the variance of their answers.
func AnswerVariance(r *model.Responses) float64 {
	var sum float64
	n := 0
	for i := range r.Models {
		row := r.ByModel().Row(i)
		if len(row) < 2 {
			continue
		}
		var m, m2 float64
		for _, c := range row {
			y := r.ScoreAt(int(c))
			m += y
			m2 += y * y
		}
		m /= float64(len(row))
		sum += m2/float64(len(row)) - m*m
		n++
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// SplitHalfBias is gp-IRT's b (Maia Polo et al. 2024, §3.3, and their
// code): the mean absolute error of p-IRT on the odd-numbered items of each
// model of val, its θ estimated from its answers to the even-numbered ones,
// with the items of s (fitted without val's models).
func SplitHalfBias(s *Scorer, val *model.Responses) (mae, rms float64, err error) {
	var sum, sum2 float64
	n := 0
	for i := range val.Models {
		var a Answers
		var target []int
		var truth float64
		for _, c := range val.ByModel().Row(i) {
			j := int(val.Item[c])
			if j%2 == 0 {
				a.Items, a.Y = append(a.Items, j), append(a.Y, val.ScoreAt(int(c)))
			} else {
				target = append(target, j)
				truth += val.ScoreAt(int(c))
			}
		}
		if len(a.Items) == 0 || len(target) == 0 {
			continue
		}
		sc, err := s.Estimate(IRT, a, target)
		if err != nil {
			return 0, 0, err
		}
		d := sc[0].Score - truth/float64(len(target))
		sum += math.Abs(d)
		sum2 += d * d
		n++
	}
	if n == 0 {
		return 0, 0, fmt.Errorf("estimate: no validation model answered both halves of the items")
	}
	return sum / float64(n), math.Sqrt(sum2 / float64(n)), nil
}

// Eval measures the estimators on held-out models: for each of Seeds
// splits of the models, a TestFraction of them is held out, the rest
// fitted by Fitter, Budget items selected by each rule, and each held-out
// model's score on the items it answered estimated from its answers to the
// selected ones by each estimator.
type Eval struct {
	Fitter       irt.CBMM
	TestFraction float64 // 0 means 0.2
	Budget       int     // K; 0 means min(100, 10% of the items)
	Rules        []string
	Estimators   []string
	Seeds        int // 0 means 10
	Seed         int64
	Level        float64 // 0 means 0.95
	PriorDF      float64 // Scorer.PriorDF of Blend (0: the normal prior)
	Log          progress.Logf
	// OnSplit, when set, is told each split's held-out models (their
	// names, in the order drawn) before the split is fitted: jeirt irt
	// estimate --eval --splits-out writes them, so that a peer (a script
	// under scripts/) can be measured on the very same splits.
	OnSplit func(split int, heldOut []string) error
	// Ranks, when it lists more than one, are the ranks of the fit from
	// which each split chooses (ChooseRank, as tinyBenchmarks chooses its
	// dimension), Fitter.Rank then ignored; OnRank, when set, is told each
	// candidate's validation error and convergence.
	Ranks  []int
	OnRank func(split int, c RankChoice) error
}

// EvalCell is one rule x estimator: the mean absolute error of the score
// over held-out models, averaged over splits (MAE) with its standard
// deviation across splits (MAESD), the share of intervals that cover the
// true score, their mean width, and each split's error.
type EvalCell struct {
	Rule, Estimator string
	MAE, MAESD      float64
	Coverage, Width float64
	PerSplit        []float64
	// Low and High are the same measures pooled over the held-out
	// estimates of the models in the lowest and the highest tenth of
	// accuracy (every model of the data ranked by its mean answer): the
	// floor and the ceiling of the fitted range, where an estimator is
	// most easily pulled the wrong way.
	Low, High Tail
}

// Tail is an estimator's error and coverage on one tail of the models
// (EvalCell.Low, EvalCell.High): N estimates, their mean absolute error and
// the share of intervals that cover the true score.
type Tail struct {
	N             int
	MAE, Coverage float64
}

func (t *Tail) add(err float64, covered bool) {
	t.MAE += err // a sum until finish
	if covered {
		t.Coverage++
	}
	t.N++
}

func (t *Tail) finish() {
	if t.N > 0 {
		t.MAE /= float64(t.N)
		t.Coverage /= float64(t.N)
	}
}

// tails marks the models in the lowest and the highest tenth of accuracy
// among models (at least one model each).
func tails(r *model.Responses, models []int) (low, high map[int]bool) {
	acc := make([]float64, len(r.Models))
	for _, i := range models {
		row := r.ByModel().Row(i)
		for _, c := range row {
			acc[i] += r.ScoreAt(int(c)) / float64(len(row))
		}
	}
	order := append([]int(nil), models...)
	sort.SliceStable(order, func(a, b int) bool { return acc[order[a]] < acc[order[b]] })
	n := max(1, int(math.Round(0.1*float64(len(order)))))
	low, high = map[int]bool{}, map[int]bool{}
	for k := 0; k < n; k++ {
		low[order[k]], high[order[len(order)-1-k]] = true, true
	}
	return low, high
}

// Run runs the evaluation on r; cells are in the order rules x estimators.
func (e Eval) Run(ctx context.Context, r *model.Responses) ([]EvalCell, int, error) {
	if e.TestFraction == 0 {
		e.TestFraction = 0.2
	}
	if e.Seeds == 0 {
		e.Seeds = 10
	}
	if e.Seeds < 0 {
		return nil, 0, model.FieldErrorf("Seeds", "{Seeds} %d: must be at least 1 (the number of model splits)", e.Seeds)
	}
	if len(e.Rules) == 0 {
		e.Rules = Rules
	}
	if len(e.Estimators) == 0 {
		e.Estimators = Estimators
	}
	if !(e.TestFraction > 0 && e.TestFraction < 1) {
		return nil, 0, model.FieldErrorf("TestFraction", "{TestFraction} %v must be in (0, 1)", e.TestFraction)
	}
	J := r.NumItems()
	if e.Budget == 0 {
		e.Budget = max(1, min(100, J/10))
	}
	if e.Budget < 1 || e.Budget >= J {
		return nil, 0, model.FieldErrorf("Budget", "{Budget} %d must be in [1, %d) (the items)", e.Budget, J)
	}
	var models []int
	for i := range r.Models {
		if len(r.ByModel().Row(i)) > 0 {
			models = append(models, i)
		}
	}
	nTest := int(math.Round(e.TestFraction * float64(len(models))))
	if nTest < 1 || len(models)-nTest < 5 {
		return nil, 0, model.FieldErrorf("TestFraction", "{TestFraction} %v of %d models leaves %d to test and %d to fit (want at least 1 and 5)", e.TestFraction, len(models), nTest, len(models)-nTest)
	}
	type acc struct {
		err       [][]float64
		cover, n  int
		width     float64
		low, high Tail
	}
	low, high := tails(r, models)
	cells := make([]acc, len(e.Rules)*len(e.Estimators))
	for c := range cells {
		cells[c].err = make([][]float64, e.Seeds)
	}
	for seed := 0; seed < e.Seeds; seed++ {
		if err := ctx.Err(); err != nil {
			return nil, seed, err
		}
		rng := rand.New(rand.NewPCG(uint64(e.Seed), uint64(seed)))
		perm := append([]int(nil), models...)
		rng.Shuffle(len(perm), func(a, b int) { perm[a], perm[b] = perm[b], perm[a] })
		test, train := perm[:nTest], perm[nTest:]
		sort.Ints(train)
		if e.OnSplit != nil {
			names := make([]string, len(test))
			for k, i := range test {
				names[k] = r.Models[i]
			}
			if err := e.OnSplit(seed, names); err != nil {
				return nil, seed, err
			}
		}
		trainR := ModelsOf(r, train)
		fitter := e.Fitter
		var val *RankChoice
		if len(e.Ranks) > 1 {
			cs, best, err := ChooseRank(ctx, e.Fitter, e.Ranks, trainR, e.Level)
			if err != nil {
				return nil, seed, err
			}
			for _, c := range cs {
				if e.OnRank != nil {
					if err := e.OnRank(seed, c); err != nil {
						return nil, seed, err
					}
				}
			}
			val = &cs[best]
			fitter.Rank = val.Rank
		}
		fits, err := irtguard.Fits(ctx, fitter, []*model.Responses{trainR})
		if err != nil {
			return nil, seed, err
		}
		fit := fits[0]
		s, err := e.scorer(ctx, fit, trainR, val)
		if err != nil {
			return nil, seed, err
		}
		for ri, rule := range e.Rules {
			items, weight, err := Select(rule, fit, trainR, e.Budget, uint64(e.Seed)+uint64(seed))
			if err != nil {
				return nil, seed, err
			}
			pick := make(map[int]int, len(items))
			for k, j := range items {
				pick[j] = k
			}
			for _, i := range test {
				var a Answers
				var target []int
				var truth float64
				for _, c := range r.ByModel().Row(i) {
					j := int(r.Item[c])
					target = append(target, j)
					truth += r.ScoreAt(int(c))
					if k, ok := pick[j]; ok {
						a.Items, a.Y = append(a.Items, j), append(a.Y, r.ScoreAt(int(c)))
						if r.Weighted() { // k of n: the likelihood of n trials, as irt estimate reads them
							a.Trials = append(a.Trials, float64(r.TrialsAt(int(c))))
						}
						if weight != nil {
							a.Weight = append(a.Weight, weight[k])
						}
					}
				}
				truth /= float64(len(target))
				if len(a.Items) == 0 {
					continue
				}
				for ei, est := range e.Estimators {
					sc, err := s.Estimate(est, a, target)
					if err != nil {
						return nil, seed, err
					}
					c := &cells[ri*len(e.Estimators)+ei]
					d := math.Abs(sc[0].Score - truth)
					covered := sc[0].Lo <= truth && truth <= sc[0].Hi
					c.err[seed] = append(c.err[seed], d)
					c.n++
					if covered {
						c.cover++
					}
					if low[i] {
						c.low.add(d, covered)
					}
					if high[i] {
						c.high.add(d, covered)
					}
					c.width += sc[0].Hi - sc[0].Lo
				}
			}
		}
		e.Log.Printf("estimate eval: split %d of %d done", seed+1, e.Seeds)
	}
	out := make([]EvalCell, len(cells))
	for ri, rule := range e.Rules {
		for ei, est := range e.Estimators {
			c := cells[ri*len(e.Estimators)+ei]
			ec := EvalCell{Rule: rule, Estimator: est, Coverage: float64(c.cover) / float64(c.n), Width: c.width / float64(c.n), Low: c.low, High: c.high}
			ec.Low.finish()
			ec.High.finish()
			for _, errs := range c.err {
				var m float64
				for _, x := range errs {
					m += x / float64(len(errs))
				}
				ec.PerSplit = append(ec.PerSplit, m)
			}
			ec.MAE, ec.MAESD = meanSD(ec.PerSplit)
			out[ri*len(e.Estimators)+ei] = ec
		}
	}
	return out, e.Budget, nil
}

// scorer is the Scorer of a fit on train, with gp-IRT's b and Blend's τ
// from ValidationBias (or val, the chosen rank's, when not nil) and v from
// train.
func (e Eval) scorer(ctx context.Context, fit *model.IRT, train *model.Responses, val *RankChoice) (*Scorer, error) {
	s, err := NewScorer(fit, e.Level, e.PriorDF)
	if err != nil {
		return nil, err
	}
	s.GPVar = AnswerVariance(train)
	if val != nil {
		s.GPBias, s.ResidSD = val.MAE, val.RMS
		return s, nil
	}
	if s.GPBias, s.ResidSD, err = ValidationBias(ctx, e.Fitter, train, e.Level); err != nil {
		return nil, err
	}
	return s, nil
}

// ValidationBias is gp-IRT's b and Blend's τ as the paper's code takes
// them: train is fitted again without every fifth of its models, and
// SplitHalfBias scores those models on that fit (they are then new to
// it, as the models to estimate will be): the mean absolute and the root
// mean square error of p-IRT.
func ValidationBias(ctx context.Context, fitter irt.CBMM, train *model.Responses, level float64) (mae, rms float64, err error) {
	c, err := validate(ctx, fitter, train, level)
	return c.MAE, c.RMS, err
}

// validate is ValidationBias with the validation fit's rank and whether it
// converged.
func validate(ctx context.Context, fitter irt.CBMM, train *model.Responses, level float64) (RankChoice, error) {
	c := RankChoice{Rank: max(fitter.Rank, 1)}
	var val, rest []int
	for i := range train.Models {
		if i%5 == 0 {
			val = append(val, i)
		} else {
			rest = append(rest, i)
		}
	}
	if len(rest) < 2 {
		return c, fmt.Errorf("estimate: %d models: too few to hold a fifth out and fit the rest", len(train.Models))
	}
	vfits, err := irtguard.Fits(ctx, fitter, []*model.Responses{ModelsOf(train, rest)})
	if err != nil {
		return c, err
	}
	vfit := vfits[0]
	c.Converged, c.Note = vfit.Converged, vfit.Note
	vs, err := NewScorer(vfit, level, 0)
	if err != nil {
		return c, err
	}
	c.MAE, c.RMS, err = SplitHalfBias(vs, ModelsOf(train, val))
	return c, err
}

// NewScorer is a prepared Scorer of fit's items with the population prior
// of its abilities (for Blend a Student-t of priorDF degrees of freedom
// when priorDF > 0).
func NewScorer(fit *model.IRT, level, priorDF float64) (*Scorer, error) {
	prior, err := cat.PopulationPrior(fit.Theta, fit.Rank)
	if err != nil {
		return nil, err
	}
	s := &Scorer{Fit: fit, Prior: prior, Level: level, PriorDF: priorDF}
	return s, s.Prepare()
}

// Select chooses k items of fit by rule (Random, Anchor, AnchorCorrect or
// Info; r holds the answers AnchorCorrect clusters). Anchor rules also
// return each item's weight; the others nil.
func Select(rule string, fit *model.IRT, r *model.Responses, k int, seed uint64) ([]int, []float64, error) {
	J := len(fit.B)
	if k < 1 || k > J {
		return nil, nil, model.FieldErrorf("Budget", "{Budget} %d must be in [1, %d] (the items)", k, J)
	}
	switch rule {
	case Random:
		rng := rand.New(rand.NewPCG(seed, 0xa11))
		return rng.Perm(J)[:k], nil, nil
	case Anchor:
		X, dim := IRTEmbedding(fit)
		return Anchors(X, J, dim, k, seed)
	case AnchorRank:
		X, dim := RankEmbedding(fit)
		return Anchors(X, J, dim, k, seed)
	case AnchorCorrect:
		if r == nil {
			return nil, nil, fmt.Errorf("estimate: rule %s needs the fitted responses", rule)
		}
		X, dim := CorrectnessEmbedding(r)
		return Anchors(X, J, dim, k, seed)
	case Info:
		items, _, err := irtstat.InformationSelect(fit, float64(k)/float64(J))
		return items, nil, err
	}
	return nil, nil, model.FieldErrorf("Rule", "{Rule} %q: want random, anchor, anchor-correct, anchor-rank or info", rule)
}

func meanSD(x []float64) (m, sd float64) {
	for _, v := range x {
		m += v / float64(len(x))
	}
	if len(x) < 2 {
		return m, math.NaN()
	}
	for _, v := range x {
		sd += (v - m) * (v - m)
	}
	return m, math.Sqrt(sd / float64(len(x)-1))
}
