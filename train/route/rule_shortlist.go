package route

import (
	"fmt"
	"math"
)

// shortlist?k=T: the highest P among the T best-ranked candidates.
func init() {
	register(&kind{name: RuleShortlist, key: "k", def: 3, order: 3, cvRank: 1, field: "Shortlist",
		help: "choose only among the T best models (by accuracy on --data, else mean predicted P); 0: all",
		check: func(v float64) error {
			if !(v >= 1) || v != math.Trunc(v) || math.IsInf(v, 0) {
				return fmt.Errorf("want a whole number of models, at least 1")
			}
			return nil
		},
		sweep: func(o RouteEvalOptions, _ float64) ([]sweepPoint, error) {
			ts := o.Shortlists
			if ts == nil {
				ts = DefaultShortlists
			}
			var out []sweepPoint
			for _, t := range ts {
				if t < 1 {
					return nil, fmt.Errorf("route eval: shortlist %d must be at least 1", t)
				}
				out = append(out, sweepPoint{RuleShortlist, float64(t), Rule{Name: RuleShortlist, Param: float64(t)}})
			}
			return out, nil
		},
		apply: func(r Rule, rt *Router, ref []float64) error {
			rt.Candidates = Shortlist(ref, rt.Candidates, int(r.Param))
			return nil
		},
		choose: func(rt *Router, ps []ModelP) (int, bool, string) {
			return 0, false, fmt.Sprintf("the highest P among the %d best-ranked candidates", len(ps))
		}})
}
