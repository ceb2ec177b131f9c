package irtstat

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/irt"
	"github.com/jeirt/jeirt/train/irt/irttest"
	"github.com/jeirt/jeirt/train/irtstat/fitstat"
)

// On 2PL data whose slopes differ (0.25 and 3, item by item) cross-validation
// compares the nested fits on the same cells: the 2PL predicts held-out cells
// better than the 1PL beyond its standard error, and the 3PL (c = 0 in the
// data) does not beat the 2PL.
func TestCrossValidateNested(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	y := make([][]int, 120)
	theta := make([]float64, len(y))
	for i := range theta {
		theta[i] = rng.NormFloat64()
	}
	for i := range y {
		y[i] = make([]int, 60)
		for j := range y[i] {
			a := []float64{0.25, 3}[j%2]
			if rng.Float64() < model.Sigmoid(a*theta[i]+float64(j%7-3)/3) {
				y[i][j] = 1
			}
		}
	}
	r := irttest.RespFromLabels(y)
	p := model.DefaultPrior
	res, err := CrossValidateFits(context.Background(), []irt.CBMM{{Model: model.OnePL, Prior: p, Accelerate: true},
		{Prior: p, Accelerate: true}, {Model: model.ThreePL, Prior: p, Accelerate: true}}, r, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Nested) != 2 {
		t.Fatalf("nested comparisons: %+v", res.Nested)
	}
	for _, n := range res.Nested {
		t.Log(n)
	}
	a, b := res.Nested[0], res.Nested[1]
	if a.Smaller != "1pl" || a.Larger != "2pl" || a.Verdict != fitstat.VerdictLarger {
		t.Errorf("2PL vs 1PL: %s", a)
	}
	if d := res.Fits[1].Metrics.LogLoss - res.Fits[0].Metrics.LogLoss; d-a.Diff > 1e-12 || a.Diff-d > 1e-12 {
		t.Errorf("2PL vs 1PL: difference %v, the table's log losses differ by %v", a.Diff, d)
	}
	if b.Smaller != "2pl" || b.Larger != "3pl" || b.Verdict == fitstat.VerdictLarger {
		t.Errorf("3PL vs 2PL on data without a floor: %s", b)
	}
}
