package route

import (
	"fmt"
	"math"
)

// lambda?lambda=L: with costs, the highest P − L·cost.
func init() {
	register(&kind{name: RuleLambda, key: "lambda", def: math.NaN(), example: "0.01", costs: true, order: 6, cvRank: 4, field: "Lambda",
		help: "with --costs: choose the highest P − lambda·cost instead",
		check: func(v float64) error {
			if !(v >= 0) || math.IsInf(v, 0) {
				return fmt.Errorf("want a finite number >= 0")
			}
			return nil
		},
		sweep: func(o RouteEvalOptions, span float64) ([]sweepPoint, error) {
			ls := o.Lambda
			if ls == nil {
				for _, s := range DefaultLambdaScale {
					ls = append(ls, s/span)
				}
			}
			var out []sweepPoint
			for _, v := range ls {
				out = append(out, sweepPoint{RuleLambda, v, Rule{Name: RuleLambda, Param: v}})
			}
			return out, nil
		},
		apply: func(r Rule, rt *Router, _ []float64) error {
			rt.Lambda = r.Param
			return nil
		},
		choose: func(rt *Router, ps []ModelP) (int, bool, string) {
			return pickLambda(ps, rt.Lambda), false, fmt.Sprintf("the highest P - %g x cost", rt.Lambda)
		}})
}
