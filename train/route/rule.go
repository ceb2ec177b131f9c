package route

import (
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/limits"
)

// Rule is a routing rule with its settings: a checkpoint's default, what
// route --rule, route eval, router:<rule> and POST /v1/route name, and what
// every choice reports it applied. Its spec (String, ParseRule) is
// NAME[?KEY=VALUE[&k=T][&default=MODEL]]: best-single, max-p, shortlist?k=3,
// margin?delta=0.05&default=gpt-4o, min-p?p=0.7, lambda?lambda=0.1; k=T
// chooses among the T best-ranked candidates (any rule).
type Rule struct {
	// Name is one of Rules' names.
	Name string
	// Param is the rule's own parameter (the shortlist's k, the margin's δ,
	// min-p's p, λ); NaN for a rule without one.
	Param float64
	// Among, when > 0, keeps only the Among best-ranked candidates before
	// the rule chooses (the shortlist rule's k is its Param instead).
	Among int
	// Default is the margin rule's default model ("": the best-ranked).
	Default string
}

// The names of the rules.
const (
	RuleBestSingle = "best-single"
	RuleMaxP       = "max-p"
	RuleShortlist  = "shortlist"
	RuleMargin     = "margin"
	RuleMinP       = "min-p"
	RuleLambda     = "lambda"
	// RuleOutOfDomain is what a choice reports when the out-of-domain check
	// sent the question to the best-ranked candidate instead of the rule.
	RuleOutOfDomain = "out-of-domain"
	// RuleDefault names, in a request or a flag, the checkpoint's recorded
	// default rule (Resolve).
	RuleDefault = "default"
)

// kind is one rule: its parameter and how it sets a Router. Each rule is a
// file rule_NAME.go that registers its kind; Rules lists them.
type kind struct {
	name string
	// key names the parameter in a spec ("" for none); def is its value
	// when a spec leaves it out (NaN: it must be given, as example shows).
	key, example string
	def          float64
	// field names the parameter as a request's setting (MinP, Lambda,
	// Margin, Shortlist): the field of its errors (model.FieldError).
	field string
	// help says what the parameter does, for the flag that sets it.
	help string
	// check reports a parameter value the rule cannot take.
	check func(v float64) error
	// costs says the rule weighs cost: the router needs the models' prices.
	costs bool
	// apply sets the router's rule fields (Margin, Default, MinP, Lambda,
	// Candidates) once its candidates and Best are set; ref ranks them.
	apply func(r Rule, rt *Router, ref []float64) error
	// choose picks among ps (sorted, highest P first) and says why.
	choose func(rt *Router, ps []ModelP) (best int, fallback bool, why string)
	// order is the rule's place in listings (GET /v1/models, errors) and
	// in route eval's points; cvRank its place among the rules
	// CrossValidation scores (Choose prefers the earlier on a tie).
	order, cvRank int
	// sweep is the rule's points in route eval (o's grid for it; span is
	// the range of the candidates' costs, for a rule that weighs cost).
	sweep func(o RouteEvalOptions, span float64) ([]sweepPoint, error)
}

// sweepPoint is one point of a rule's sweep in route eval: its label (the
// rule column), its parameter and the rule it applies.
type sweepPoint struct {
	label string
	param float64
	rule  Rule
}

var kinds []*kind

func register(k *kind) { kinds = append(kinds, k) }

func kindOf(name string) *kind {
	for _, k := range kinds {
		if k.name == name {
			return k
		}
	}
	return nil
}

// RuleInfo describes a rule for listings (GET /v1/models, help texts).
type RuleInfo struct {
	Name  string
	Key   string  // its parameter's name in a spec, "" for none
	Def   float64 // its parameter when a spec omits it; NaN: required, like Example
	Costs bool    // it weighs cost
	// Example is a value of a required parameter, for listings and errors.
	Example string
	// Field names the parameter as a request's setting (MinP, Lambda,
	// Margin, Shortlist; "" for none), Help what it does.
	Field, Help string
}

