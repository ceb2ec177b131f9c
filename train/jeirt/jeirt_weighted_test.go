package jeirt

import (
	"math"
	"testing"

	"github.com/jeirt/jeirt/train/backend"
)

// A pair of n trials with fraction ȳ = k/n (weight n, soft target ȳ) trains
// as its n trials written as n pairs with 0/1 labels: the batch's
// trial-weighted loss and its gradient are those of the expanded batch
// (cross-entropy is linear in the target), for the fused step and the graph
// step, with and without the residual.
func TestJEIRTWeightedEqualsExpandedTrials(t *testing.T) {
	for _, residual := range []bool{false, true} {
		p, b := tinyProblem(residual, false)
		trials := []int{3, 1, 4, 2, 1, 5, 2}
		succ := []int{2, 0, 4, 1, 1, 0, 1}
		w := &backend.JEIRTBatch{X: b.X, Item: b.Item, Mask: b.Mask, Row: b.Row, Model: b.Model}
		e := &backend.JEIRTBatch{X: b.X, Item: b.Item, Mask: b.Mask}
		for k := range b.Row {
			w.Label = append(w.Label, float32(succ[k])/float32(trials[k]))
			w.Weight = append(w.Weight, float32(trials[k]))
			for s := 0; s < trials[k]; s++ {
				e.Row, e.Model = append(e.Row, b.Row[k]), append(e.Model, b.Model[k])
				e.Label = append(e.Label, float32(map[bool]int{true: 1, false: 0}[s < succ[k]]))
			}
		}
		// The residual penalty is per pair, so it differs between the two
		// batches by design; compare the link's part alone there.
		if residual {
			p.ResidualL2 = 0
		}
		for name, grad := range map[string]gradientFunc{"fused": newFusedGradient(p), "graph": newGraphGradient(p)} {
			gw, ge := p.ZeroLike(), p.ZeroLike()
			lw, err := grad.gradient(p, w, gw)
			if err != nil {
				t.Fatal(err)
			}
			le, err := grad.gradient(p, e, ge)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(lw-le) > 1e-6*math.Abs(le) {
				t.Errorf("%s, residual %v: weighted loss %v, expanded %v", name, residual, lw, le)
			}
			for s, a := range gw.Slices() {
				for k := range a {
					x, y := float64(a[k]), float64(ge.Slices()[s][k])
					if math.Abs(x-y) > 1e-5*(1+math.Abs(y)) {
						t.Fatalf("%s, residual %v: gradient %d[%d]: weighted %v, expanded %v", name, residual, s, k, x, y)
					}
				}
			}
		}
	}
}
