package route

import (
	"math"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
)

// route eval with finite costs near 1e308: the costs of one question's
// three models summed to +Inf, so random's total and mean cost were +Inf;
// now they are the mean of the three. Two questions' total is beyond the
// float64 range: an error, not +Inf. Over splits the mean of totals near
// the range is finite.
func TestRouteEvalCostsNearTheFloatRange(t *testing.T) {
	m := &model.JEIRT{Dim: 1, Models: []string{"a", "b", "c"}, M: []float32{2, 1, 0}}
	q := [][]float32{{1}, {1}}
	costs := []float64{1.2e308, 1e308, 0.8e308}
	one := &model.Responses{Models: []string{"a", "b", "c"}, Items: []string{"x"},
		Model: []int32{0, 1, 2}, Item: []int32{0, 0, 0}, Label: []uint8{1, 0, 1}}
	pts, err := RouteEval(m, one, q[:1], RouteEvalOptions{Reference: []float64{0.9, 0.5, 0.1}, Costs: costs})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pts {
		if !model.Finite(p.TotalCost) || !model.Finite(p.MeanCost) || p.MeanCost < 0.8e308 || p.MeanCost > 1.2e308 {
			t.Errorf("%s %s: total cost %v, mean cost %v", p.Policy, p.Rule, p.TotalCost, p.MeanCost)
		}
		if p.Policy == "random" && math.Abs(p.MeanCost-1e308) > 1e293 {
			t.Errorf("random: mean cost %v, want 1e308 (the mean of the three)", p.MeanCost)
		}
	}
	two := &model.Responses{Models: []string{"a", "b", "c"}, Items: []string{"x", "y"},
		Model: []int32{0, 1, 2, 0, 1, 2}, Item: []int32{0, 0, 0, 1, 1, 1}, Label: []uint8{1, 0, 1, 0, 1, 1}}
	if _, err := RouteEval(m, two, q, RouteEvalOptions{Reference: []float64{0.9, 0.5, 0.1}, Costs: costs}); err == nil ||
		!strings.Contains(err.Error(), "the total cost of its 2 questions is beyond the float64 range") {
		t.Errorf("two questions at ~1e308 each: %v, want the total's overflow named", err)
	}
	split := func(total float64) []RoutePoint {
		return []RoutePoint{{Policy: "best-single", Rule: "best-single", Param: math.NaN(), Accuracy: 0.5, TotalCost: total, MeanCost: total, Items: 1}}
	}
	got := Combine([][]RoutePoint{split(1.5e308), split(1.7e308)}, 0.25)
	if len(got) != 1 || math.Abs(got[0].TotalCost-1.6e308) > 1e293 || math.Abs(got[0].MeanCost-1.6e308) > 1e293 {
		t.Errorf("over two splits: %+v, want total and mean cost 1.6e308", got)
	}
}
