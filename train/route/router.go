package route

import (
	"fmt"
	"math"
	"sort"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
)

// Router picks, for a question embedding q, the model of a JE-IRT checkpoint
// to send the question to, from P_i = σ(q·m_i/‖q‖ − ‖q‖) for every candidate
// model i, by its rule: one of Rules, each a kind in a file rule_NAME.go
// that sets the fields below (MinP, Lambda, Margin, Default) and chooses.
// Build (or Rule.Router) makes one; a Router built by hand applies max-p,
// the highest P among its Candidates.
//
// Ties go to the cheaper model, then the higher P, then the lower row of M,
// so a choice is reproducible.
type Router struct {
	Model *model.JEIRT
	// Candidates are the rows of Model.M to choose from; nil means all.
	Candidates []int
	// Costs is nil or holds the cost of every row of Model.M (NaN for a model
	// that is never a candidate).
	Costs  []float64
	MinP   float64
	Lambda float64
	// Margin and Default (a row of M) make the margin rule. When Default is
	// not among the candidates (for example a model that did not answer a
	// held-out question), the rule falls back to the highest P.
	Margin  float64
	Default int

	// Domain, when set, makes RouteChecked flag questions unlike the
	// training questions (see Domain) and send them to Best, the model
	// that does best on average (a row of M), instead of trusting the
	// rule's extrapolated probabilities; KeepOutOfDomain keeps the rule's
	// choice and only flags them. Best < 0 means no such model: the rule
	// decides.
	Domain          *checkpoint.Domain
	Best            int
	KeepOutOfDomain bool

	// Calibration, when set, replaces every P by the calibrated one
	// (Calibration.Prob; its Prior has a value per row of M): the P the
	// rules compare and the choices report.
	Calibration *Calibration

	// Set by Rule.Router: the rule as asked, as applied (the margin's
	// default named) and its kind, which chooses.
	requested, applied Rule
	kind               *kind
}

var posInf = math.Inf(1)

// ModelP is one candidate's predicted probability of a correct answer.
type ModelP struct {
	Model int     // row of M
	P     float64 // P(correct)
	Cost  float64 // NaN without costs
}

// Choice is the Router's decision for one question.
type Choice struct {
	ModelP
	// Rule is the rule that chose: the spec of the Router's rule
	// (shortlist?k=3, margin?delta=0.05&default=gpt-4o; "max-p" for a
	// Router built by hand), or "out-of-domain".
	Rule string
	// Reason says why the rule chose this model.
	Reason string
	// Fallback is true when the min-p rule found no model with P ≥ MinP and
	// chose the highest P instead.
	Fallback bool
	// Ranked is every candidate, highest P first (ties as for the choice).
	Ranked []ModelP
	// OutOfDomain is true when the Router's Domain found the question
	// unlike every training question; Distance is its cosine distance to
	// the nearest one (NaN without a Domain). An out-of-domain question
	// sent to Router.Best has Rule "out-of-domain".
	OutOfDomain bool
	Distance    float64
}

// Rule names the rule Route applies: the spec of the rule Rule.Router
// built it for; a Router built by hand applies max-p.
func (r *Router) Rule() string {
	if r.kind != nil {
		return r.applied.String()
	}
	return RuleMaxP
}

// Requested is the rule Rule.Router was asked for (the zero Rule for a
// Router built by hand).
func (r *Router) Requested() Rule { return r.requested }

// Applied is the rule Rule.Router built the router for, its margin's
// default model named (the zero Rule for a Router built by hand).
func (r *Router) Applied() Rule { return r.applied }

// ruleKind is the kind that chooses: the rule's, max-p for a Router built
// by hand.
func (r *Router) ruleKind() *kind {
	if r.kind == nil {
		return kindOf(RuleMaxP)
	}
	return r.kind
}

// Check reports a router that cannot route: no candidates, a candidate out of
// range, costs of the wrong length or a missing, negative or NaN cost of a
// candidate, or a Router built by hand with a rule's fields set (it applies
// max-p). The rule's parameter is its kind's to check (Rule.Router).
func (r *Router) Check() error {
	n := r.Model.NumModels()
	if r.Candidates != nil && len(r.Candidates) == 0 || n == 0 {
		return fmt.Errorf("route: no candidate models")
	}
	for _, i := range r.Candidates {
		if i < 0 || i >= n {
			return fmt.Errorf("route: candidate row %d is not a model of the checkpoint (it has %d)", i, n)
		}
	}
	if c := r.Calibration; c != nil && len(c.Prior) != n {
		return fmt.Errorf("route: the calibration has %d priors for %d models", len(c.Prior), n)
	}
	if r.Costs != nil {
		if len(r.Costs) != n {
			return fmt.Errorf("route: %d costs for %d models", len(r.Costs), n)
		}
		for _, i := range r.candidates() {
			if c := r.Costs[i]; !(c >= 0) || math.IsInf(c, 0) {
				return fmt.Errorf("route: model %q has no valid cost (got %v)", r.Model.Models[i], c)
			}
		}
	}
	if r.Margin > 0 {
		if r.Costs != nil {
			return fmt.Errorf("route: the margin rule does not weigh cost; use it without costs")
		}
		if r.Default < 0 || r.Default >= n {
			return fmt.Errorf("route: default row %d is not a model of the checkpoint (it has %d)", r.Default, n)
		}
	}
	if r.kind == nil && (r.MinP != 0 || r.Lambda != 0 || r.Margin != 0) {
		return fmt.Errorf("route: a Router built by hand applies max-p, whatever its MinP, Lambda and Margin; make a rule's router with Rule.Router")
	}
	return nil
}

