package serve

import (
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// RouterModel is the model name a chat request gives to have jeirt choose
// the model: "router" alone, or "router:<rule>" with the rule's parameters
// as a URL query, "router:shortlist?k=3" (see RouterRules).
const RouterModel = "router"

// RouterRule is a routing rule a chat request can name as
// "router:<rule>[?param=value&...]".
type RouterRule struct {
	Name string
	// Params are the rule's own parameters, each with what it sets; every
	// rule also takes k (choose among the k models with the highest mean
	// predicted P, as the shortlist rule does).
	Params map[string]string
	// Costs says the rule weighs cost: it needs the server's --costs.
	Costs bool
}

// RouterRules are the rules of jeirt route, in the order GET /v1/models
// lists them.
var RouterRules = []RouterRule{
	{Name: "best-single"},
	{Name: "max-p"},
	{Name: "shortlist", Params: map[string]string{"k": "shortlist"}},
	{Name: "margin", Params: map[string]string{"delta": "margin", "default": "default"}},
	{Name: "min-p", Params: map[string]string{"p": "min_p"}, Costs: true},
	{Name: "lambda", Params: map[string]string{"lambda": "lambda"}, Costs: true},
}

// DefaultShortlist is the shortlist rule's k when a request gives none: the
// shortlist of three is the rule that did best against the best single
// model in docs/onboarding-routing.md's study.
const DefaultShortlist = 3

// ParseRouterModel reads a chat request's model name. It reports router
// false for a name that is not "router" or "router:..." (a model to send
// the request to directly). "router" alone gives the zero RouteParams: the
// checkpoint's recorded default rule (see RouteParams and GET /v1/router). Errors are requestErrors on the
// field "model" naming the rule or parameter at fault.
//
//	router:best-single            the best model by training accuracy, always
//	router:max-p                  the highest P
//	router:shortlist?k=3          the highest P among the 3 models with the highest mean P (k: 3)
//	router:margin?delta=0.05      the default model unless another's P beats it by delta (default=NAME)
//	router:min-p?p=0.6            with costs: the cheapest model with P ≥ p (p: 0.7)
//	router:lambda?lambda=0.01     with costs: the highest P − lambda·cost
func ParseRouterModel(name string) (p RouteParams, router bool, err error) {
	if name == RouterModel {
		return p, true, nil
	}
	spec, ok := strings.CutPrefix(name, RouterModel+":")
	if !ok {
		return p, false, nil
	}
	ruleName, query, _ := strings.Cut(spec, "?")
	k := slices.IndexFunc(RouterRules, func(r RouterRule) bool { return r.Name == ruleName })
	if k < 0 {
		return p, true, badField("model", "%q: unknown rule %q: want router or router:<rule> with rule %s", name, ruleName, ruleNames())
	}
	rule := RouterRules[k]
	p.Rule = rule.Name
	vals, err := url.ParseQuery(query)
	if err != nil {
		return p, true, badField("model", "%q: the parameters after ? are not name=value pairs joined by &: %v", name, err)
	}
	for key, vs := range vals {
		field, ok := rule.Params[key]
		if !ok && key == "k" {
			field, ok = "shortlist", true
		}
		if !ok {
			return p, true, badField("model", "%q: rule %s has no parameter %q (it takes %s)", name, rule.Name, key, paramNames(rule))
		}
		if len(vs) != 1 {
			return p, true, badField("model", "%q: parameter %s is given %d times", name, key, len(vs))
		}
		v := vs[0]
		if field == "default" {
			p.Default = v
			continue
		}
		if field == "shortlist" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return p, true, badField("model", "%q: k=%s: want a whole number of models, at least 1", name, v)
			}
			p.Shortlist = n
			continue
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(x) {
			return p, true, badField("model", "%q: %s=%s is not a number", name, key, v)
		}
		switch field {
		case "margin":
			p.Margin = &x
		case "min_p":
			p.MinP = &x
		case "lambda":
			p.Lambda = &x
		}
	}
	switch {
	case rule.Name == "margin" && p.Margin == nil:
		return p, true, badField("model", "%q: rule margin needs its delta, for example router:margin?delta=0.05", name)
	case rule.Name == "lambda" && p.Lambda == nil:
		return p, true, badField("model", "%q: rule lambda needs its lambda, for example router:lambda?lambda=0.01", name)
	}
	return p, true, nil
}

func ruleNames() string {
	var names []string
	for _, r := range RouterRules {
		names = append(names, r.Name)
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

func paramNames(r RouterRule) string {
	names := []string{"k"}
	for n := range r.Params {
		if n != "k" {
			names = append(names, n)
		}
	}
	slices.Sort(names[1:])
	return strings.Join(names, ", ")
}

// routerIDs are the model names GET /v1/models lists for the router: plain
// "router", then each rule, with the parameter a rule cannot do without
// (margin's delta 0.05, as in docs/onboarding-routing.md; lambda's 0.1 over
// the span of the costs, the middle of jeirt route eval's grid). The cost
// rules are listed only when the server has costs.
func (st *state) routerIDs() []string {
	ids := []string{RouterModel}
	for _, r := range RouterRules {
		if r.Costs && st.costs == nil {
			continue
		}
		id := RouterModel + ":" + r.Name
		switch r.Name {
		case "margin":
			id += "?delta=0.05"
		case "lambda":
			id += "?lambda=" + strconv.FormatFloat(exampleLambda(st.costs), 'g', 2, 64)
		}
		ids = append(ids, id)
	}
	return ids
}

// exampleLambda is 0.1 over the span of the known costs: at that λ a model
// must be 0.1 more likely to answer to be worth the whole price range.
func exampleLambda(costs []float64) float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range costs {
		if !math.IsNaN(c) {
			lo, hi = math.Min(lo, c), math.Max(hi, c)
		}
	}
	if span := hi - lo; span > 0 && !math.IsInf(span, 0) {
		return 0.1 / span
	}
	return 0.1
}
