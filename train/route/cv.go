package route

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"time"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/progress"
	"github.com/jeirt/jeirt/model/widesum"
)

// DefaultFolds is CrossValidation's number of folds.
const DefaultFolds = 5

// CVMargins are the margin values δ CrossValidation scores (δ = 0 is max-p,
// δ = inf best-single, both scored as themselves).
var CVMargins = []float64{0.2, 0.1, 0.05, 0.02, 0.01}

// CrossValidation chooses a checkpoint's default routing rule by K-fold
// cross-validation over its training questions. The questions with cells
// are dealt at random into K folds; for each fold, Refit trains a model on
// the other folds' cells, and every candidate rule routes the fold's
// questions with that model (RouteEval), ranking the models by their
// accuracy on the other folds' cells. Every question is held out once per
// repeat; with Repeats > 1 the deal is made again and each question's
// outcome is its mean over the repeats.
//
// The candidates are best-single, every shortlist T of Shortlists, every
// margin δ of Margins, max-p and, with Costs, every λ of RouteEval's grid.
// Choose picks among them by Guard: with "one-se" (the default), the rule
// that departs least often from best-single's pick among those within one
// standard error of the highest mean held-out accuracy (the one-standard-
// error rule); with "se", the rule with the highest accuracy if it beats
// best-single by more than the standard error of that paired difference
// over the questions; with "reality-check", by more than the same level
// for the largest of all candidates' differences under resampling. Else
// best-single is kept. On a tie the earlier candidate wins, in the order
// above.
type CrossValidation struct {
	Folds   int    // K; 0 means DefaultFolds
	Repeats int    // deals of the questions into folds; 0 means 1
	Seed    uint64 // the deals
	// Guard is "one-se" (the default, also ""), "se" or "reality-check"
	// (see Choose).
	Guard string
	// Costs holds a price per model of the responses (NaN: unpriced), or
	// is nil; with costs the λ rules are candidates too.
	Costs      []float64
	Shortlists []int     // nil: DefaultShortlists
	Margins    []float64 // nil: CVMargins
	// Refit trains a model on train, the cells of the questions outside
	// fold; train has the responses' models and items (the model's Items
	// must be those of the responses, its Q a row for each, so that a
	// held-out question's row is the adapter applied to its text).
	Refit func(ctx context.Context, fold int, train *model.Responses) (*model.JEIRT, error)
	// Calibrate fits the router's calibrated P (Calibration) on the
	// folds' out-of-fold predictions, and the rules are then scored with
	// it: each fold's P calibrated by the weights fitted on the other
	// folds of its deal (cross-fitting). CVResult.Calibration holds the
	// weights fitted on all of them. An interrupted run does not
	// calibrate.
	Calibrate bool
	Log       progress.Logf // a line per fold
}

// Guards of CrossValidation.
const (
	GuardOneSE        = "one-se"
	GuardSE           = "se"
	GuardRealityCheck = "reality-check"
)

// CVResult is what CrossValidation found.
type CVResult struct {
	Rule      Rule   // the chosen default
	Why       string // why it was chosen, one clause ("the highest accuracy ...")
	Folds     int
	Repeats   int
	Completed int // folds scored, over all repeats; fewer than Folds·Repeats when interrupted
	Questions int // training questions dealt into the folds
	Scores    []RuleScore
	// Calibration is the calibrated P's weights (with Calibrate), fitted
	// on every out-of-fold prediction, with the cross-fitted log loss.
	Calibration *checkpoint.Calibration
}

// RuleScore is one candidate's cross-validated figures (see
// checkpoint.RuleScore).
type RuleScore struct {
	Rule                 Rule
	Accuracy, AccuracySE float64
	VsBest, VsBestSE     float64
	Wins, Losses         int     // folds
	MeanCost             float64 // NaN without costs
	// Departures is the share of the held-out questions on which the rule
	// chose another model than best-single's pick (0 for best-single): how
	// far it strays from the simplest rule, which orders the candidates of
	// the one-standard-error rule.
	Departures float64
	// outcomes is the mean label per question (in CVResult's question
	// order), for Choose's resampling.
	outcomes []float64
}

