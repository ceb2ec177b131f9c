package serve

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jeirt/jeirt/encoder"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/routefile"
	"github.com/jeirt/jeirt/train/jeirt"
	"github.com/jeirt/jeirt/train/route"
)

// state is one loaded checkpoint with everything a request needs. It is
// never modified after load: a reload or an onboarding builds a new state and
// swaps the Server's pointer, so a request in flight keeps the state it began
// with.
type state struct {
	dir    string
	ck     *checkpoint.Checkpoint
	enc    encoder.Encoder
	encMu  *sync.Mutex // serialises Encode for encoders not known to be safe for concurrent use
	costs  []float64   // per row of M; nil without costs (NaN: a model without a price)
	ref    []float64   // mean predicted P over the checkpoint's questions (route.MeanPredictedP)
	rank   []float64   // what ranks the models for routing (route.Reference: the recorded training accuracies, else ref)
	index  map[string]int
	loaded time.Time
	// domain is the checkpoint's out-of-domain reference (nil for a
	// checkpoint written without one).
	domain *checkpoint.Domain
	// calib is the calibrated P the checkpoint records (route.CalibrationOf;
	// nil: the map's own P).
	calib *route.Calibration
}

// loadState reads the checkpoint in dir, opens its encoder and prices its
// models from costsPath (if any) and extra (costs given when onboarding).
func loadState(dir, costsPath string, extra map[string]float64) (*state, error) {
	ck, err := checkpoint.Load(dir)
	if err != nil {
		return nil, err
	}
	return newState(dir, ck, costsPath, extra)
}

func newState(dir string, ck *checkpoint.Checkpoint, costsPath string, extra map[string]float64) (*state, error) {
	enc, err := jeirt.OpenCheckpointEncoder(ck)
	if err != nil {
		return nil, err
	}
	m := ck.Model
	st := &state{dir: dir, ck: ck, enc: enc, ref: route.MeanPredictedP(m), index: map[string]int{}, loaded: time.Now()}
	st.rank, st.calib = st.ref, route.CalibrationOf(ck)
	if ck.Manifest.Routing != nil {
		st.rank = route.Reference(ck)
	}
	if rec := ck.Manifest.Routing; rec != nil {
		// A checkpoint whose recorded rule no command can apply is refused
		// at load, so that a reload keeps the previous one serving.
		if _, err := route.Recorded(rec); err != nil {
			return nil, fmt.Errorf("%s: %w", ck.Where(), err)
		}
	}
	if st.domain, err = checkpoint.LoadDomain(dir); err != nil {
		return nil, err
	}
	if st.domain != nil && st.domain.Dim != m.InputDim {
		return nil, fmt.Errorf("%s: the out-of-domain reference has width %d, the encoder %d", dir, st.domain.Dim, m.InputDim)
	}
	if _, ok := enc.(*encoder.Hash); !ok {
		st.encMu = &sync.Mutex{}
	}
	for i, n := range m.Models {
		st.index[n] = i
	}
	if costsPath != "" || len(extra) > 0 {
		st.costs = make([]float64, len(m.Models))
		for i := range st.costs {
			st.costs[i] = math.NaN()
		}
		for name, c := range extra {
			if i, ok := st.index[name]; ok {
				st.costs[i] = c
			}
		}
		if costsPath != "" {
			fc, err := routefile.ReadCosts(costsPath, m.Models)
			if err != nil {
				return nil, err
			}
			for i, c := range fc {
				if !math.IsNaN(c) {
					st.costs[i] = c
				}
			}
		}
	}
	return st, nil
}

func (st *state) model() *model.JEIRT { return st.ck.Model }

// cost is the price of row i (NaN when unknown).
func (st *state) cost(i int) float64 {
	if st.costs == nil {
		return math.NaN()
	}
	return st.costs[i]
}

// embed encodes texts with the checkpoint's encoder and runs its adapter.
func (st *state) embed(ctx context.Context, ids, texts []string) (q, x [][]float32, err error) {
	if st.encMu != nil {
		st.encMu.Lock()
		defer st.encMu.Unlock()
	}
	return jeirt.EncodeQuestions(ctx, st.ck, st.enc, ids, texts)
}

