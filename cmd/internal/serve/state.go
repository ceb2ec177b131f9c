package serve

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/jeirt/jeirt/encoder"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/routefile"
	"github.com/jeirt/jeirt/train/jeirt"
	"github.com/jeirt/jeirt/train/route"
	"github.com/jeirt/jeirt/train/router"
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
	rank   []float64   // what ranks the models for routing (router.Reference: the recorded training accuracies, else ref)
	index  map[string]int
	loaded time.Time
	// domain is the checkpoint's out-of-domain reference (nil for a
	// checkpoint written without one).
	domain *checkpoint.Domain
	// calib is the calibrated P the checkpoint records (router.CalibrationOf;
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
	st.rank, st.calib = st.ref, router.CalibrationOf(ck)
	if ck.Manifest.Routing != nil {
		st.rank = router.Reference(ck)
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

// request is the router.Request that p names: the recorded default rule,
// a whole spec, or a rule by its name and settings, inferred from them as
// jeirt route infers it from its flags. Each rule's parameter is checked
// by router.Build; here only which field belongs to which rule. Errors
// are requestErrors naming the field.
func (st *state) request(p RouteParams) (router.Request, error) {
	rec := st.ck.Manifest.Routing
	req := router.Request{Reference: st.rank, Costs: st.costs, PricedOnly: true, Models: p.Models,
		Domain: st.domain, KeepOutOfDomain: p.KeepOutOfDomain}
	if p.usesDefault() && (p.Rule == route.RuleDefault || rec != nil) {
		if rec == nil {
			return req, badField("rule", "the checkpoint records no default rule (trained by a jeirt before one was chosen); name a rule")
		}
		req.Spec, req.RecordedCosts = route.RuleDefault, true
		return req, nil
	}
	if strings.Contains(p.Rule, "?") {
		if p.MinP != nil || p.Lambda != nil || p.Margin != nil || p.Shortlist != 0 || p.Default != "" {
			return req, badField("rule", "rule %s holds its settings; drop min_p, lambda, margin, shortlist and default", p.Rule)
		}
		req.Spec = p.Rule
		return req, nil
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
	req.Name, req.Among, req.Default = name, p.Shortlist, p.Default
	field := ruleInfo(name).Field
	if param := p.param(field); param != nil {
		req.Param = *param
	}
	if field == "Shortlist" { // the shortlist's k, not the candidates of another rule
		if p.Shortlist > 0 {
			k := float64(p.Shortlist)
			req.Param = &k
		}
		req.Among = 0
	}
	// A rule's parameter given to another rule.
	for _, r := range route.Rules() {
		if param := p.param(r.Field); param != nil && *param != nil && r.Field != field && !(r.Field == "Margin" && **param == 0) {
			return req, badField(requestFields[r.Field], "%s belongs to rule %s, not %s", requestFields[r.Field], r.Name, name)
		}
	}
	if p.Default != "" && name != route.RuleMargin {
		return req, badField("default", "default is the margin rule's default model")
	}
	return req, nil
}

// Router builds the route.Router for p on this state with router.Build, as
// jeirt route builds its own. allowed, when not nil, further restricts the
// candidates (the models a chat can be sent to). Errors are requestErrors
// naming the field.
func (st *state) Router(p RouteParams, allowed func(name string) bool) (*route.Router, error) {
	req, err := st.request(p)
	if err != nil {
		return nil, err
	}
	req.Allowed, req.AllowedWhy = allowed, "has no upstream"
	rt, _, err := router.Build(st.ck, req)
	if err != nil {
		return nil, requestFieldError(err)
	}
	return rt, nil
}

// requestFields are the request's names of router.Build's settings.
var requestFields = map[string]string{"Rule": "rule", "MinP": "min_p", "Lambda": "lambda", "Margin": "margin",
	"Shortlist": "shortlist", "Default": "default", "Models": "models", "Costs": "--costs (the server has no costs)"}

// requestFieldError is router.Build's error as a requestError on the field
// at fault, its message in the request's names.
func requestFieldError(err error) error {
	name := func(f string) string {
		if n, ok := requestFields[f]; ok {
			return n
		}
		return f
	}
	var me *router.ModelError
	if errors.As(err, &me) {
		return badField(fmt.Sprintf("models[%d]", me.Index), "%s", me.Err.Render(name))
	}
	var fe *model.FieldError
	if !errors.As(err, &fe) {
		return badField("rule", "%v", err)
	}
	field := name(fe.Field)
	if fe.Field == "Costs" {
		field = "rule"
	}
	return badField(field, "%s", strings.TrimPrefix(fe.Render(name), field+": ")) // the field is said once
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