// Run cross-validates the candidates on the training responses r. When ctx
// is cancelled, the folds completed so far are kept and best-single is
// chosen, and Why says so; the error is ctx's only when no fold finished.
func (cv CrossValidation) Run(ctx context.Context, r *model.Responses) (*CVResult, error) {
	K, R := cv.Folds, max(cv.Repeats, 1)
	if K == 0 {
		K = DefaultFolds
	}
	if K < 2 {
		return nil, model.FieldErrorf("Folds", "{Folds} %d: cross-validation needs at least 2 folds", K)
	}
	if cv.Guard != "" && cv.Guard != GuardOneSE && cv.Guard != GuardSE && cv.Guard != GuardRealityCheck {
		return nil, model.FieldErrorf("Guard", "{Guard} %q: want %s, %s or %s", cv.Guard, GuardOneSE, GuardSE, GuardRealityCheck)
	}
	var items []int
	byItem := r.ByItem()
	for j := 0; j < r.NumItems(); j++ {
		if len(byItem.Row(j)) > 0 {
			items = append(items, j)
		}
	}
	res := &CVResult{Rule: Rule{Name: RuleBestSingle, Param: math.NaN()}, Folds: K, Repeats: R, Questions: len(items)}
	if len(items) < 2*K {
		res.Why = fmt.Sprintf("%d training questions are too few for %d-fold cross-validation of the routing rules", len(items), K)
		return res, nil
	}
	qIndex := make([]int, r.NumItems()) // item → position in items, for the per-question tallies
	for k, j := range items {
		qIndex[j] = k
	}
	shortlists := cv.Shortlists
	if shortlists == nil {
		shortlists = DefaultShortlists
	}
	margins := cv.Margins
	if margins == nil {
		margins = CVMargins
	}
	type tally struct {
		rule    Rule
		sum, n  []float64 // per question: summed label, times held out
		foldAcc []float64 // per fold: accuracy minus best-single's
		cost    widesum.Sum
		routed  int
		departs int // questions routed away from best-single's pick
	}
	var cands []*tally
	byKey := map[string]*tally{}
	keyOf := func(p RoutePoint) string { return p.Rule + "|" + fmt.Sprint(p.Param) }
	rng := rand.New(rand.NewPCG(cv.Seed, 0x726f757465)) // "route"
	foldOf := make([]int, r.NumItems())
	deal := append([]int(nil), items...)
	interrupted := false
	var folds []*cvFold // the completed folds, scored once all are done
	for rep := 0; rep < R && !interrupted; rep++ {
		rng.Shuffle(len(deal), func(a, b int) { deal[a], deal[b] = deal[b], deal[a] })
		for j := range foldOf {
			foldOf[j] = -1
		}
		for k, j := range deal {
			foldOf[j] = k % K
		}
		for f := 0; f < K; f++ {
			var trainCells, heldCells []int32
			for c, j := range r.Item {
				if foldOf[j] == f {
					heldCells = append(heldCells, int32(c))
				} else {
					trainCells = append(trainCells, int32(c))
				}
			}
			start := time.Now()
			trainF := r.Subset(trainCells)
			m, err := cv.Refit(ctx, rep*K+f, trainF)
			if ctx.Err() != nil {
				interrupted = true
				break
			}
			if err != nil {
				return nil, fmt.Errorf("routing cross-validation, fold %d of %d: %w", f+1, K, err)
			}
			if m.NumItems() != r.NumItems() {
				return nil, fmt.Errorf("routing cross-validation, fold %d: the refitted model has %d items, the responses %d", f+1, m.NumItems(), r.NumItems())
			}
			held := r.Subset(heldCells)
			q := make([][]float32, r.NumItems())
			var heldItems []int // RouteEval's outcome order: items with cells, ascending
			for _, j := range held.Item {
				if q[j] == nil {
					q[j] = m.ItemEmbedding(int(j))
					heldItems = append(heldItems, int(j))
				}
			}
			sort.Ints(heldItems)
			fd := &cvFold{rep: rep, index: f, m: m, held: held, q: q, heldItems: heldItems}
			fd.ref, fd.costs = rowScores(m, trainF, cv.Costs)
			if cv.Calibrate {
				fd.cells = outOfFold(m, held, q, fd.ref)
			}
			folds = append(folds, fd)
			res.Completed++
			cv.Log.Printf("routing cross-validation: fold %d/%d%s: refit on %d questions, %d held out, %.1fs",
				f+1, K, map[bool]string{true: fmt.Sprintf(" of repeat %d/%d", rep+1, R), false: ""}[R > 1],
				len(items)-len(heldItems), len(heldItems), time.Since(start).Seconds())
		}
	}
	calibrate := cv.Calibrate && !interrupted
	if calibrate {
		w, err := cv.calibrate(folds)
		if err != nil {
			// Too few predictions (a tiny set): the rules keep the map's P.
			cv.Log.Printf("routing cross-validation: not calibrated: %v", err)
			calibrate = false
		} else {
			res.Calibration = w
			cv.Log.Printf("routing cross-validation: calibrated P = σ(%.3f·z %+.3f·logit(accuracy) %+.3f) on %d out-of-fold predictions: log loss %.4f, the map's own P %.4f",
				w.JEIRT, w.Accuracy, w.Intercept, w.Cells, w.LogLoss, w.RawLogLoss)
		}
	}
	for _, fd := range folds {
		f := fd.index
		opt := RouteEvalOptions{Reference: fd.ref, Costs: fd.costs, Shortlists: shortlists,
			Margins: margins, MinP: []float64{}, Outcomes: true}
		if calibrate {
			opt.Calibration = fd.cal
		}
		pts, err := RouteEval(fd.m, fd.held, fd.q, opt)
		if err != nil {
			return nil, fmt.Errorf("routing cross-validation, fold %d: %w", f+1, err)
		}
		heldItems := fd.heldItems
		var bestAcc float64
		for _, p := range pts {
			if p.Policy == "best-single" {
				bestAcc = p.Accuracy
			}
		}
		for _, p := range pts {
			var rule Rule
			switch {
			case p.Policy == "best-single":
				rule = Rule{Name: RuleBestSingle, Param: math.NaN()}
			case p.Policy != "router":
				continue
			default: // a rule's point (not default, margin-val), margin +Inf aside: it is best-single
				k := kindOf(p.Rule)
				if k == nil || k.key != "" && math.IsInf(p.Param, 1) {
					continue
				}
				rule = Rule{Name: p.Rule, Param: math.NaN()}
				if k.key != "" {
					rule.Param = p.Param
				}
			}
			if len(p.Outcomes) != len(heldItems) {
				return nil, fmt.Errorf("routing cross-validation, fold %d: %d outcomes for %d questions", f+1, len(p.Outcomes), len(heldItems))
			}
			key := keyOf(p)
			t, ok := byKey[key]
			if !ok {
				t = &tally{rule: rule, sum: make([]float64, len(items)), n: make([]float64, len(items))}
				byKey[key] = t
				cands = append(cands, t)
			}
			for k, j := range heldItems {
				t.sum[qIndex[j]] += p.Outcomes[k]
				t.n[qIndex[j]]++
			}
			t.foldAcc = append(t.foldAcc, p.Accuracy-bestAcc)
			t.cost.Add(p.TotalCost)
			t.routed += p.Items
			t.departs += p.Departures
		}
	}
	if res.Completed == 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	// Order: best-single, shortlists, margins (large δ first), max-p, λ: the
	// rules' cvRank.
	ordered := slices.SortedStableFunc(slices.Values(cands), func(a, b *tally) int {
		return kindOf(a.rule.Name).cvRank - kindOf(b.rule.Name).cvRank
	})
	// A question's outcome is its mean over the repeats that held it out
	// (all of them, unless interrupted: then the questions held out so far).
	mean := func(t *tally) []float64 {
		var out []float64
		for k := range t.sum {
			if t.n[k] > 0 {
				out = append(out, t.sum[k]/t.n[k])
			}
		}
		return out
	}
	var best []float64
	for _, t := range ordered {
		if t.rule.Name == RuleBestSingle {
			best = mean(t)
		}
	}
	for _, t := range ordered {
		s := RuleScore{Rule: t.rule, MeanCost: math.NaN(), outcomes: mean(t)}
		s.Accuracy, s.AccuracySE = meanSE(s.outcomes)
		s.VsBest, s.VsBestSE = pairedDiff(s.outcomes, best)
		for _, d := range t.foldAcc {
			switch sign(d) {
			case 1:
				s.Wins++
			case -1:
				s.Losses++
			}
		}
		if cv.Costs != nil && t.routed > 0 {
			s.MeanCost = t.cost.Mean(t.routed)
		}
		if t.routed > 0 {
			s.Departures = float64(t.departs) / float64(t.routed)
		}
		res.Scores = append(res.Scores, s)
	}
	if res.Completed < K*R {
		res.Why = fmt.Sprintf("the cross-validation of the routing rules was interrupted after %d of %d folds", res.Completed, K*R)
		return res, nil
	}
	where := fmt.Sprintf("%s over %d training questions", foldsName(K, R), len(items))
	if calibrate {
		where += ", the rules on the calibrated P"
	}
	res.Rule, res.Why = Choose(res.Scores, cv.Guard, where, cv.Seed)
	return res, nil
}