// RouteParams are the routing settings of one request; their zero value is
// the rule jeirt route applies without flags: the checkpoint's recorded
// default rule, or, for a checkpoint without one, the highest P among all
// models (with server costs, the cheapest model with P ≥ 0.7).
type RouteParams struct {
	// Rule is "default" (the checkpoint's recorded rule), a rule's name
	// (best-single, max-p, shortlist, margin, min-p, lambda) with its
	// settings in the fields below, or a whole spec as router:<rule> and
	// jeirt route --rule name it (shortlist?k=2, margin?delta=0.05); ""
	// is the default without other fields, else inferred from them as
	// jeirt route infers it from its flags.
	Rule   string   `json:"rule,omitempty"`
	MinP   *float64 `json:"min_p,omitempty"`
	Lambda *float64 `json:"lambda,omitempty"`
	Margin *float64 `json:"margin,omitempty"`
	// Shortlist keeps the T models with the best recorded training accuracy
	// (else the highest mean predicted P over the checkpoint's questions;
	// jeirt route --shortlist without --data): rule shortlist's k, or the
	// candidates of another rule.
	Shortlist int `json:"shortlist,omitempty"`
	// Models restricts the candidates; nil means all (with a cost rule, all
	// that have a price).
	Models []string `json:"models,omitempty"`
	// Default is the margin rule's default model; "" means the best-ranked.
	Default string `json:"default,omitempty"`
	// KeepOutOfDomain keeps the rule's choice for a query unlike every
	// training question (it is still flagged); by default such a query goes
	// to the candidate ranked first (the best recorded training accuracy,
	// else the highest mean predicted P).
	KeepOutOfDomain bool `json:"keep_out_of_domain,omitempty"`
}

// rule is the route.Rule that p names, and why it applies. Errors are
// requestErrors naming the field.
func (st *state) rule(p RouteParams) (route.Rule, string, error) {
	rec := st.ck.Manifest.Routing
	if p.usesDefault() && (p.Rule == route.RuleDefault || rec != nil) {
		if rec == nil {
			return route.Rule{}, "", badField("rule", "the checkpoint records no default rule (trained by a jeirt before one was chosen); name a rule")
		}
		r, why, err := route.Resolve(route.RuleDefault, rec)
		if err != nil {
			return route.Rule{}, "", badField("rule", "the checkpoint's default rule: %v", err)
		}
		return r, why, nil
	}
	if strings.Contains(p.Rule, "?") {
		if p.MinP != nil || p.Lambda != nil || p.Margin != nil || p.Shortlist != 0 || p.Default != "" {
			return route.Rule{}, "", badField("rule", "rule %s holds its settings; drop min_p, lambda, margin, shortlist and default", p.Rule)
		}
		r, err := route.ParseRule(p.Rule)
		if err != nil {
			return route.Rule{}, "", badField("rule", "%v", err)
		}
		return r, "given", nil
	}
	name := p.Rule
	if name == "" {
		switch {
		case p.Margin != nil && *p.Margin > 0:
			name = route.RuleMargin
		case p.Lambda != nil && *p.Lambda > 0:
			name = route.RuleLambda
		case p.MinP != nil || st.costs != nil:
			name = route.RuleMinP
		default:
			name = route.RuleMaxP
		}
	}
	var param *float64
	among := p.Shortlist
	switch name {
	case route.RuleShortlist:
		if p.Shortlist > 0 {
			k := float64(p.Shortlist)
			param = &k
		}
		among = 0
	case route.RuleMinP:
		if param = p.MinP; param != nil && !(*param >= 0 && *param <= 1) {
			return route.Rule{}, "", badField("min_p", "min_p %v is not in [0, 1]", *param)
		}
	case route.RuleLambda:
		if param = p.Lambda; param == nil || !(*param >= 0) || math.IsInf(*param, 0) {
			return route.Rule{}, "", badField("lambda", "rule lambda needs a positive, finite lambda")
		}
	case route.RuleMargin: // as route.ParseRule reads router:margin?delta=D
		if param = p.Margin; param == nil || !(*param >= 0) || math.IsInf(*param, 0) {
			return route.Rule{}, "", badField("margin", "rule margin needs a finite margin >= 0")
		}
	}
	switch {
	case name != route.RuleMinP && p.MinP != nil:
		return route.Rule{}, "", badField("min_p", "min_p belongs to rule min-p, not %s", name)
	case name != route.RuleLambda && p.Lambda != nil:
		return route.Rule{}, "", badField("lambda", "lambda belongs to rule lambda, not %s", name)
	case name != route.RuleMargin && p.Margin != nil && *p.Margin != 0:
		return route.Rule{}, "", badField("margin", "margin belongs to rule margin, not %s", name)
	case p.Default != "" && name != route.RuleMargin:
		return route.Rule{}, "", badField("default", "default is the margin rule's default model")
	case p.Shortlist < 0:
		return route.Rule{}, "", badField("shortlist", "shortlist %d must not be negative", p.Shortlist)
	}
	r, err := route.NewRule(name, param, among, p.Default)
	if err != nil {
		return route.Rule{}, "", badField("rule", "%v: want default, %s", err, route.RuleNames())
	}
	return r, "given", nil
}

