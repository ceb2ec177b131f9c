package train

import (
	"bytes"
	"math"
	"testing"

	"github.com/jeirt/jeirt/model"
)

// Two models on a hand-made map: "a" (P = 0.8 on question x, 0.3 on y) and
// "b" (0.4 on x, 0.7 on y); the router sends x to a and y to b.
func TestRouteEvalWithoutCosts(t *testing.T) {
	// q_x = (1, 0) and q_y = (0, 1): ‖q‖ = 1, so P = σ(m_k − 1) on axis k.
	logit := func(p float64) float32 { return float32(1 + math.Log(p/(1-p))) }
	m := &model.JEIRT{Dim: 2, Models: []string{"a", "b"}, M: []float32{logit(0.8), logit(0.3), logit(0.4), logit(0.7)}}
	q := [][]float32{{1, 0}, {0, 1}}
	r := &model.Responses{Models: []string{"a", "b", "c"}, Items: []string{"x", "y"},
		Model: []int32{0, 1, 0, 1, 2}, Item: []int32{0, 0, 1, 1, 1}, Label: []uint8{1, 0, 0, 1, 1}}
	// Reference (training accuracy): a, 0.6, is the best single model.
	pts, err := RouteEval(m, r, q, RouteEvalOptions{Reference: []float64{0.6, 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteRouteCSV(&buf, pts); err != nil {
		t.Fatal(err)
	}
	want := `policy,rule,param,accuracy,total_cost,mean_cost,items,fallbacks
best-single,best-single,,0.5,,,2,0
random,random,,0.5,,,2,0
oracle,oracle,,1,,,2,0
router,max-p,,1,,,2,0
`
	if buf.String() != want {
		t.Errorf("curve:\n%s\nwant:\n%s", buf.String(), want)
	}
	if _, err := RouteEval(m, &model.Responses{Models: []string{"z"}, Items: []string{"x"}}, q[:1], RouteEvalOptions{}); err == nil ||
		err.Error() != "route eval: none of the 1 models of the data is in the checkpoint" {
		t.Errorf("unknown models: %v", err)
	}
}