// cvFold is one completed fold of CrossValidation.Run: the refitted model,
// its held-out responses and question rows, the ranking and prices from
// its training cells, and (with Calibrate) its out-of-fold predictions
// and the calibration its rules apply.
type cvFold struct {
	rep, index int
	m          *model.JEIRT
	held       *model.Responses
	q          [][]float32
	heldItems  []int
	ref, costs []float64
	cells      CalibrationCells
	cal        *Calibration
}

// calibrate fits the calibration of each fold on the other folds of its
// deal (cross-fitting: a fold's own outcomes never tune its P) and returns
// the weights fitted on all of them, with the cross-fitted log loss.
func (cv CrossValidation) calibrate(folds []*cvFold) (*checkpoint.Calibration, error) {
	var all CalibrationCells
	var calLoss float64
	for _, fd := range folds {
		var others CalibrationCells
		for _, o := range folds {
			if o != fd && o.rep == fd.rep {
				others.append(&o.cells)
			}
		}
		w, err := FitCalibration(&others)
		if err != nil {
			return nil, err
		}
		fd.cal = NewCalibration(w, fd.ref, nil)
		calLoss += fd.cells.LogLoss(w) * float64(len(fd.cells.Z))
		all.append(&fd.cells)
	}
	w, err := FitCalibration(&all)
	if err != nil {
		return nil, err
	}
	w.LogLoss = calLoss / float64(len(all.Z))
	w.RawLogLoss = all.LogLoss(checkpoint.Identity)
	return &w, w.Check()
}

