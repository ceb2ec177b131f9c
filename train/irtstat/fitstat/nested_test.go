package fitstat

import (
	"math"
	"testing"

	"github.com/jeirt/jeirt/model"
)

// Compare's difference is the weighted mean of the cells' log-loss
// differences and its SE the cluster-robust one, computed here by hand on
// four cells of two models.
func TestCompareByHand(t *testing.T) {
	h := HeldOut{Y: []float64{1, 0, 1, 0.5}, W: []float64{1, 1, 1, 2}, Model: []int32{0, 0, 1, 1}}
	small := []float64{0.6, 0.4, 0.7, 0.5}
	large := []float64{0.8, 0.3, 0.6, 0.5}
	n := Compare("1pl", "2pl", small, large, h)
	d := []float64{math.Log(0.6 / 0.8), math.Log(0.6 / 0.7), math.Log(0.7 / 0.6), 0}
	diff := (d[0] + d[1] + d[2] + 2*d[3]) / 5
	s0, s1 := (d[0]-diff)+(d[1]-diff), (d[2]-diff)+2*(d[3]-diff)
	se := math.Sqrt(2 * (s0*s0 + s1*s1) / 25)
	if math.Abs(n.Diff-diff) > 1e-15 || math.Abs(float64(n.SE)-se) > 1e-15 || math.Abs(float64(n.Z)-diff/se) > 1e-12 || n.Verdict != VerdictTie {
		t.Errorf("got %+v, want diff %v se %v z %v, a tie", n, diff, se, diff/se)
	}
	if got := n.String(); got != "2pl vs 1pl: held-out log loss -0.05754 per answer (se 0.13070, z -0.44): no difference: prefer the smaller model" {
		t.Errorf("String: %q", got)
	}
	one := Compare("a", "b", small, large, HeldOut{Y: h.Y, W: h.W, Model: []int32{0, 0, 0, 0}})
	if !math.IsNaN(float64(one.SE)) || one.Verdict != VerdictTie {
		t.Errorf("one model: %+v, want no SE and a tie", one)
	}
}

func TestNests(t *testing.T) {
	for _, tc := range []struct {
		s     model.Family
		sr    int
		l     model.Family
		lr    int
		nests bool
	}{{model.OnePL, 1, model.TwoPL, 1, true}, {model.TwoPL, 1, model.ThreePL, 1, true}, {model.TwoPL, 1, model.TwoPL, 2, true},
		{model.OnePL, 1, model.ThreePL, 1, false}, {model.TwoPL, 2, model.TwoPL, 1, false}, {model.TwoPL, 1, model.ThreePL, 2, false}, {model.TwoPL, 1, model.TwoPL, 1, false}} {
		if got := Nests(tc.s, tc.sr, tc.l, tc.lr); got != tc.nests {
			t.Errorf("%s rank %d in %s rank %d: %v", tc.s, tc.sr, tc.l, tc.lr, got)
		}
	}
}
