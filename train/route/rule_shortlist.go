package route

import (
	"fmt"
	"math"
)

// shortlist?k=T: the highest P among the T best-ranked candidates.
func init() {
	register(&kind{name: RuleShortlist, key: "k", def: 3, order: 3, field: "Shortlist",
		help: "choose only among the T best models (by accuracy on --data, else mean predicted P); 0: all",
		check: func(v float64) error {
			if !(v >= 1) || v != math.Trunc(v) || math.IsInf(v, 0) {
				return fmt.Errorf("want a whole number of models, at least 1")
			}
			return nil
		},
		apply: func(r Rule, rt *Router, ref []float64) error {
			rt.Candidates = Shortlist(ref, rt.Candidates, int(r.Param))
			return nil
		},
		choose: func(rt *Router, ps []ModelP) (int, bool, string) {
			return 0, false, fmt.Sprintf("the highest P among the %d best-ranked candidates", len(ps))
		}})
}