// outOfFold is the calibration's cells of a fold: every held-out cell of a
// model with a training accuracy (ref, per row of m), with its JE-IRT
// logit, its accuracy logit and its score.
func outOfFold(m *model.JEIRT, held *model.Responses, q [][]float32, ref []float64) CalibrationCells {
	row := make([]int, held.NumModels()) // model of held → row of m
	for k := range row {
		row[k] = -1
	}
	for i, name := range m.Models {
		if k := held.ModelIndex(name); k >= 0 {
			row[k] = i
		}
	}
	var c CalibrationCells
	for cell, j := range held.Item {
		i := row[held.Model[cell]]
		if i < 0 || math.IsInf(ref[i], -1) {
			continue
		}
		c.add(m.Logit(i, q[j]), AccuracyLogit(ref[i]), held.ScoreAt(cell))
	}
	return c
}

// foldsName is "5-fold cross-validation", or with repeats "5-fold
// cross-validation repeated 3 times".
func foldsName(k, r int) string {
	if r > 1 {
		return fmt.Sprintf("%d-fold cross-validation repeated %d times", k, r)
	}
	return fmt.Sprintf("%d-fold cross-validation", k)
}

func countFold(items, foldOf []int, f int) int {
	n := 0
	for _, j := range items {
		if foldOf[j] == f {
			n++
		}
	}
	return n
}

