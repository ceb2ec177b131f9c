package route

import (
	"context"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
)

// topicSet is 60 questions, 24 of topic X (answered by model b only) and 36
// of topic Y (by a only); c and d answer none. The map knows the topics:
// a question of X has q = (1, 0), where b's P is high and a's low, Y the
// reverse; c and d have a low P everywhere.
func topicSet() (*model.Responses, *model.JEIRT) {
	r := &model.Responses{Models: []string{"a", "b", "c", "d"}}
	logit := func(p float64) float32 { return float32(1 + math.Log(p/(1-p))) }
	m := &model.JEIRT{Dim: 2, Models: r.Models,
		M: []float32{logit(0.2), logit(0.8), logit(0.9), logit(0.3), logit(0.1), logit(0.1), logit(0.1), logit(0.1)}}
	for j := 0; j < 60; j++ {
		r.Items = append(r.Items, "q"+strconv.Itoa(j))
		x := j%5 < 2 // 24 of 60
		if x {
			m.Q = append(m.Q, 1, 0)
		} else {
			m.Q = append(m.Q, 0, 1)
		}
		for i := range r.Models {
			y := uint8(0)
			if i == 0 && !x || i == 1 && x {
				y = 1
			}
			r.Model, r.Item, r.Label = append(r.Model, int32(i)), append(r.Item, int32(j)), append(r.Label, y)
		}
	}
	m.Items = r.Items
	return r, m
}

