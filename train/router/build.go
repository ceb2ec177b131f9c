// Package router builds a checkpoint's router: Build takes a checkpoint
// and a Request (the rule, the candidates, their prices) and returns the
// route.Router, with every check once; jeirt route, route eval's default
// row and serve all call it. Reference and CalibrationOf read what the
// checkpoint's routing block records for it (the ranking, the calibration).
package router

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/train/route"
)

// Request is what a caller asks of a checkpoint's router: the rule, the
// candidates, their prices and what ranks them. jeirt route, route eval's
// default row and serve's requests each describe theirs with one, and Build
// makes every router from it, with every check once.
type Request struct {
	// Spec names the rule: "" or "default" is the checkpoint's recorded
	// default rule (route.Resolve), anything else a spec (route.ParseRule). It is
	// ignored when Name is set.
	Spec string
	// Name names the rule by its settings instead of a spec, checked as
	// route.NewRule checks them: Param (nil: the rule's default), Among (the T
	// best-ranked) and Default (the margin rule's default model).
	Name    string
	Param   *float64
	Among   int
	Default string
	// Models names the candidates; nil is every model of the checkpoint
	// (those Allowed keeps and, with PricedOnly, those with a price).
	Models []string
	// Allowed, when set, says whether a model can be routed to (serve: it
	// has an upstream); Why says why not, for a model Models names.
	Allowed    func(name string) bool
	AllowedWhy string
	// Costs prices every row of M (NaN: no price), or is nil. A rule that
	// weighs cost without Costs takes the checkpoint's recorded prices when
	// RecordedCosts is set.
	Costs         []float64
	RecordedCosts bool
	// PricedOnly, without Models, leaves the unpriced models out of a rule
	// that weighs cost instead of refusing them.
	PricedOnly bool
	// Reference ranks the models (nil: Reference of the checkpoint).
	Reference []float64
	// Domain is the out-of-domain check (nil: none); KeepOutOfDomain keeps
	// the rule's choice for the questions it flags.
	Domain          *checkpoint.Domain
	KeepOutOfDomain bool
}

// ModelError is a model that Request.Models names at Index and that cannot
// be a candidate.
type ModelError struct {
	Index int
	Err   *model.FieldError
}

func (e *ModelError) Error() string { return e.Err.Error() }
func (e *ModelError) Unwrap() error { return e.Err }

// Build is the router of checkpoint ck that req asks for, and why its rule
// applies ("given", or the recorded default's reason). Its errors are
// model.FieldErrors on the setting at fault: Rule (the spec, or the
// recorded default), the rule's parameter (route.RuleInfo.Field: MinP, Lambda,
// Margin, Shortlist), Shortlist (Among), Default, Models (a ModelError for
// a model named) and Costs; callers show them under their own names.
func Build(ck *checkpoint.Checkpoint, req Request) (*route.Router, string, error) {
	rule, why, err := req.rule(ck)
	if err != nil {
		return nil, "", err
	}
	m := ck.Model
	costs := req.Costs
	recorded := false
	if rule.WeighsCost() && costs == nil && req.RecordedCosts {
		costs, recorded = ck.RecordedCosts(), true
	}
	if rule.WeighsCost() && costs == nil {
		return nil, "", model.FieldErrorf("Costs", "rule %s weighs cost; give the prices with {Costs}", rule)
	}
	if !rule.WeighsCost() {
		costs = nil
	}
	cand, err := req.candidates(m, rule, costs, recorded)
	if err != nil {
		return nil, "", err
	}
	ref := req.Reference
	if ref == nil {
		ref = Reference(ck)
	}
	if rule.Default != "" {
		field := "Default"
		if req.Name == "" {
			field = "Rule" // the spec's default=
		}
		i := slices.Index(m.Models, rule.Default)
		if i < 0 {
			return nil, "", model.FieldErrorf(field, "{"+field+"}: %q is not a model of the checkpoint (it has %d: %s)", rule.Default, m.NumModels(), shortList(m.Models, 5))
		}
		in := cand
		if rule.Among > 0 {
			in = route.Shortlist(ref, in, rule.Among)
		}
		if !slices.Contains(in, i) {
			return nil, "", model.FieldErrorf(field, "{"+field+"}: %q is not one of the candidates ({Models}, {Shortlist})", rule.Default)
		}
	}
	rt, err := rule.Router(m, route.Setting{Candidates: cand, Reference: ref, Costs: costs, Calibration: CalibrationOf(ck),
		Domain: req.Domain, KeepOutOfDomain: req.KeepOutOfDomain})
	if err != nil {
		return nil, "", err
	}
	return rt, why, nil
}

// rule is the rule req names, and why it applies.
func (req Request) rule(ck *checkpoint.Checkpoint) (route.Rule, string, error) {
	if req.Name != "" {
		r, err := route.NewRule(req.Name, req.Param, req.Among, req.Default)
		return r, "given", err
	}
	r, why, err := route.Resolve(req.Spec, ck.Manifest.Routing)
	switch {
	case err == nil:
		return r, why, nil
	case req.Spec == "" || req.Spec == route.RuleDefault:
		return route.Rule{}, "", fmt.Errorf("%s: %w", ck.Where(), err)
	}
	return route.Rule{}, "", model.FieldErrorf("Rule", "{Rule}: %v (or default: the checkpoint's)", err)
}

// candidates are the rows of M that req names, or every model it may route
// to; each priced when the rule weighs cost (costs not nil).
func (req Request) candidates(m *model.JEIRT, rule route.Rule, costs []float64, recorded bool) ([]int, error) {
	unpriced := func(i int) bool { return costs != nil && math.IsNaN(costs[i]) }
	noPrice := func(i int) error {
		if recorded {
			return model.FieldErrorf("Costs", "the checkpoint records no price for model %q (give {Costs}, or choose the models with {Models})", m.Models[i])
		}
		return model.FieldErrorf("Models", "model %q has no cost for rule %s", m.Models[i], rule)
	}
	var cand []int
	if req.Models == nil {
		for i, name := range m.Models {
			switch {
			case req.Allowed != nil && !req.Allowed(name):
			case unpriced(i) && req.PricedOnly:
			case unpriced(i):
				return nil, noPrice(i)
			default:
				cand = append(cand, i)
			}
		}
		if len(cand) == 0 {
			return nil, model.FieldErrorf("Models", "no model of the checkpoint can be routed to with rule %s (costs or upstreams missing)", rule)
		}
		return cand, nil
	}
	seen := map[int]bool{}
	for k, name := range req.Models {
		i := slices.Index(m.Models, name)
		var err *model.FieldError
		switch {
		case i < 0:
			err = model.FieldErrorf("Models", "{Models}: %q is not a model of the checkpoint (it has %d: %s)", name, m.NumModels(), shortList(m.Models, 5))
		case unpriced(i):
			var fe *model.FieldError
			if errors.As(noPrice(i), &fe) {
				err = fe
			}
		case req.Allowed != nil && !req.Allowed(name):
			err = model.FieldErrorf("Models", "model %q %s", name, req.AllowedWhy)
		}
		if err != nil {
			return nil, &ModelError{Index: k, Err: err}
		}
		if !seen[i] {
			seen[i] = true
			cand = append(cand, i)
		}
	}
	if len(cand) == 0 {
		return nil, model.FieldErrorf("Models", "{Models} names no model")
	}
	return cand, nil
}

// shortList joins up to limit names, and says how many more there are.
func shortList(names []string, limit int) string {
	if len(names) <= limit {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:limit], ", ") + fmt.Sprintf(", ... (%d more)", len(names)-limit)
}