// rowScores is, per row of m, the model's accuracy on the cells of r (−Inf
// for a model without any) and its price from costs (per model of r; nil
// stays nil).
func rowScores(m *model.JEIRT, r *model.Responses, costs []float64) (ref, rowCosts []float64) {
	acc := r.ModelAccuracy()
	ref = make([]float64, m.NumModels())
	if costs != nil {
		rowCosts = make([]float64, m.NumModels())
	}
	for i, name := range m.Models {
		ref[i] = math.Inf(-1)
		k := r.ModelIndex(name)
		if k >= 0 && !math.IsNaN(acc[k]) {
			ref[i] = acc[k]
		}
		if costs != nil {
			rowCosts[i] = math.NaN()
			if k >= 0 {
				rowCosts[i] = costs[k]
			}
		}
	}
	return ref, rowCosts
}

// Choose picks the default rule from cross-validated scores whose first is
// best-single's. where names the cross-validation in Why.
//
// The guard "one-se" (or "") is the one-standard-error rule (Breiman et
// al. 1984, Classification and Regression Trees, ch. 3; Hastie, Tibshirani
// and Friedman, The Elements of Statistical Learning, §7.10): of the rules
// whose accuracy is within one standard error of the highest (the standard
// error of their paired difference from that rule over the questions), it
// takes the one that departs least often from best-single's pick
// (RuleScore.Departures; the earlier on a tie), so best-single itself
// whenever the best rule's lead over it is within its standard error.
// Choosing the best of many noisy candidates favours one whose lead is
// luck; the simpler rule costs at most a standard error of accuracy.
//
// The guard "se" takes the rule with the highest accuracy (the earlier on
// a tie) when it beats best-single by more than the standard error of that
// paired difference, else best-single. The guard "reality-check" raises
// that bar for the choice among many candidates (White 2000, "A reality
// check for data snooping", Econometrica 68:1097; studentized as in Hansen
// 2005): the questions are resampled with replacement 2,000 times (seeded
// by seed), and the rule's t = difference/standard error must exceed the
// 84th percentile of the largest centred t over all candidates, the level
// one standard error is for a single candidate.
func Choose(scores []RuleScore, guard, where string, seed uint64) (Rule, string) {
	if len(scores) == 0 || scores[0].Rule.Name != RuleBestSingle {
		return Rule{Name: RuleBestSingle, Param: math.NaN()}, "no cross-validated scores"
	}
	top := 0
	for k := 1; k < len(scores); k++ {
		if scores[k].Accuracy > scores[top].Accuracy+1e-12 {
			top = k
		}
	}
	bs, t := scores[0], scores[top]
	pts := func(v float64) string { return fmt.Sprintf("%+.2f ± %.2f points", 100*v, 100*t.VsBestSE) }
	if top == 0 {
		second := -1
		for k := 1; k < len(scores); k++ {
			if second < 0 || scores[k].Accuracy > scores[second].Accuracy+1e-12 {
				second = k
			}
		}
		why := fmt.Sprintf("no rule beat its accuracy (%.4f) in %s", bs.Accuracy, where)
		if second > 0 {
			s := scores[second]
			why += fmt.Sprintf("; the best other, %s, scored %+.2f ± %.2f points", s.Rule, 100*s.VsBest, 100*s.VsBestSE)
		}
		return bs.Rule, why
	}
	if guard == "" || guard == GuardOneSE {
		return oneSE(scores, top, where)
	}
	level, what := t.VsBestSE, "its standard error"
	if guard == GuardRealityCheck {
		c := realityCheck(scores, seed)
		level, what = c*t.VsBestSE, fmt.Sprintf("the reality-check level for the best of %d candidates (%.2f standard errors)", len(scores)-1, c)
	}
	if t.VsBest > level {
		return t.Rule, fmt.Sprintf("the highest accuracy (%.4f) in %s, %s against best-single (%.4f), more than %s; won %d folds, lost %d",
			t.Accuracy, where, pts(t.VsBest), bs.Accuracy, what, t.Wins, t.Losses)
	}
	return bs.Rule, fmt.Sprintf("the highest accuracy in %s was %s's (%.4f), but its %s against best-single (%.4f) is within %s",
		where, t.Rule, t.Accuracy, pts(t.VsBest), bs.Accuracy, what)
}

