package route

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/widesum"
)

// RouteEvalOptions configures RouteEval.
type RouteEvalOptions struct {
	// Costs holds a cost for every row of the checkpoint's M (NaN for models
	// not routed to), or is nil.
	Costs []float64
	// MinP and Lambda are the sweeps of the min-p and λ rules (with costs).
	// Nil takes DefaultMinP and a λ grid spanning the costs
	// (DefaultLambdaScale divided by the cost range).
	MinP   []float64
	Lambda []float64
	// Reference is the score that picks the best single model, per row of M
	// (higher is better): its accuracy on the training data. Nil uses each
	// model's mean predicted P(correct) over the checkpoint's known items.
	Reference []float64
	// Margins is the sweep of the margin rule (the default model, here the
	// best single one, unless another beats its P by at least δ). Nil takes
	// DefaultMargins; +Inf (the best single model) is added when missing.
	Margins []float64
	// TunedMargin, when set, adds the point "router,margin-val": the margin
	// rule at this δ (chosen on validation questions with TuneMargin).
	TunedMargin *float64
	// Shortlists is the sweep of the shortlist rule: the highest P among
	// the T observed models with the highest Reference. Nil takes
	// DefaultShortlists.
	Shortlists []int
	// BenchmarkReference, with item groups in the data (r.ItemGroup), adds
	// the policy per-benchmark-best: for a question of benchmark g, the
	// model with the highest BenchmarkReference[g] (its training accuracy
	// on g; the next one when it is unobserved), the JE-IRT paper's
	// per-benchmark baseline. A benchmark it lacks falls back to Reference.
	BenchmarkReference map[string][]float64
	// Default, when set, adds the point "router,default": this rule (the
	// checkpoint's recorded default) as jeirt route applies it, with the
	// questions OutOfDomain flags sent to best-single's pick.
	Default *Rule
	// OutOfDomain, when set, says for every item of r whether the
	// out-of-domain check flags it (only the default point uses it).
	OutOfDomain []bool
	// Calibration, when set, is the calibrated P every router point
	// applies (Router.Calibration); best-single and the other policies
	// do not use P.
	Calibration *Calibration
	// Outcomes keeps, in every point, the label of the model chosen for
	// each routed question (random's expected label), in item order: the
	// paired differences that Intervals and CrossValidation need.
	Outcomes bool
}

// DefaultShortlists is the shortlist sweep of route eval.
var DefaultShortlists = []int{2, 3, 5, 10}

// Shortlist returns the t rows of cand with the highest reference score,
// best first (the earlier row of cand on ties); all of cand when t ≤ 0 or
// t ≥ len(cand).
func Shortlist(ref []float64, cand []int, t int) []int {
	out := append([]int(nil), cand...)
	sort.SliceStable(out, func(a, b int) bool { return ref[out[a]] > ref[out[b]] })
	if t > 0 && t < len(out) {
		out = out[:t]
	}
	return out
}

// DefaultMinP is the min-p sweep of route eval.
var DefaultMinP = []float64{0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95}

// DefaultLambdaScale, divided by the cost range, is the λ sweep of route eval.
var DefaultLambdaScale = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5}

// DefaultMargins is the margin sweep of route eval. It holds 0 (the max-P
// rule) and +Inf (always the best single model), so the δ that TuneMargin
// picks is never worse on the tuning questions than either.
var DefaultMargins = []float64{0, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, math.Inf(1)}

// TuneMargin returns the δ of the margin rule with the highest accuracy
// among pts (RouteEval's points on validation questions), the larger δ on a
// tie: the router leaves the best single model only where that paid off.
func TuneMargin(pts []RoutePoint) (float64, error) {
	best := -1
	for k, p := range pts {
		if p.Policy != "router" || p.Rule != "margin" {
			continue
		}
		if best < 0 || p.Accuracy > pts[best].Accuracy || p.Accuracy == pts[best].Accuracy && p.Param > pts[best].Param {
			best = k
		}
	}
	if best < 0 {
		return 0, fmt.Errorf("route eval: no margin points to tune on")
	}
	return pts[best].Param, nil
}

