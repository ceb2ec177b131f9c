package route

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
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
	// Shortlist 1 is the best single model and shortlist 2 the max-P rule.
	// Margin rule, default a: x stays on a; on y, b beats a by 0.4, so it
	// switches for δ ≤ 0.4 only.
	tuned := 0.39
	pts, err := RouteEval(m, r, q, RouteEvalOptions{Reference: []float64{0.6, 0.5},
		Margins: []float64{0, 0.39, 0.41, math.Inf(1)}, TunedMargin: &tuned, Shortlists: []int{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteRouteCSV(&buf, pts); err != nil {
		t.Fatal(err)
	}
	want := `policy,rule,param,accuracy,total_cost,mean_cost,items,fallbacks,accuracy_se,vs_best_single,vs_best_single_se,wins,losses
best-single,best-single,,0.5,,,2,0,,,,0,0
random,random,,0.5,,,2,0,,,,0,0
oracle,oracle,,1,,,2,0,,,,0,0
router,max-p,,1,,,2,0,,,,0,0
router,shortlist,1,0.5,,,2,0,,,,0,0
router,shortlist,2,1,,,2,0,,,,0,0
router,margin-val,0.39,1,,,2,0,,,,0,0
router,margin,0,1,,,2,0,,,,0,0
router,margin,0.39,1,,,2,0,,,,0,0
router,margin,0.41,0.5,,,2,0,,,,0,0
router,margin,+Inf,0.5,,,2,0,,,,0,0
`
	if buf.String() != want {
		t.Errorf("curve:\n%s\nwant:\n%s", buf.String(), want)
	}
	if _, err := RouteEval(m, &model.Responses{Models: []string{"z"}, Items: []string{"x"}}, q[:1], RouteEvalOptions{}); err == nil ||
		err.Error() != "route eval: none of the 1 models of the data is in the checkpoint" {
		t.Errorf("unknown models: %v", err)
	}
}

// On a noisy random map, δ = 0 scores exactly as max-P and δ = ∞ exactly as
// the best single model, on any questions; so the δ tuned on validation
// questions is never worse there than either.
func TestTuneMargin(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n, d = 8, 3
	m := &model.JEIRT{Dim: d}
	var ref []float64
	for i := 0; i < n; i++ {
		m.Models = append(m.Models, string(rune('a'+i)))
		for k := 0; k < d; k++ {
			m.M = append(m.M, float32(rng.NormFloat64()))
		}
		ref = append(ref, rng.Float64())
	}
	// Questions answered by a random subset of the models; labels follow the
	// map's P only loosely (the noise a router meets on unseen questions).
	set := func(items int) (*model.Responses, [][]float32) {
		r := &model.Responses{Models: m.Models}
		q := make([][]float32, items)
		for j := 0; j < items; j++ {
			r.Items = append(r.Items, "q"+strconv.Itoa(j))
			q[j] = make([]float32, d)
			for k := range q[j] {
				q[j][k] = float32(rng.NormFloat64())
			}
			for i := 0; i < n; i++ {
				if rng.Float64() < 0.2 {
					continue
				}
				p := 0.5*m.Prob(i, q[j]) + 0.5*ref[i]
				var y uint8
				if rng.Float64() < p {
					y = 1
				}
				r.Model, r.Item, r.Label = append(r.Model, int32(i)), append(r.Item, int32(j)), append(r.Label, y)
			}
		}
		return r, q
	}
	valR, valQ := set(300)
	testR, testQ := set(300)
	find := func(pts []RoutePoint, rule string, param float64) RoutePoint {
		for _, p := range pts {
			if p.Rule == rule && (math.IsNaN(param) || p.Param == param) {
				return p
			}
		}
		t.Fatalf("no point %s %v", rule, param)
		return RoutePoint{}
	}
	valPts, err := RouteEval(m, valR, valQ, RouteEvalOptions{Reference: ref})
	if err != nil {
		t.Fatal(err)
	}
	best := find(valPts, "best-single", math.NaN())
	maxP := find(valPts, "max-p", math.NaN())
	if got := find(valPts, "margin", math.Inf(1)).Accuracy; got != best.Accuracy {
		t.Errorf("margin +Inf: accuracy %v, best single %v", got, best.Accuracy)
	}
	if got := find(valPts, "margin", 0).Accuracy; got != maxP.Accuracy {
		t.Errorf("margin 0: accuracy %v, max-p %v", got, maxP.Accuracy)
	}
	delta, err := TuneMargin(valPts)
	if err != nil {
		t.Fatal(err)
	}
	tunedVal := find(valPts, "margin", delta)
	if tunedVal.Accuracy < best.Accuracy || tunedVal.Accuracy < maxP.Accuracy {
		t.Errorf("tuned δ %v: validation accuracy %v, best single %v, max-p %v", delta, tunedVal.Accuracy, best.Accuracy, maxP.Accuracy)
	}
	for _, p := range valPts {
		if p.Rule == "margin" && (p.Accuracy > tunedVal.Accuracy || p.Accuracy == tunedVal.Accuracy && p.Param > delta) {
			t.Errorf("TuneMargin chose %v (%v), but %v scores %v", delta, tunedVal.Accuracy, p.Param, p.Accuracy)
		}
	}
	testPts, err := RouteEval(m, testR, testQ, RouteEvalOptions{Reference: ref, TunedMargin: &delta})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := find(testPts, "margin-val", delta), find(testPts, "margin", delta); got.Accuracy != want.Accuracy || got.Items != want.Items {
		t.Errorf("margin-val point %+v, margin sweep at the same δ %+v", got, want)
	}
	t.Logf("δ = %v; validation: tuned %.4f best %.4f max-p %.4f", delta, tunedVal.Accuracy, best.Accuracy, maxP.Accuracy)

	// Ties go to the larger δ; no margin points is an error.
	tie := []RoutePoint{{Policy: "router", Rule: "margin", Param: 0.1, Accuracy: 0.8}, {Policy: "router", Rule: "margin", Param: 0.3, Accuracy: 0.8},
		{Policy: "router", Rule: "margin", Param: 0.5, Accuracy: 0.7}, {Policy: "oracle", Rule: "oracle", Param: 9, Accuracy: 1}}
	if got, _ := TuneMargin(tie); got != 0.3 {
		t.Errorf("tie: TuneMargin = %v, want 0.3", got)
	}
	if _, err := TuneMargin(tie[3:]); err == nil || err.Error() != "route eval: no margin points to tune on" {
		t.Errorf("no margins: %v", err)
	}
}

func TestShortlist(t *testing.T) {
	ref := []float64{0.5, 0.9, 0.7, 0.9, math.Inf(-1)}
	for _, c := range []struct {
		cand []int
		t    int
		want []int
	}{
		{[]int{0, 1, 2, 3, 4}, 2, []int{1, 3}}, // tie: the earlier of cand first
		{[]int{3, 2, 1}, 2, []int{3, 1}},
		{[]int{0, 1, 2, 3, 4}, 0, []int{1, 3, 2, 0, 4}},
		{[]int{4, 0}, 5, []int{0, 4}},
	} {
		if got := Shortlist(ref, c.cand, c.t); !slices.Equal(got, c.want) {
			t.Errorf("Shortlist(%v, %d) = %v, want %v", c.cand, c.t, got, c.want)
		}
	}
}