// oneSE is Choose's one-standard-error rule; scores[top] has the highest
// accuracy and is not best-single.
func oneSE(scores []RuleScore, top int, where string) (Rule, string) {
	t := scores[top]
	order := make([]int, len(scores))
	for k := range order {
		order[k] = k
	}
	sort.SliceStable(order, func(a, b int) bool {
		ka, kb := order[a], order[b]
		if (ka == 0) != (kb == 0) {
			return ka == 0 // best-single first, whatever its recorded share
		}
		return scores[ka].Departures < scores[kb].Departures
	})
	for _, k := range order {
		s := scores[k]
		if k == top {
			break
		}
		lag, se := t.VsBest, t.VsBestSE // best-single: exactly the guard se's test
		if k != 0 {
			if len(s.outcomes) != len(t.outcomes) || len(s.outcomes) == 0 {
				continue // no paired outcomes: not comparable
			}
			lag, se = pairedDiff(t.outcomes, s.outcomes)
		}
		if lag > se {
			continue
		}
		if k == 0 {
			return s.Rule, fmt.Sprintf("the highest accuracy in %s was %s's (%.4f), but its lead over best-single (%.4f), %+.2f ± %.2f points, is within its standard error",
				where, t.Rule, t.Accuracy, s.Accuracy, 100*t.VsBest, 100*t.VsBestSE)
		}
		return s.Rule, fmt.Sprintf("the rule that departs least from best-single (on %.0f%% of the questions) within one standard error of the highest accuracy in %s (%s's %.4f, %.2f ± %.2f points ahead of it): %.4f, %+.2f ± %.2f points against best-single; won %d folds, lost %d",
			100*s.Departures, where, t.Rule, t.Accuracy, 100*lag, 100*se, s.Accuracy, 100*s.VsBest, 100*s.VsBestSE, s.Wins, s.Losses)
	}
	return t.Rule, fmt.Sprintf("the highest accuracy (%.4f) in %s, %+.2f ± %.2f points against best-single (%.4f), more than one standard error, and no rule that departs less from best-single is within one standard error of it; won %d folds, lost %d",
		t.Accuracy, where, 100*t.VsBest, 100*t.VsBestSE, scores[0].Accuracy, t.Wins, t.Losses)
}

// realityCheck is the 84th percentile, over 2,000 resamplings of the
// questions, of the largest studentized centred difference from
// best-single among the candidates (scores[1:]) that differ from it.
func realityCheck(scores []RuleScore, seed uint64) float64 {
	base := scores[0].outcomes
	n := len(base)
	if n == 0 {
		return 1
	}
	type cand struct {
		d        []float64
		mean, se float64
	}
	var cs []cand
	for _, s := range scores[1:] {
		if len(s.outcomes) != n || !(s.VsBestSE > 0) {
			continue
		}
		d := make([]float64, n)
		for k := range d {
			d[k] = s.outcomes[k] - base[k]
		}
		cs = append(cs, cand{d, s.VsBest, s.VsBestSE})
	}
	if len(cs) == 0 {
		return 1
	}
	const B = 2000
	rng := rand.New(rand.NewPCG(seed, 0x7263)) // "rc"
	maxT := make([]float64, B)
	idx := make([]int, n)
	for b := range maxT {
		for k := range idx {
			idx[k] = rng.IntN(n)
		}
		m := math.Inf(-1)
		for _, c := range cs {
			var sum float64
			for _, k := range idx {
				sum += c.d[k]
			}
			m = math.Max(m, (sum/float64(n)-c.mean)/c.se)
		}
		maxT[b] = m
	}
	sort.Float64s(maxT)
	return math.Max(1, maxT[B*8413/10000])
}