// RouteEval routes every question of r (held-out questions with the
// responses of the checkpoint's models; q holds each item's embedding) and
// scores each policy by the label of the model it picks. A question is
// routed among the models observed on it; models of r that the checkpoint
// lacks are ignored. Policies:
//
//   - router: the Router's choice (max-p, every shortlist size T, the tuned
//     margin, every margin δ; with costs every min-p and λ of the sweeps); the
//     margin rule's default model is best-single's pick for the question, and
//     the shortlist rule takes the highest P among the T observed models that
//     best-single ranks first;
//   - best-single: the model with the highest Reference (the next one when it is unobserved);
//   - per-benchmark-best (with BenchmarkReference): the same within the question's benchmark;
//   - random: a uniformly random observed model (its expected accuracy and cost);
//   - oracle: a model that answers correctly, the cheapest such (any, if none does);
//   - cheapest (with costs): the cheapest observed model.
func RouteEval(m *model.JEIRT, r *model.Responses, q [][]float32, opt RouteEvalOptions) ([]RoutePoint, error) {
	ckRow := nameIndex(m.Models)
	rowOf := make([]int, r.NumModels()) // r's model → row of M, or −1
	var cand []int
	for i, name := range r.Models {
		rowOf[i] = -1
		if k, ok := ckRow[name]; ok {
			rowOf[i] = k
			cand = append(cand, k)
		}
	}
	if len(cand) == 0 {
		return nil, fmt.Errorf("route eval: none of the %d models of the data is in the checkpoint", r.NumModels())
	}
	costs := opt.Costs
	if costs != nil {
		for _, k := range cand {
			if !(costs[k] >= 0) {
				return nil, fmt.Errorf("route eval: model %q has no cost", m.Models[k])
			}
		}
	}
	ref := opt.Reference
	if ref == nil {
		ref = MeanPredictedP(m)
	}
	bestOrder := Shortlist(ref, cand, 0)

	type router struct {
		pt        *RoutePoint
		rt        Router
		shortlist int  // > 0: candidates are the first shortlist observed models of bestOrder
		ood       bool // flagged questions go to best-single's pick
	}
	var routers []router
	// Every point is a rule made a router by Rule.Router, as jeirt route
	// makes it; the candidates, the default and Best are then set per
	// question (the models that answered it).
	add := func(label string, param float64, rule Rule) (*router, error) {
		rt, err := rule.Router(m, Setting{Candidates: cand, Reference: ref, Costs: costs})
		if err != nil {
			return nil, fmt.Errorf("route eval: rule %s: %w", rule, err)
		}
		t := rule.Among
		if rule.Name == RuleShortlist {
			t = int(rule.Param)
		}
		routers = append(routers, router{pt: &RoutePoint{Policy: "router", Rule: label, Param: param}, rt: *rt, shortlist: t})
		return &routers[len(routers)-1], nil
	}
	if d := opt.Default; d != nil {
		if opt.OutOfDomain != nil && len(opt.OutOfDomain) != r.NumItems() {
			return nil, fmt.Errorf("route eval: %d out-of-domain flags for %d items", len(opt.OutOfDomain), r.NumItems())
		}
		if d.WeighsCost() && costs == nil {
			return nil, fmt.Errorf("route eval: the default rule %s weighs cost; give the models' prices", d)
		}
		def, err := add("default", math.NaN(), *d)
		if err != nil {
			return nil, err
		}
		def.pt.Spec, def.ood = d.String(), opt.OutOfDomain != nil
	}
	span := 1.0 // the candidates' cost range, for the grids of the rules that weigh cost
	if costs != nil {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, k := range cand {
			lo, hi = math.Min(lo, costs[k]), math.Max(hi, costs[k])
		}
		if hi > lo {
			span = hi - lo
		}
	}
	// Each rule's sweep, in the rules' order (a rule that weighs cost only
	// with costs).
	for _, k := range slices.SortedStableFunc(slices.Values(kinds), func(a, b *kind) int { return a.order - b.order }) {
		if k.sweep == nil || k.costs && costs == nil {
			continue
		}
		pts, err := k.sweep(opt, span)
		if err != nil {
			return nil, err
		}
		for _, p := range pts {
			if _, err := add(p.label, p.param, p.rule); err != nil {
				return nil, err
			}
		}
	}
	best := &RoutePoint{Policy: "best-single", Rule: "best-single", Param: math.NaN(), Chosen: m.Models[bestOrder[0]]}
	random := &RoutePoint{Policy: "random", Rule: "random", Param: math.NaN()}
	oracle := &RoutePoint{Policy: "oracle", Rule: "oracle", Param: math.NaN()}
	cheapest := &RoutePoint{Policy: "cheapest", Rule: "cheapest", Param: math.NaN()}
	all := []*RoutePoint{best, random, oracle}
	var perBench *RoutePoint
	benchOrder := map[string][]int{}
	if opt.BenchmarkReference != nil && r.ItemGroup != nil {
		perBench = &RoutePoint{Policy: "per-benchmark-best", Rule: "per-benchmark-best", Param: math.NaN()}
		all = append(all, perBench)
		for g, ref := range opt.BenchmarkReference {
			if len(ref) != m.NumModels() {
				return nil, fmt.Errorf("route eval: benchmark %q has %d reference scores for %d models", g, len(ref), m.NumModels())
			}
			benchOrder[g] = Shortlist(ref, cand, 0)
		}
	}
	if costs != nil {
		all = append(all, cheapest)
	}
	if c := opt.Calibration; c != nil && len(c.Prior) != m.NumModels() {
		return nil, fmt.Errorf("route eval: the calibration has %d priors for %d models", len(c.Prior), m.NumModels())
	}
	for k := range routers {
		routers[k].rt.Calibration = opt.Calibration
		all = append(all, routers[k].pt)
	}
	// Cost sums in widesum.Sum, which cannot overflow: costs near 1e308 gave a
	// total and a mean cost of +Inf.
	sums := map[*RoutePoint]*widesum.Sum{}
	sumOf := func(pt *RoutePoint) *widesum.Sum {
		if sums[pt] == nil {
			sums[pt] = &widesum.Sum{}
		}
		return sums[pt]
	}
	cost := func(k int) float64 {
		if costs == nil {
			return 0
		}
		return costs[k]
	}

	byItem := r.ByItem()
	// label is each model's observed score on the item: 0/1, or the fraction
	// k/n of a cell of several trials or a graded score (so a policy's
	// "accuracy" is its mean score); −1 unobserved.
	label := make([]float64, m.NumModels())
	for k := range label {
		label[k] = -1
	}
	var ps []ModelP
	var ranked []int
	for j := 0; j < r.NumItems(); j++ {
		var obs []int
		for _, c := range byItem.Row(j) {
			if k := rowOf[r.Model[c]]; k >= 0 && label[k] < 0 {
				label[k] = r.ScoreAt(int(c))
				obs = append(obs, k)
			}
		}
		if len(obs) == 0 {
			continue
		}
		if q[j] == nil {
			return nil, fmt.Errorf("route eval: item %q has no question embedding", r.Items[j])
		}
		score := func(pt *RoutePoint, k int) {
			pt.Accuracy += label[k]
			sumOf(pt).Add(cost(k))
			pt.Items++
			if opt.Outcomes {
				pt.Outcomes = append(pt.Outcomes, float64(label[k]))
			}
		}
		ranked = ranked[:0] // the observed models, best reference first
		for _, k := range bestOrder {
			if label[k] >= 0 {
				ranked = append(ranked, k)
			}
		}
		def := ranked[0]
		score(best, def)
		if perBench != nil {
			pick := def
			if order, ok := benchOrder[r.ItemGroup[j]]; ok {
				for _, k := range order {
					if label[k] >= 0 {
						pick = k
						break
					}
				}
			}
			score(perBench, pick)
		}
		var right float64
		var sumCost widesum.Sum
		orc, cheap := -1, -1
		for _, k := range obs {
			right += label[k]
			sumCost.Add(cost(k))
			better := orc < 0 || label[k] > label[orc] || label[k] == label[orc] && cost(k) < cost(orc)
			if better {
				orc = k
			}
			if cheap < 0 || cost(k) < cost(cheap) {
				cheap = k
			}
		}
		random.Accuracy += right / float64(len(obs))
		sumOf(random).Add(sumCost.Mean(len(obs)))
		random.Items++
		if opt.Outcomes {
			random.Outcomes = append(random.Outcomes, right/float64(len(obs)))
		}
		score(oracle, orc)
		score(cheapest, cheap)
		for _, rt := range routers {
			rt.rt.Candidates = obs
			if rt.shortlist > 0 {
				rt.rt.Candidates = ranked[:min(rt.shortlist, len(ranked))]
			}
			rt.rt.Default, rt.rt.Best = def, def
			if rt.ood && opt.OutOfDomain[j] {
				rt.pt.Flagged++
				score(rt.pt, def)
				continue
			}
			ps = rt.rt.Probs(q[j], ps)
			ch := rt.rt.Choose(ps)
			if ch.Fallback {
				rt.pt.Fallbacks++
			}
			if ch.Model != def {
				rt.pt.Departures++
			}
			score(rt.pt, ch.Model)
		}
		for _, k := range obs {
			label[k] = -1
		}
	}
	if best.Items == 0 {
		return nil, fmt.Errorf("route eval: no question has a response from a model of the checkpoint")
	}
	out := make([]RoutePoint, len(all))
	for k, pt := range all {
		pt.TotalCost, pt.MeanCost = sumOf(pt).Total(), sumOf(pt).Mean(pt.Items)
		pt.Accuracy /= float64(pt.Items)
		if costs == nil {
			pt.TotalCost, pt.MeanCost = math.NaN(), math.NaN()
		} else if math.IsInf(pt.TotalCost, 0) {
			return nil, fmt.Errorf("route eval: %s %s: the total cost of its %d questions is beyond the float64 range (mean cost %g): give the costs in a larger unit", pt.Policy, pt.Rule, pt.Items, pt.MeanCost)
		}
		pt.AccuracySE, pt.VsBest, pt.VsBestSE = math.NaN(), math.NaN(), math.NaN()
		out[k] = *pt
	}
	return out, nil
}

// MeanPredictedP returns each model's mean P(correct) over the checkpoint's
// questions: the best-single reference when no training data is at hand.
func MeanPredictedP(m *model.JEIRT) []float64 {
	ref := make([]float64, m.NumModels())
	for i := range ref {
		for j := 0; j < m.NumItems(); j++ {
			ref[i] += m.Prob(i, m.ItemEmbedding(j))
		}
		if m.NumItems() > 0 {
			ref[i] /= float64(m.NumItems())
		}
	}
	return ref
}

// BestSingle returns the row of M with the highest reference score among
// cand (all rows when nil), the first on ties.
func BestSingle(ref []float64, cand []int) int {
	best := -1
	consider := func(i int) {
		if best < 0 || ref[i] > ref[best] {
			best = i
		}
	}
	if cand == nil {
		for i := range ref {
			consider(i)
		}
	}
	for _, i := range cand {
		consider(i)
	}
	return best
}

func nameIndex(names []string) map[string]int {
	ix := make(map[string]int, len(names))
	for i, n := range names {
		ix[n] = i
	}
	return ix
}
