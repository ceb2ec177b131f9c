package route

// best-single: always the best-ranked candidate (by training accuracy),
// whatever the P.
func init() {
	register(&kind{name: RuleBestSingle, order: 1,
		apply: func(_ Rule, rt *Router, _ []float64) error {
			rt.Margin, rt.Default = posInf, rt.Best
			return nil
		},
		choose: func(rt *Router, ps []ModelP) (int, bool, string) {
			return indexOfModel(ps, rt.Best), false, "the best-ranked candidate (training accuracy), whatever the P"
		}})
}
