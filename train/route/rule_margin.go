package route

import (
	"fmt"
	"math"
	"slices"
)

// margin?delta=D[&default=MODEL]: the default model (the best-ranked
// candidate unless named) unless another candidate's P beats its P by at
// least D. A named default is also where out-of-domain queries go (Best):
// the model the user trusts when the map cannot be.
func init() {
	register(&kind{name: RuleMargin, key: "delta", def: math.NaN(), example: "0.05", order: 4, cvRank: 2, field: "Margin",
		help: "without --costs: leave the default model only for a model whose P beats its P by at least this (inf: never)",
		check: func(v float64) error {
			if !(v >= 0) || math.IsInf(v, 0) {
				return fmt.Errorf("want a finite number >= 0 (best-single is the margin without end)")
			}
			return nil
		},
		sweep: func(o RouteEvalOptions, _ float64) ([]sweepPoint, error) {
			rule := func(delta float64) Rule { // +Inf: always the default, best-single
				if math.IsInf(delta, 1) {
					return Rule{Name: RuleBestSingle, Param: math.NaN()}
				}
				return Rule{Name: RuleMargin, Param: delta}
			}
			var out []sweepPoint
			if o.TunedMargin != nil {
				out = append(out, sweepPoint{"margin-val", *o.TunedMargin, rule(*o.TunedMargin)})
			}
			margins := o.Margins
			if margins == nil {
				margins = DefaultMargins
			}
			if !slices.Contains(margins, math.Inf(1)) {
				margins = append(slices.Clip(margins), math.Inf(1))
			}
			for _, v := range margins {
				if !(v >= 0) {
					return nil, fmt.Errorf("route eval: margin %v must be a non-negative number (or +Inf)", v)
				}
				out = append(out, sweepPoint{RuleMargin, v, rule(v)})
			}
			return out, nil
		},
		apply: func(r Rule, rt *Router, _ []float64) error {
			rt.Margin, rt.Default = r.Param, rt.Best
			if r.Default != "" {
				i := slices.Index(rt.Model.Models, r.Default)
				if i < 0 || !slices.Contains(rt.Candidates, i) {
					return fmt.Errorf("route: rule %s: default model %q is not one of the candidates", r, r.Default)
				}
				rt.Default, rt.Best = i, i
			}
			return nil
		},
		choose: func(rt *Router, ps []ModelP) (int, bool, string) {
			best := pickMargin(ps, rt.Default, rt.Margin)
			name := rt.Model.Models[rt.Default]
			d := indexOfModel(ps, rt.Default)
			switch {
			case d < 0:
				return best, false, fmt.Sprintf("the default model %s is not a candidate: the highest P", name)
			case best == d && d == 0:
				return best, false, fmt.Sprintf("the default model %s has the highest P", name)
			case best == d:
				return best, false, fmt.Sprintf("kept the default model %s: the highest P, %s's, beats its P by %.4f, less than %g", name, rt.Model.Models[ps[0].Model], ps[0].P-ps[d].P, rt.Margin)
			}
			return best, false, fmt.Sprintf("%s's P beats the default model %s's by %.4f, at least %g", rt.Model.Models[ps[best].Model], name, ps[best].P-ps[d].P, rt.Margin)
		}})
}