func (r *Router) candidates() []int {
	if r.Candidates != nil {
		return r.Candidates
	}
	all := make([]int, r.Model.NumModels())
	for i := range all {
		all[i] = i
	}
	return all
}

// Route decides for the question embedding q (length Model.Dim).
func (r *Router) Route(q []float32) Choice {
	return r.Choose(r.Probs(q, nil))
}

// RouteChecked is Route with the out-of-domain check on the question's
// encoder vector x (length Domain.Dim): without a Domain it is Route.
func (r *Router) RouteChecked(q, x []float32) Choice {
	if r.Domain == nil {
		return r.Route(q)
	}
	ch := r.Choose(r.Probs(q, nil))
	ch.Distance = r.Domain.Distance(x)
	ch.OutOfDomain = ch.Distance > r.Domain.Threshold
	if !ch.OutOfDomain || r.KeepOutOfDomain || r.Best < 0 {
		return ch
	}
	for _, mp := range ch.Ranked {
		if mp.Model == r.Best {
			ch.Reason = fmt.Sprintf("the query is unlike every training question (cosine distance %.4f to the nearest, above the threshold %.4f): the best-ranked candidate %s instead of rule %s's choice %s",
				ch.Distance, r.Domain.Threshold, r.Model.Models[mp.Model], ch.Rule, r.Model.Models[ch.Model])
			ch.ModelP, ch.Rule, ch.Fallback = mp, RuleOutOfDomain, false
			break
		}
	}
	return ch
}

// Probs returns P(correct) of every candidate for question embedding q,
// reusing buf when it is long enough.
func (r *Router) Probs(q []float32, buf []ModelP) []ModelP {
	cand := r.candidates()
	if cap(buf) < len(cand) {
		buf = make([]ModelP, len(cand))
	}
	buf = buf[:len(cand)]
	for k, i := range cand {
		c := math.NaN()
		if r.Costs != nil {
			c = r.Costs[i]
		}
		p := 0.0
		if r.Calibration != nil {
			p = r.Calibration.Prob(r.Model, i, q)
		} else {
			p = r.Model.Prob(i, q)
		}
		buf[k] = ModelP{Model: i, P: p, Cost: c}
	}
	return buf
}

// Choose applies the rule to candidates' probabilities (as Probs returns
// them); it sorts ps in place into Choice.Ranked.
func (r *Router) Choose(ps []ModelP) Choice {
	less := func(a, b ModelP) bool { // a before b in the ranking
		if a.P != b.P {
			return a.P > b.P
		}
		if r.Costs != nil && a.Cost != b.Cost {
			return a.Cost < b.Cost
		}
		return a.Model < b.Model
	}
	sort.Slice(ps, func(x, y int) bool { return less(ps[x], ps[y]) })
	ch := Choice{Rule: r.Rule(), Ranked: ps, Distance: math.NaN()}
	best, fallback, why := r.ruleKind().choose(r, ps)
	ch.ModelP, ch.Fallback, ch.Reason = ps[best], fallback, why
	return ch
}

// pickMargin is the margin rule on ps (highest P first): the default model
// unless ps[0]'s P beats its P by at least margin; ps[0] when the default
// is not among ps.
func pickMargin(ps []ModelP, def int, margin float64) int {
	if k := indexOfModel(ps, def); k >= 0 && ps[0].P-ps[k].P < margin {
		return k
	}
	return 0
}

// pickLambda is the highest P − λ·cost, the cheaper on a tie.
func pickLambda(ps []ModelP, lambda float64) int {
	best := -1
	score := func(m ModelP) float64 { return m.P - lambda*m.Cost }
	for k, m := range ps {
		if best < 0 || score(m) > score(ps[best]) ||
			score(m) == score(ps[best]) && m.Cost < ps[best].Cost {
			best = k
		}
	}
	return best
}

// pickMinP is the cheapest with P ≥ minP, or the highest P (fallback).
func pickMinP(ps []ModelP, minP float64) (int, bool) {
	best := -1
	for k, m := range ps {
		if m.P >= minP && (best < 0 || m.Cost < ps[best].Cost) {
			best = k
		}
	}
	if best < 0 {
		return 0, true
	}
	return best, false
}

// indexOfModel is the index in ps of row i of M, or −1.
func indexOfModel(ps []ModelP, i int) int {
	for k, m := range ps {
		if m.Model == i {
			return k
		}
	}
	return -1
}

// Alternatives returns up to top candidates other than the chosen one,
// highest P first.
func (c Choice) Alternatives(top int) []ModelP {
	var out []ModelP
	for _, m := range c.Ranked {
		if len(out) == top {
			break
		}
		if m.Model != c.Model {
			out = append(out, m)
		}
	}
	return out
}
