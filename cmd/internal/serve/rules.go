package serve

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/jeirt/jeirt/train/route"
)

// RouterModel is the model name a chat request gives to have jeirt choose
// the model: "router" alone, or "router:<rule>" with the rule's parameters
// as a URL query, "router:shortlist?k=3" (see route.ParseRule).
const RouterModel = "router"

// ParseRouterModel reads a chat request's model name. It reports router
// false for a name that is not "router" or "router:..." (a model to send
// the request to directly). "router" alone gives the zero RouteParams: the
// checkpoint's recorded default rule (see RouteParams and GET /v1/router);
// "router:SPEC" the rule of route.ParseRule's spec. Errors are
// requestErrors on the field "model" naming the rule or parameter at fault.
//
//	router:best-single            the best model by training accuracy, always
//	router:max-p                  the highest P
//	router:shortlist?k=3          the highest P among the 3 models with the best training accuracy (k: 3)
//	router:margin?delta=0.05      the default model unless another's P beats it by delta (default=NAME)
//	router:min-p?p=0.6            with costs: the cheapest model with P ≥ p (p: 0.7)
//	router:lambda?lambda=0.01     with costs: the highest P − lambda·cost
//
// and k=T with any rule chooses among the T best-ranked models.
func ParseRouterModel(name string) (p RouteParams, router bool, err error) {
	if name == RouterModel {
		return p, true, nil
	}
	spec, ok := strings.CutPrefix(name, RouterModel+":")
	if !ok {
		return p, false, nil
	}
	ruleName, _, _ := strings.Cut(spec, "?")
	if !slices.ContainsFunc(route.Rules(), func(r route.RuleInfo) bool { return r.Name == ruleName }) {
		return p, true, badField("model", "%q: unknown rule %q: want router or router:<rule> with rule %s", name, ruleName, route.RuleNames())
	}
	r, err := route.ParseRule(spec)
	if err != nil {
		msg := strings.Replace(err.Error(), "for example ", "for example "+RouterModel+":", 1)
		return p, true, badField("model", "%q: %s", name, msg)
	}
	p.Rule, p.Shortlist, p.Default = r.Name, r.Among, r.Default
	info := ruleInfo(r.Name)
	switch param := p.param(info.Field); {
	case info.Field == "Shortlist":
		p.Shortlist = int(r.Param)
	case param != nil:
		v := r.Param
		*param = &v
	case info.Key != "": // a rule whose parameter has no field of its own: the whole spec
		p = RouteParams{Rule: r.String()}
	}
	return p, true, nil
}

// ruleInfo is the rule named name (the zero RuleInfo for none).
func ruleInfo(name string) route.RuleInfo {
	for _, r := range route.Rules() {
		if r.Name == name {
			return r
		}
	}
	return route.RuleInfo{}
}

// param is the field of p that holds the parameter of a rule whose
// route.RuleInfo.Field is field (nil for none; the shortlist's k is the
// int Shortlist).
func (p *RouteParams) param(field string) **float64 {
	switch field {
	case "MinP":
		return &p.MinP
	case "Lambda":
		return &p.Lambda
	case "Margin":
		return &p.Margin
	}
	return nil
}

// routerIDs are the model names GET /v1/models lists for the router: plain
// "router", then each rule, with the parameter a rule cannot do without
// (the rule's example: margin's delta 0.05, as in docs/onboarding-routing.md;
// lambda's 0.1 over the span of the costs, the middle of jeirt route eval's grid). The cost
// rules are listed only when the server has costs.
func (st *state) routerIDs() []string {
	ids := []string{RouterModel}
	for _, r := range route.Rules() {
		if r.Costs && st.costs == nil {
			continue
		}
		id := RouterModel + ":" + r.Name
		switch {
		case r.Name == route.RuleLambda:
			id += "?lambda=" + strconv.FormatFloat(exampleLambda(st.costs), 'g', 2, 64)
		case r.Key != "" && math.IsNaN(r.Def):
			id += "?" + r.Key + "=" + r.Example
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
