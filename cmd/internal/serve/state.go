package serve

import (
	"context"
	"fmt"
	"maps"
	"math"
	"sync"
	"time"

	"github.com/jeirt/jeirt/encoder"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
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
			fc, err := route.ReadCosts(costsPath, m.Models)
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
	// Rule is "default" (the checkpoint's recorded rule), "best-single",
	// "max-p", "shortlist" (max-p among the Shortlist best models,
	// DefaultShortlist of them when Shortlist is 0), "min-p", "lambda" or
	// "margin"; "" is the default without other fields, else inferred from
	// them as jeirt route infers it from its flags.
	Rule   string   `json:"rule,omitempty"`
	MinP   *float64 `json:"min_p,omitempty"`
	Lambda *float64 `json:"lambda,omitempty"`
	Margin *float64 `json:"margin,omitempty"`
	// Shortlist keeps the T models with the best recorded training accuracy
	// (else the highest mean predicted P over the checkpoint's questions;
	// jeirt route --shortlist without --data).
	Shortlist int `json:"shortlist,omitempty"`
	// Models restricts the candidates; nil means all (with a cost rule, all
	// that have a price).
	Models []string `json:"models,omitempty"`
	// Default is the margin rule's default model; "" means the best by mean
	// predicted P.
	Default string `json:"default,omitempty"`
	// KeepOutOfDomain keeps the rule's choice for a query unlike every
	// training question (it is still flagged); by default such a query goes
	// to the candidate ranked first (the best recorded training accuracy,
	// else the highest mean predicted P).
	KeepOutOfDomain bool `json:"keep_out_of_domain,omitempty"`
}

// Router builds the model.Router for p on this state, with the same checks
// and defaults as jeirt route. allowed, when not nil, further restricts the
// candidates (the models that have an upstream). Errors are requestErrors
// naming the field.
func (st *state) Router(p RouteParams, allowed func(name string) bool) (*route.Router, error) {
	m := st.model()
	if p.usesDefault() && (p.Rule == "default" || st.ck.Manifest.Routing != nil) {
		return st.defaultRouter(p, allowed)
	}
	rule := p.Rule
	if rule == "" {
		switch {
		case p.Margin != nil && *p.Margin > 0:
			rule = "margin"
		case p.Lambda != nil && *p.Lambda > 0:
			rule = "lambda"
		case p.MinP != nil || st.costs != nil:
			rule = "min-p"
		default:
			rule = "max-p"
		}
	}
	rt := &route.Router{Model: m}
	costRule := false
	switch rule {
	case "max-p":
	case "best-single":
		rt.Margin = math.Inf(1)
	case "shortlist":
		rule = "max-p"
		if p.Shortlist == 0 {
			p.Shortlist = DefaultShortlist
		}
	case "min-p":
		costRule = true
		rt.MinP = 0.7
		if p.MinP != nil {
			rt.MinP = *p.MinP
		}
		if !(rt.MinP >= 0 && rt.MinP <= 1) {
			return nil, badField("min_p", "min_p %v is not in [0, 1]", rt.MinP)
		}
	case "lambda":
		costRule = true
		if p.Lambda == nil || !(*p.Lambda > 0) || math.IsInf(*p.Lambda, 0) {
			return nil, badField("lambda", "rule lambda needs a positive, finite lambda")
		}
		rt.Lambda = *p.Lambda
	case "margin":
		if p.Margin == nil || !(*p.Margin > 0) {
			return nil, badField("margin", "rule margin needs a positive margin")
		}
		rt.Margin = *p.Margin
	default:
		return nil, badField("rule", "unknown rule %q: want default, %s", rule, ruleNames())
	}
	if costRule && st.costs == nil {
		return nil, badField("rule", "rule %s weighs cost; the server has no costs (start it with --costs)", rule)
	}
	if !costRule && p.MinP != nil {
		return nil, badField("min_p", "min_p belongs to rule min-p, not %s", rule)
	}
	if !costRule && p.Lambda != nil {
		return nil, badField("lambda", "lambda belongs to rule lambda, not %s", rule)
	}
	if rule != "margin" && p.Margin != nil && *p.Margin != 0 {
		return nil, badField("margin", "margin belongs to rule margin, not %s", rule)
	}
	if p.Default != "" && rule != "margin" {
		return nil, badField("default", "default is the margin rule's default model")
	}
	if p.Shortlist < 0 {
		return nil, badField("shortlist", "shortlist %d must not be negative", p.Shortlist)
	}
	if p.Models != nil {
		seen := map[int]bool{}
		for k, name := range p.Models {
			i, ok := st.index[name]
			if !ok {
				return nil, badField(fmt.Sprintf("models[%d]", k), "%q is not a model of the checkpoint", name)
			}
			if costRule && math.IsNaN(st.costs[i]) {
				return nil, badField(fmt.Sprintf("models[%d]", k), "model %q has no cost for rule %s", name, rule)
			}
			if allowed != nil && !allowed(name) {
				return nil, badField(fmt.Sprintf("models[%d]", k), "model %q has no upstream", name)
			}
			if !seen[i] {
				seen[i] = true
				rt.Candidates = append(rt.Candidates, i)
			}
		}
		if len(rt.Candidates) == 0 {
			return nil, badField("models", "models names no model")
		}
	} else {
		for i, name := range m.Models {
			if costRule && math.IsNaN(st.costs[i]) || allowed != nil && !allowed(name) {
				continue
			}
			rt.Candidates = append(rt.Candidates, i)
		}
		if len(rt.Candidates) == 0 {
			return nil, badField("models", "no model of the checkpoint can be routed to with rule %s (costs or upstreams missing)", rule)
		}
	}
	if p.Shortlist > 0 {
		rt.Candidates = route.Shortlist(st.rank, rt.Candidates, p.Shortlist)
	}
	if costRule {
		rt.Costs = st.costs
	}
	rt.Domain, rt.Best, rt.KeepOutOfDomain = st.domain, route.BestSingle(st.rank, rt.Candidates), p.KeepOutOfDomain
	rt.Calibration = st.calib
	if rule == "best-single" {
		rt.Default = rt.Best
	}
	if rule == "margin" {
		if p.Default != "" {
			i, ok := st.index[p.Default]
			if !ok || !containsInt(rt.Candidates, i) {
				return nil, badField("default", "%q is not one of the candidate models", p.Default)
			}
			rt.Default = i
		} else {
			rt.Default = route.BestSingle(st.rank, rt.Candidates)
		}
	}
	if err := rt.Check(); err != nil {
		return nil, badField("rule", "%v", err)
	}
	return rt, nil
}

func containsInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
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