// Router builds the route.Router for p on this state, with the same checks
// and defaults as jeirt route. allowed, when not nil, further restricts the
// candidates (the models a chat can be sent to). Errors are requestErrors
// naming the field.
func (st *state) Router(p RouteParams, allowed func(name string) bool) (*route.Router, error) {
	rule, _, err := st.rule(p)
	if err != nil {
		return nil, err
	}
	m := st.model()
	costs := st.costs
	if rule.WeighsCost() && costs == nil && p.usesDefault() {
		costs = st.ck.RecordedCosts()
	}
	if rule.WeighsCost() && costs == nil {
		return nil, badField("rule", "rule %s weighs cost; the server has no costs (start it with --costs)", rule)
	}
	var cand []int
	if p.Models != nil {
		seen := map[int]bool{}
		for k, name := range p.Models {
			i, ok := st.index[name]
			if !ok {
				return nil, badField(fmt.Sprintf("models[%d]", k), "%q is not a model of the checkpoint", name)
			}
			if rule.WeighsCost() && math.IsNaN(costs[i]) {
				return nil, badField(fmt.Sprintf("models[%d]", k), "model %q has no cost for rule %s", name, rule)
			}
			if allowed != nil && !allowed(name) {
				return nil, badField(fmt.Sprintf("models[%d]", k), "model %q has no upstream", name)
			}
			if !seen[i] {
				seen[i] = true
				cand = append(cand, i)
			}
		}
		if len(cand) == 0 {
			return nil, badField("models", "models names no model")
		}
	} else {
		for i, name := range m.Models {
			if rule.WeighsCost() && math.IsNaN(costs[i]) || allowed != nil && !allowed(name) {
				continue
			}
			cand = append(cand, i)
		}
		if len(cand) == 0 {
			return nil, badField("models", "no model of the checkpoint can be routed to with rule %s (costs or upstreams missing)", rule)
		}
	}
	if rule.Default != "" {
		i, ok := st.index[rule.Default]
		in := cand
		if rule.Among > 0 {
			in = route.Shortlist(st.rank, cand, rule.Among)
		}
		if !ok || !slices.Contains(in, i) {
			return nil, badField("default", "%q is not one of the candidate models", rule.Default)
		}
	}
	rt, err := rule.Router(m, route.Setting{Candidates: cand, Reference: st.rank, Costs: costs, Calibration: st.calib,
		Domain: st.domain, KeepOutOfDomain: p.KeepOutOfDomain})
	if err != nil {
		return nil, badField("rule", "%v", err)
	}
	return rt, nil
}

// withCost returns the costs map extended by name → c.
func withCost(extra map[string]float64, name string, c float64) map[string]float64 {
	out := maps.Clone(extra)
	if out == nil {
		out = map[string]float64{}
	}
	out[name] = c
	return out
}
