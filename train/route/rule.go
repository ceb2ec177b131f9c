package route

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/jeirt/jeirt/model/checkpoint"
)

// Rule is a routing rule with its parameter, as a checkpoint records its
// default and commands print it.
type Rule struct {
	// Name is best-single, max-p, shortlist, margin or lambda.
	Name string
	// Param is the shortlist's T, the margin's δ or λ; NaN for best-single
	// and max-p.
	Param float64
}

// The rules a checkpoint's default may be.
const (
	RuleBestSingle = "best-single"
	RuleMaxP       = "max-p"
	RuleShortlist  = "shortlist"
	RuleMargin     = "margin"
	RuleLambda     = "lambda"
)

// paramKey names each rule's parameter in a rule's spec.
var paramKey = map[string]string{RuleShortlist: "k", RuleMargin: "delta", RuleLambda: "lambda"}

// String is the rule's spec: best-single, max-p, shortlist?k=3,
// margin?delta=0.05, lambda?lambda=0.1.
func (r Rule) String() string {
	key, ok := paramKey[r.Name]
	if !ok {
		return r.Name
	}
	return r.Name + "?" + key + "=" + strconv.FormatFloat(r.Param, 'g', -1, 64)
}

// ParseRule reads a rule's spec as String writes it.
func ParseRule(s string) (Rule, error) {
	name, arg, hasArg := strings.Cut(strings.TrimSpace(s), "?")
	if !slices.Contains(checkpoint.RoutingRules, name) {
		return Rule{}, fmt.Errorf("rule %q: want one of %s", s, strings.Join(checkpoint.RoutingRules, ", "))
	}
	key, wants := paramKey[name]
	if !wants {
		if hasArg {
			return Rule{}, fmt.Errorf("rule %q: %s takes no parameter", s, name)
		}
		return Rule{Name: name, Param: math.NaN()}, nil
	}
	k, v, ok := strings.Cut(arg, "=")
	if !hasArg || !ok || k != key {
		return Rule{}, fmt.Errorf("rule %q: want %s?%s=VALUE", s, name, key)
	}
	p, err := strconv.ParseFloat(v, 64)
	if err != nil || !(p >= 0) || math.IsInf(p, 0) || name == RuleShortlist && (p < 1 || p != math.Trunc(p)) {
		return Rule{}, fmt.Errorf("rule %q: %s %q is not a %s", s, key, v, map[bool]string{true: "whole number of models", false: "non-negative number"}[name == RuleShortlist])
	}
	return Rule{Name: name, Param: p}, nil
}

// Recorded returns the default rule a checkpoint's routing block records.
func Recorded(rt *checkpoint.Routing) Rule {
	r := Rule{Name: rt.Rule, Param: math.NaN()}
	if rt.Param != nil {
		r.Param = *rt.Param
	}
	return r
}

// ParamPtr is the rule's parameter as a checkpoint records it: nil for a
// rule without one.
func (r Rule) ParamPtr() *float64 {
	if _, ok := paramKey[r.Name]; !ok {
		return nil
	}
	v := r.Param
	return &v
}

// Reference is the score that ranks a checkpoint's models (one per row of
// M, higher is better) for best-single, the shortlist and the margin's
// default: the training accuracy its routing block records (−Inf for a
// model added later), or, for a checkpoint without one, each model's mean
// predicted P over the checkpoint's questions.
func Reference(ck *checkpoint.Checkpoint) []float64 {
	rt := ck.Manifest.Routing
	if rt == nil || len(rt.TrainAccuracy) == 0 {
		return MeanPredictedP(ck.Model)
	}
	ref := make([]float64, ck.Model.NumModels())
	for i, name := range ck.Model.Models {
		ref[i] = math.Inf(-1)
		if v, ok := rt.TrainAccuracy[name]; ok {
			ref[i] = v
		}
	}
	return ref
}

// RecordedCosts is the price of every row of M the routing block records
// (NaN for a model it does not price), or nil when it records none.
func RecordedCosts(ck *checkpoint.Checkpoint) []float64 {
	rt := ck.Manifest.Routing
	if rt == nil || len(rt.Costs) == 0 {
		return nil
	}
	costs := make([]float64, ck.Model.NumModels())
	for i, name := range ck.Model.Models {
		costs[i] = math.NaN()
		if v, ok := rt.Costs[name]; ok {
			costs[i] = v
		}
	}
	return costs
}

// Apply makes rt apply rule among its candidates (all models when nil),
// ranking them by ref: best-single always takes the best candidate by ref,
// shortlist keeps the T best and takes the highest P among them, margin
// takes the best candidate unless another's P beats its P by δ, lambda
// takes the highest P − λ·cost (rt.Costs must be set), max-p the highest
// P. It also sets rt.Best, where out-of-domain queries go, to the best
// candidate by ref.
func (rule Rule) Apply(rt *Router, ref []float64) error {
	rt.Candidates = rt.candidates()
	rt.Best = BestSingle(ref, rt.Candidates)
	switch rule.Name {
	case RuleMaxP:
	case RuleBestSingle:
		rt.Margin, rt.Default = math.Inf(1), rt.Best
	case RuleShortlist:
		rt.Candidates = Shortlist(ref, rt.Candidates, int(rule.Param))
	case RuleMargin:
		rt.Margin, rt.Default = rule.Param, rt.Best
	case RuleLambda:
		if rt.Costs == nil {
			return fmt.Errorf("route: rule %s weighs cost; it needs the models' prices", rule)
		}
		rt.Lambda = rule.Param
	default:
		return fmt.Errorf("route: unknown rule %q", rule.Name)
	}
	if rule.Name != RuleLambda {
		rt.Costs = nil
	}
	return rt.Check()
}
