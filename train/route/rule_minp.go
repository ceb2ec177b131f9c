package route

import "fmt"

// min-p?p=P: with costs, the cheapest candidate whose P is at least P (the
// highest P when none is).
func init() {
	register(&kind{name: RuleMinP, key: "p", def: 0.7, costs: true, order: 5, cvRank: 5, field: "MinP",
		help: "with --costs: the cheapest model with at least this P(correct) wins",
		check: func(v float64) error {
			if !(v >= 0 && v <= 1) {
				return fmt.Errorf("not in [0, 1]")
			}
			return nil
		},
		sweep: func(o RouteEvalOptions, _ float64) ([]sweepPoint, error) {
			ps := o.MinP
			if ps == nil {
				ps = DefaultMinP
			}
			var out []sweepPoint
			for _, v := range ps {
				out = append(out, sweepPoint{RuleMinP, v, Rule{Name: RuleMinP, Param: v}})
			}
			return out, nil
		},
		apply: func(r Rule, rt *Router, _ []float64) error {
			rt.MinP = r.Param
			return nil
		},
		choose: func(rt *Router, ps []ModelP) (int, bool, string) {
			best, fallback := pickMinP(ps, rt.MinP)
			if fallback {
				return best, true, fmt.Sprintf("no candidate reached P >= %g: the highest P", rt.MinP)
			}
			return best, false, fmt.Sprintf("the cheapest of the candidates with P >= %g", rt.MinP)
		}})
}