// On a set whose best rule is known (the map tells the topics apart, so
// routing among the two useful models is always right and best-single is
// right on Y only), cross-validation finds it: the first of the perfect
// rules, shortlist?k=2, with best-single at 36/60 and the paired standard
// error of the difference exact.
func TestCrossValidationKnownBestRule(t *testing.T) {
	r, m := topicSet()
	refits := 0
	cv := CrossValidation{Folds: 5, Seed: 1, Refit: func(ctx context.Context, fold int, train *model.Responses) (*model.JEIRT, error) {
		refits++
		for _, j := range train.Item { // the fold's questions are not in its training cells
			if train.Items[j] == "" {
				t.Fatal("bad item")
			}
		}
		return m, nil
	}}
	res, err := cv.Run(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if refits != 5 || res.Completed != 5 || res.Questions != 60 {
		t.Fatalf("%d refits, %d folds completed, %d questions", refits, res.Completed, res.Questions)
	}
	if res.Rule.String() != "shortlist?k=2" {
		t.Errorf("chose %s (%s), want shortlist?k=2", res.Rule, res.Why)
	}
	score := map[string]RuleScore{}
	for _, s := range res.Scores {
		score[s.Rule.String()] = s
	}
	if res.Scores[0].Rule.Name != RuleBestSingle || score["best-single"].Accuracy != 0.6 {
		t.Errorf("best-single first at 0.6: %+v", res.Scores[0])
	}
	s := score["shortlist?k=2"]
	// d = 1 on the 24 X questions, 0 on the 36 Y: sd/√n = sqrt(0.4·0.6/59).
	if s.Accuracy != 1 || math.Abs(s.VsBest-0.4) > 1e-12 || math.Abs(s.VsBestSE-math.Sqrt(0.24/59)) > 1e-12 || s.Wins != 5 || s.Losses != 0 {
		t.Errorf("shortlist?k=2: %+v", s)
	}
	// max-p over all four: c's P is never the highest; it scores 1 too but comes later.
	if score["max-p"].Accuracy != 1 || score["margin?delta=0.2"].Accuracy != 1 {
		t.Errorf("max-p %+v, margin 0.2 %+v", score["max-p"], score["margin?delta=0.2"])
	}
	if !strings.HasPrefix(res.Why, "the highest accuracy (1.0000) in 5-fold cross-validation over 60 training questions, +40.00 ± 6.38 points") {
		t.Errorf("why: %s", res.Why)
	}
}

// Where the map is noise, best-single is kept; an interrupted
// cross-validation keeps best-single and says so.
func TestCrossValidationKeepsBestSingle(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 3))
	r := &model.Responses{Models: []string{"a", "b", "c"}}
	m := &model.JEIRT{Dim: 3, Models: r.Models}
	for i := 0; i < 3*3; i++ {
		m.M = append(m.M, float32(rng.NormFloat64()))
	}
	for j := 0; j < 200; j++ {
		r.Items = append(r.Items, "q"+strconv.Itoa(j))
		for k := 0; k < 3; k++ {
			m.Q = append(m.Q, float32(rng.NormFloat64()))
		}
		for i, p := range []float64{0.8, 0.5, 0.5} {
			y := uint8(0)
			if rng.Float64() < p {
				y = 1
			}
			r.Model, r.Item, r.Label = append(r.Model, int32(i)), append(r.Item, int32(j)), append(r.Label, y)
		}
	}
	m.Items = r.Items
	refit := func(ctx context.Context, fold int, train *model.Responses) (*model.JEIRT, error) { return m, nil }
	res, err := CrossValidation{Refit: refit}.Run(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if res.Rule.Name != RuleBestSingle || res.Folds != DefaultFolds || !strings.HasPrefix(res.Why, "no rule beat its accuracy") {
		t.Errorf("noise map: chose %s (%s)", res.Rule, res.Why)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stop := func(c context.Context, fold int, train *model.Responses) (*model.JEIRT, error) {
		if fold == 2 {
			cancel()
		}
		return m, nil
	}
	res, err = CrossValidation{Refit: stop}.Run(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if res.Completed != 2 || res.Rule.Name != RuleBestSingle || !strings.Contains(res.Why, "interrupted after 2 of 5 folds") {
		t.Errorf("interrupted: %d folds, %s (%s)", res.Completed, res.Rule, res.Why)
	}
	few := r.Subset([]int32{0, 1, 2, 3, 4, 5})
	if res, err := (CrossValidation{Refit: refit}).Run(context.Background(), few); err != nil || res.Rule.Name != RuleBestSingle || !strings.Contains(res.Why, "too few") {
		t.Errorf("two questions: %v, %+v", err, res)
	}
}

// gainLossSet is 100 questions where model a is right on the 70 from q30
// on and b only on q0..q(gain−1); the map flags q0..q(gain−1) and
// q50..q(50+loss−1) (q = (1, 0): b's P 0.9 against a's 0.5; elsewhere 0.2
// against 0.8), so every rule but best-single routes the flagged questions
// to b and scores 0.70 + (gain − loss)/100.
func gainLossSet(gain, loss int) (*model.Responses, *model.JEIRT) {
	r := &model.Responses{Models: []string{"a", "b"}}
	logit := func(p float64) float32 { return float32(1 + math.Log(p/(1-p))) }
	m := &model.JEIRT{Dim: 2, Models: r.Models, M: []float32{logit(0.5), logit(0.8), logit(0.9), logit(0.2)}}
	for j := 0; j < 100; j++ {
		r.Items = append(r.Items, "q"+strconv.Itoa(j))
		if j < gain || j >= 50 && j < 50+loss {
			m.Q = append(m.Q, 1, 0)
		} else {
			m.Q = append(m.Q, 0, 1)
		}
		for i, y := range []bool{j >= 30, j < gain} {
			r.Model, r.Item, r.Label = append(r.Model, int32(i)), append(r.Item, int32(j)), append(r.Label, map[bool]uint8{true: 1}[y])
		}
	}
	m.Items = r.Items
	return r, m
}

// Cross-validation keeps best-single when the best other rule beats it by
// less than the standard error of the paired difference: +2 points (4
// questions gained, 2 lost) with a standard error of sqrt((6 − 100·0.02²)/
// 99/100) = 2.45 points. With 8 gained and 2 lost (+6 ± 3.12 points) the
// rule is chosen.
func TestCrossValidationWithinSEKeepsBestSingle(t *testing.T) {
	for _, c := range []struct {
		gain, loss int
		want       string
		diff, se   float64
	}{
		{4, 2, "best-single", 0.02, math.Sqrt((6 - 100*0.02*0.02) / 99 / 100)},
		{8, 2, "shortlist?k=2", 0.06, math.Sqrt((10 - 100*0.06*0.06) / 99 / 100)},
	} {
		r, m := gainLossSet(c.gain, c.loss)
		res, err := CrossValidation{Seed: 7, Refit: func(context.Context, int, *model.Responses) (*model.JEIRT, error) { return m, nil }}.Run(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		var top RuleScore
		for _, s := range res.Scores[1:] {
			if s.Accuracy > top.Accuracy {
				top = s
			}
		}
		if res.Rule.String() != c.want || res.Scores[0].Accuracy != 0.7 || top.Rule.String() != "shortlist?k=2" ||
			math.Abs(top.Accuracy-0.7-c.diff) > 1e-12 || math.Abs(top.VsBest-c.diff) > 1e-12 || math.Abs(top.VsBestSE-c.se) > 1e-12 {
			t.Errorf("+%d −%d: chose %s (%s); top %+v, want %s with %+.4f ± %.4f", c.gain, c.loss, res.Rule, res.Why, top, c.want, c.diff, c.se)
		}
		if c.want == "best-single" && !strings.Contains(res.Why, "within its standard error") {
			t.Errorf("why: %s", res.Why)
		}
	}
}

// With the guard se, a rule is preferred to best-single only when it beats
// it by more than the standard error of the difference.
func TestChoose(t *testing.T) {
	bs := RuleScore{Rule: Rule{Name: RuleBestSingle, Param: math.NaN()}, Accuracy: 0.70}
	sl := func(acc, se float64) RuleScore {
		return RuleScore{Rule: Rule{Name: RuleShortlist, Param: 3}, Accuracy: acc, VsBest: acc - 0.70, VsBestSE: se}
	}
	if r, why := Choose([]RuleScore{bs, sl(0.71, 0.02)}, GuardSE, "5-fold cross-validation over 100 training questions", 1); r.Name != RuleBestSingle || !strings.Contains(why, "within its standard error") {
		t.Errorf("+1 ± 2 points: %s (%s)", r, why)
	}
	if r, _ := Choose([]RuleScore{bs, sl(0.75, 0.02)}, GuardSE, "5-fold cross-validation over 100 training questions", 1); r.String() != "shortlist?k=3" {
		t.Errorf("+5 ± 2 points: %s", r)
	}
	if r, why := Choose([]RuleScore{bs, sl(0.69, 0.02)}, GuardSE, "5-fold cross-validation over 100 training questions", 1); r.Name != RuleBestSingle || !strings.Contains(why, "no rule beat") {
		t.Errorf("-1 point: %s (%s)", r, why)
	}
}

// scoreOf is a candidate's RuleScore from its per-question outcomes and
// best-single's, as CrossValidation.Run fills it.
func scoreOf(rule Rule, departures float64, y, best []float64) RuleScore {
	s := RuleScore{Rule: rule, Departures: departures, outcomes: y}
	s.Accuracy, s.AccuracySE = meanSE(y)
	s.VsBest, s.VsBestSE = pairedDiff(y, best)
	return s
}

// The one-standard-error rule (the default guard) takes, among the rules
// within one standard error of the best, the one that departs least from
// best-single. On 100 questions best-single is right on q30..q99 (0.70);
// shortlist?k=2 routes 10% of the questions away and gains q0..q9 (0.80,
// +10 ± 3.02 points, clearly better); margin?delta=0.2 departs on 5% and
// changes no label (0.70). Max-p departs on 40%: with 3 more gains and 2
// losses over the shortlist (0.81, 1 ± 2.24 points ahead of it) its lead
// is luck and the shortlist is kept, where the guard se takes max-p; with
// 12 more gains (0.92, 12 ± 3.27 points ahead) max-p is chosen.
func TestChooseOneSE(t *testing.T) {
	bs := make([]float64, 100)
	for j := 30; j < 100; j++ {
		bs[j] = 1
	}
	with := func(base []float64, gain, loss []int) []float64 {
		y := append([]float64(nil), base...)
		for _, j := range gain {
			y[j] = 1
		}
		for _, j := range loss {
			y[j] = 0
		}
		return y
	}
	span := func(a, b int) []int {
		var js []int
		for j := a; j < b; j++ {
			js = append(js, j)
		}
		return js
	}
	sl := with(bs, span(0, 10), nil)
	where := "5-fold cross-validation over 100 training questions"
	for _, c := range []struct {
		maxP        []float64
		want, se    string
		why         string
		lead, lead2 float64
	}{
		{with(sl, span(10, 13), []int{50, 51}), "shortlist?k=2", "max-p", "the rule that departs least from best-single (on 10% of the questions) within one standard error of the highest accuracy in " + where + " (max-p's 0.8100, 1.00 ± 2.25 points ahead of it): 0.8000, +10.00 ± 3.02 points against best-single", 0.01, math.Sqrt((5 - 100*0.01*0.01) / 99 / 100)},
		{with(sl, span(10, 22), nil), "max-p", "max-p", "the highest accuracy (0.9200) in " + where + ", +22.00 ± 4.16 points against best-single (0.7000), more than one standard error, and no rule that departs less from best-single is within one standard error of it", 0.12, math.Sqrt((12 - 100*0.12*0.12) / 99 / 100)},
	} {
		scores := []RuleScore{
			scoreOf(Rule{Name: RuleBestSingle, Param: math.NaN()}, 0, bs, bs),
			scoreOf(Rule{Name: RuleShortlist, Param: 2}, 0.10, sl, bs),
			scoreOf(Rule{Name: RuleMargin, Param: 0.2}, 0.05, bs, bs),
			scoreOf(Rule{Name: RuleMaxP, Param: math.NaN()}, 0.40, c.maxP, bs),
		}
		if lead, se := pairedDiff(c.maxP, sl); math.Abs(lead-c.lead) > 1e-12 || math.Abs(se-c.lead2) > 1e-12 {
			t.Fatalf("max-p over the shortlist: %+.4f ± %.4f, want %+.4f ± %.4f", lead, se, c.lead, c.lead2)
		}
		if r, why := Choose(scores, "", where, 1); r.String() != c.want || !strings.HasPrefix(why, c.why) {
			t.Errorf("one-se: %s (%s), want %s (%s)", r, why, c.want, c.why)
		}
		if r, _ := Choose(scores, GuardOneSE, where, 1); r.String() != c.want {
			t.Errorf("one-se by name: %s, want %s", r, c.want)
		}
		if r, _ := Choose(scores, GuardSE, where, 1); r.String() != c.se {
			t.Errorf("se: %s, want %s", r, c.se)
		}
	}
	// Best-single is kept when the best rule's lead over it is within its
	// standard error (+2 gains, 1 loss: +1 ± 1.74 points).
	scores := []RuleScore{
		scoreOf(Rule{Name: RuleBestSingle, Param: math.NaN()}, 0, bs, bs),
		scoreOf(Rule{Name: RuleMaxP, Param: math.NaN()}, 0.4, with(bs, []int{0, 1}, []int{99}), bs),
	}
	if r, why := Choose(scores, "", where, 1); r.Name != RuleBestSingle || !strings.Contains(why, "+1.00 ± 1.74 points, is within its standard error") {
		t.Errorf("+1 ± 1.74 points: %s (%s)", r, why)
	}
}

// simScores is one simulated cross-validation over n questions:
// best-single right on each with probability 0.75, and per rule k a share
// dep[k]/2 of questions where it departs and the outcome changes, by +1
// with probability gain[k] and −1 otherwise (the paired differences are
// all Choose looks at): the rule's true lead is dep[k]·(2·gain[k] − 1)/2.
func simScores(rng *rand.Rand, n int, dep, gain []float64) []RuleScore {
	bs := make([]float64, n)
	for j := range bs {
		if rng.Float64() < 0.75 {
			bs[j] = 1
		}
	}
	scores := []RuleScore{scoreOf(Rule{Name: RuleBestSingle, Param: math.NaN()}, 0, bs, bs)}
	for k := range dep {
		y := append([]float64(nil), bs...)
		for j := range y {
			if rng.Float64() < dep[k]/2 {
				if rng.Float64() < gain[k] {
					y[j]++
				} else {
					y[j]--
				}
			}
		}
		scores = append(scores, scoreOf(Rule{Name: RuleShortlist, Param: float64(k + 2)}, dep[k], y, bs))
	}
	return scores
}

// On simulated cross-validations of 350 questions where the truth is
// known: with no rule better than best-single, the one-standard-error
// rule and the guard se leave best-single equally often (their decision to
// leave it is the same), but one-se picks rules that depart less from it.
// With one simple rule
// truly better (departing on 10%, +3 points) among five complex ones
// that are no better (departing on 30% to 90%, noisier), se often takes a
// complex one that was lucky, while one-se takes the simple rule in most
// runs, and the true lead of its picks is higher.
func TestChooseOneSESimulated(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const n, sims = 350, 400
	dep := []float64{0.1, 0.3, 0.45, 0.6, 0.75, 0.9}
	trueLead := func(k int, gain []float64) float64 { return dep[k] * (2*gain[k] - 1) / 2 }
	null := []float64{0.5, 0.5, 0.5, 0.5, 0.5, 0.5}
	left := 0
	var dep1, dep2 float64 // summed departures of the picks
	for s := 0; s < sims; s++ {
		scores := simScores(rng, n, dep, null)
		r1, _ := Choose(scores, "", "", 1)
		r2, _ := Choose(scores, GuardSE, "", 1)
		if (r1.Name == RuleBestSingle) != (r2.Name == RuleBestSingle) {
			t.Fatalf("run %d: one-se chose %s, se %s", s, r1, r2)
		}
		if r1.Name != RuleBestSingle {
			left++
			dep1 += dep[int(r1.Param)-2]
			dep2 += dep[int(r2.Param)-2]
		}
	}
	// The best of six noisy leads clears one standard error in about half
	// the runs; one-se then takes the rules nearer best-single.
	if left < sims/4 || left > 3*sims/4 || !(dep1 < 0.8*dep2) {
		t.Errorf("no better rule: best-single left in %d of %d runs; mean departures of the picks %.3f (one-se), %.3f (se)", left, sims, dep1/float64(left), dep2/float64(left))
	}
	better := []float64{0.8, 0.5, 0.5, 0.5, 0.5, 0.5}
	var simple, lead1, lead2 float64
	for s := 0; s < sims; s++ {
		scores := simScores(rng, n, dep, better)
		r1, _ := Choose(scores, "", "", 1)
		r2, _ := Choose(scores, GuardSE, "", 1)
		if r1.Name == RuleShortlist {
			lead1 += trueLead(int(r1.Param)-2, better) / sims
			if r1.Param == 2 {
				simple++
			}
		}
		if r2.Name == RuleShortlist {
			lead2 += trueLead(int(r2.Param)-2, better) / sims
		}
	}
	if simple < 0.6*sims || !(lead1 > lead2) {
		t.Errorf("a better simple rule: one-se took it in %.0f of %d runs; true lead of the picks %.4f (one-se), %.4f (se)", simple, sims, lead1, lead2)
	}
	t.Logf("no better rule: best-single left in %d of %d runs, mean departures of the picks %.3f (one-se), %.3f (se); a better simple rule: one-se took it in %.0f, true lead %.4f (one-se), %.4f (se)",
		left, sims, dep1/float64(left), dep2/float64(left), simple, lead1, lead2)
}

func TestParseRule(t *testing.T) {
	for _, s := range []string{"best-single", "max-p", "shortlist?k=3", "margin?delta=0.05", "lambda?lambda=0.1"} {
		r, err := ParseRule(s)
		if err != nil || r.String() != s {
			t.Errorf("%s: %v, %v", s, r, err)
		}
	}
	// max-p?k=1 and shortlist (k=3) read as shortlists: TestRuleEquivalents.
	for _, s := range []string{"best", "shortlist?k=2.5", "shortlist?delta=2", "margin?delta=-1", "margin?delta=inf"} {
		if _, err := ParseRule(s); err == nil {
			t.Errorf("%s accepted", s)
		}
	}
}

// Intervals over one split are the standard errors over its questions;
// Combine over splits averages and widens them by Nadeau and Bengio's
// correction, and counts wins and losses per split.
func TestIntervalsAndCombine(t *testing.T) {
	split := func(best, rule []float64) []RoutePoint {
		mean := func(x []float64) float64 { m, _ := meanSE(x); return m }
		return []RoutePoint{
			{Policy: "best-single", Rule: "best-single", Param: math.NaN(), Accuracy: mean(best), Items: len(best), Outcomes: best},
			{Policy: "router", Rule: "default", Param: math.NaN(), Spec: "shortlist?k=3", Accuracy: mean(rule), Items: len(rule), Outcomes: rule},
		}
	}
	one := split([]float64{1, 0, 1, 0}, []float64{1, 1, 1, 0})
	Intervals(one)
	// labels 1,1,1,0: sd = 0.5, se = 0.25; d = 0,1,0,0: mean 0.25, sd 0.5, se 0.25.
	if p := one[1]; p.AccuracySE != 0.25 || p.VsBest != 0.25 || p.VsBestSE != 0.25 || p.Wins != 1 || p.Losses != 0 {
		t.Errorf("one split: %+v", p)
	}
	splits := [][]RoutePoint{
		split([]float64{1, 0}, []float64{1, 1}), // +0.5
		split([]float64{1, 1}, []float64{1, 1}), // 0
		split([]float64{1, 1}, []float64{0, 1}), // -0.5
		split([]float64{0, 0}, []float64{1, 0}), // +0.5
	}
	splits[3][1].Spec = "best-single"
	got := Combine(splits, 0.25)
	d := got[1]
	// diffs +0.5, 0, −0.5, +0.5: mean 0.125, s² = 0.6875/3 (n−1), se² = s²(1/4 + 0.25).
	if math.Abs(d.VsBest-0.125) > 1e-12 || math.Abs(d.VsBestSE-math.Sqrt(0.6875/3*0.5)) > 1e-12 || d.Wins != 2 || d.Losses != 1 || d.Items != 8 {
		t.Errorf("combined: %+v", d)
	}
	if d.Spec != "shortlist?k=3*3|best-single*1" {
		t.Errorf("spec %q", d.Spec)
	}
	if got[0].Wins != 0 || got[0].VsBest != 0 {
		t.Errorf("best-single against itself: %+v", got[0])
	}
}
