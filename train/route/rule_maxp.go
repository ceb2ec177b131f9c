package route

import (
	"fmt"
	"math"
)

// max-p: the candidate with the highest P.
func init() {
	register(&kind{name: RuleMaxP, order: 2, cvRank: 3,
		sweep: func(RouteEvalOptions, float64) ([]sweepPoint, error) {
			return []sweepPoint{{RuleMaxP, math.NaN(), Rule{Name: RuleMaxP, Param: math.NaN()}}}, nil
		},
		apply: func(Rule, *Router, []float64) error { return nil },
		choose: func(rt *Router, ps []ModelP) (int, bool, string) {
			return 0, false, fmt.Sprintf("the highest P of the %d candidates", len(ps))
		}})
}