// Rules lists every rule, in their order.
func Rules() []RuleInfo {
	var out []RuleInfo
	for _, k := range slices.SortedStableFunc(slices.Values(kinds), func(a, b *kind) int { return a.order - b.order }) {
		out = append(out, RuleInfo{Name: k.name, Key: k.key, Def: k.def, Costs: k.costs, Example: k.example, Field: k.field, Help: k.help})
	}
	return out
}

// RuleNames is "best-single, max-p, ... or lambda".
func RuleNames() string {
	var names []string
	for _, r := range Rules() {
		names = append(names, r.Name)
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// WeighsCost reports whether the rule needs the models' prices.
func (r Rule) WeighsCost() bool {
	k := kindOf(r.Name)
	return k != nil && k.costs
}

// String is the rule's spec, the one ParseRule reads back: the parameter
// always written, then k and default when set.
func (r Rule) String() string {
	k := kindOf(r.Name)
	var parts []string
	if k != nil && k.key != "" {
		// 1e+308 as 1e308: a + in a query is a space.
		parts = append(parts, k.key+"="+strings.Replace(strconv.FormatFloat(r.Param, 'g', -1, 64), "e+", "e", 1))
	}
	if r.Among > 0 {
		parts = append(parts, "k="+strconv.Itoa(r.Among))
	}
	if r.Default != "" {
		parts = append(parts, "default="+url.QueryEscape(r.Default))
	}
	if len(parts) == 0 {
		return r.Name
	}
	return r.Name + "?" + strings.Join(parts, "&")
}

// ParseRule reads a rule's spec (see Rule). A parameter left out takes the
// rule's default (shortlist k=3, min-p p=0.7); a margin or λ must be given.
// Equivalent specs read as one rule: max-p?k=T is shortlist?k=T, and
// best-single ignores k (the best-ranked of the T best-ranked is the
// best-ranked).
func ParseRule(s string) (Rule, error) {
	name, query, hasQuery := strings.Cut(strings.TrimSpace(s), "?")
	s = limits.Clip(s) // what errors quote
	k := kindOf(name)
	if k == nil {
		return Rule{}, fmt.Errorf("rule %q: unknown rule %q: want %s", s, limits.Clip(name), RuleNames())
	}
	vals, err := url.ParseQuery(query)
	if err != nil || hasQuery && query == "" {
		return Rule{}, fmt.Errorf("rule %q: the parameters after ? are not name=value pairs joined by &", s)
	}
	r := Rule{Name: name, Param: math.NaN()}
	var among string
	for key, vs := range vals {
		if len(vs) != 1 {
			return Rule{}, fmt.Errorf("rule %q: parameter %s is given %d times", s, limits.Clip(key), len(vs))
		}
		v := vs[0]
		switch {
		case k.key != "" && key == k.key:
			p, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return Rule{}, fmt.Errorf("rule %q: %s=%s is not a number", s, key, limits.Clip(v))
			}
			if err := k.check(p); err != nil {
				return Rule{}, fmt.Errorf("rule %q: %s=%s: %v", s, key, limits.Clip(v), err)
			}
			r.Param = p
		case key == "k":
			among = v
		case key == "default" && name == RuleMargin:
			if v == "" {
				return Rule{}, fmt.Errorf("rule %q: default= names no model", s)
			}
			r.Default = v
		default:
			return Rule{}, fmt.Errorf("rule %q: rule %s has no parameter %q (it takes %s)", s, name, limits.Clip(key), paramNames(k))
		}
	}
	if among != "" {
		t, err := strconv.Atoi(among)
		if err != nil || t < 1 {
			return Rule{}, fmt.Errorf("rule %q: k=%s: want a whole number of models, at least 1", s, limits.Clip(among))
		}
		r.Among = t
	}
	if k.key != "" && math.IsNaN(r.Param) {
		if math.IsNaN(k.def) {
			return Rule{}, fmt.Errorf("rule %q: rule %s needs its %s, for example %s?%s=%s", s, name, k.key, name, k.key, k.example)
		}
		r.Param = k.def
	}
	return r.normal(), nil
}

// normal folds equivalent rules into one: max-p among T is shortlist T,
// best-single among T is best-single.
func (r Rule) normal() Rule {
	switch {
	case r.Name == RuleMaxP && r.Among > 0:
		return Rule{Name: RuleShortlist, Param: float64(r.Among)}
	case r.Name == RuleBestSingle:
		r.Among = 0
	}
	return r
}

func paramNames(k *kind) string {
	names := []string{"k"}
	if k.key != "" && k.key != "k" {
		names = append(names, k.key)
	}
	if k.name == RuleMargin {
		names = append(names, "default")
	}
	slices.Sort(names[1:])
	return strings.Join(names, ", ")
}

// NewRule is the rule name with parameter param (nil: the rule's default),
// among the T best-ranked candidates (0: all) and, for the margin rule, the
// default model def, checked as ParseRule checks a spec. Its errors are
// model.FieldErrors on the setting at fault (Rule, the parameter's
// RuleInfo.Field, Shortlist, Default).
func NewRule(name string, param *float64, among int, def string) (Rule, error) {
	k := kindOf(name)
	if k == nil {
		return Rule{}, model.FieldErrorf("Rule", "unknown rule %q: want %s", name, RuleNames())
	}
	r := Rule{Name: name, Param: math.NaN(), Among: among, Default: def}
	switch {
	case param != nil && k.key == "":
		return Rule{}, model.FieldErrorf("Rule", "rule %s takes no parameter", name)
	case param != nil:
		if err := k.check(*param); err != nil {
			return Rule{}, model.FieldErrorf(k.field, "rule %s: {%s} %v: %v", name, k.field, *param, err)
		}
		r.Param = *param
	case k.key != "" && math.IsNaN(k.def):
		return Rule{}, model.FieldErrorf(k.field, "rule %s needs its %s, for example %s", name, k.key, k.example)
	case k.key != "":
		r.Param = k.def
	}
	if among < 0 {
		return Rule{}, model.FieldErrorf("Shortlist", "{Shortlist} %d must not be negative", among)
	}
	if def != "" && name != RuleMargin {
		return Rule{}, model.FieldErrorf("Default", "rule %s: a default model belongs to the margin rule", name)
	}
	return r.normal(), nil
}

// Recorded is the default rule a checkpoint's routing block records
// (routing.rule, routing.param), checked as ParseRule checks a spec.
func Recorded(rt *checkpoint.Routing) (Rule, error) {
	if strings.Contains(rt.Rule, "?") {
		if rt.Param != nil {
			return Rule{}, fmt.Errorf("routing.param: rule %s holds its parameters", rt.Rule)
		}
		r, err := ParseRule(rt.Rule)
		if err != nil {
			return Rule{}, fmt.Errorf("routing.%w", err)
		}
		return r, recordedCosts(r, rt)
	}
	k := kindOf(rt.Rule)
	switch {
	case k == nil:
		return Rule{}, fmt.Errorf("routing.rule %q: want %s", rt.Rule, RuleNames())
	case rt.Param != nil && k.key == "":
		return Rule{}, fmt.Errorf("routing.param: rule %s has none", rt.Rule)
	case rt.Param == nil && k.key != "":
		return Rule{}, fmt.Errorf("routing.param: rule %s needs one", rt.Rule)
	}
	r, err := NewRule(rt.Rule, rt.Param, 0, "")
	if err != nil {
		return Rule{}, fmt.Errorf("routing.param %v: %v", *rt.Param, err) // the checkpoint's field, not a setting
	}
	return r, recordedCosts(r, rt)
}

func recordedCosts(r Rule, rt *checkpoint.Routing) error {
	if r.WeighsCost() && len(rt.Costs) == 0 {
		return fmt.Errorf("routing.costs: rule %s needs the models' prices", r.Name)
	}
	return nil
}

// Record is the rule as a checkpoint's routing block records it: its name
// (the whole spec when it has k or a default) and its parameter.
func (r Rule) Record() (name string, param *float64) {
	if k := kindOf(r.Name); k != nil && k.key != "" {
		v := r.Param
		param = &v
	}
	if r.Among > 0 || r.Default != "" {
		c := r
		c.Param = math.NaN()
		if param != nil {
			c.Param = *param
		}
		return c.String(), nil
	}
	return r.Name, param
}

// Resolve is the rule a request or a flag names: "" or "default" is the
// checkpoint's recorded default (rec; max-p for a checkpoint that records
// none), anything else a spec. why says where the rule comes from.
func Resolve(spec string, rec *checkpoint.Routing) (r Rule, why string, err error) {
	switch {
	case (spec == "" || spec == RuleDefault) && rec == nil:
		return Rule{Name: RuleMaxP, Param: math.NaN()}, "the checkpoint records no default rule (written by a jeirt before one was chosen at training): the highest P, as then", nil
	case spec == "" || spec == RuleDefault:
		r, err := Recorded(rec)
		if err != nil {
			return Rule{}, "", err
		}
		return r, "the checkpoint's default rule: " + rec.Why, nil
	}
	r, err = ParseRule(spec)
	return r, "given", err
}

// Setting is what a rule needs to become a Router.
type Setting struct {
	// Candidates are the rows of M to choose from; nil means all.
	Candidates []int
	// Reference ranks the models (a score per row of M, higher is better;
	// nil: MeanPredictedP) for best-single, k, the margin and Best.
	Reference []float64
	// Costs prices every row of M (NaN: no price); rules that weigh cost
	// need a price for every candidate, the others ignore it.
	Costs []float64
	// Calibration, Domain and KeepOutOfDomain are the Router's.
	Calibration     *Calibration
	Domain          *checkpoint.Domain
	KeepOutOfDomain bool
}

// Router is the router that applies the rule to checkpoint model m's
// candidates: it keeps the Among best-ranked (the shortlist's k), sets Best
// (where out-of-domain queries go) to the best-ranked candidate and the
// rule's own fields, and checks the whole. Its choices report the rule's
// spec with the default model resolved (Choice.Rule).
func (r Rule) Router(m *model.JEIRT, s Setting) (*Router, error) {
	k := kindOf(r.Name)
	if k == nil {
		return nil, fmt.Errorf("route: unknown rule %q: want %s", r.Name, RuleNames())
	}
	if k.key != "" {
		if err := k.check(r.Param); err != nil {
			return nil, fmt.Errorf("route: rule %s: %s %v: %w", r.Name, k.key, r.Param, err)
		}
	}
	rt := &Router{Model: m, Candidates: s.Candidates, Calibration: s.Calibration, Domain: s.Domain, KeepOutOfDomain: s.KeepOutOfDomain}
	ref := s.Reference
	if ref == nil {
		ref = MeanPredictedP(m)
	}
	rt.Candidates = rt.candidates()
	if len(rt.Candidates) == 0 {
		return nil, fmt.Errorf("route: rule %s: no candidate models", r)
	}
	if k.costs {
		if s.Costs == nil {
			return nil, fmt.Errorf("route: rule %s weighs cost; it needs the models' prices", r)
		}
		for _, i := range rt.Candidates {
			if i >= 0 && i < m.NumModels() && !(s.Costs[i] >= 0) {
				return nil, fmt.Errorf("route: rule %s weighs cost; model %q has no price", r, m.Models[i])
			}
		}
		rt.Costs = s.Costs
	}
	if r.Among > 0 {
		rt.Candidates = Shortlist(ref, rt.Candidates, r.Among)
	}
	rt.Best = BestSingle(ref, rt.Candidates)
	if err := k.apply(r, rt, ref); err != nil {
		return nil, err
	}
	applied := r
	if r.Name == RuleMargin {
		applied.Default = m.Models[rt.Default]
	}
	rt.requested, rt.applied, rt.kind = r, applied, k
	if err := rt.Check(); err != nil {
		return nil, err
	}
	return rt, nil
}
