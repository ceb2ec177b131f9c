package eval

import (
	"context"
	"math"
	"testing"

	"github.com/jeirt/jeirt/model"
)

// Two models, four items; item vectors place items 0,1 together and 2,3 together.
func baselineFixture() (trainR, valR, testR *model.Responses, feat []float32) {
	names := []string{"a", "b"}
	items := []string{"i0", "i1", "i2", "i3"}
	mk := func(m, i []int32, l []uint8) *model.Responses {
		return &model.Responses{Models: names, Items: items, Model: m, Item: i, Label: l}
	}
	// model a: right on i1, i2 wrong, i3 right; model b: i0 right, i1 right, i2 wrong.
	trainR = mk([]int32{0, 0, 0, 1, 1, 1}, []int32{1, 2, 3, 0, 1, 2}, []uint8{1, 0, 1, 1, 1, 0})
	valR = mk([]int32{1}, []int32{3}, []uint8{0})
	testR = mk([]int32{0}, []int32{0}, []uint8{1})
	feat = []float32{1, 0, 0.9, 0.1, 0, 1, 0.2, 1}
	return
}

func TestSimpleBaselines(t *testing.T) {
	trainR, _, testR, _ := baselineFixture()
	mean := 4.0 / 6
	if p := MajorityPredict(trainR, testR); p[0] != mean {
		t.Errorf("majority %v, want %v", p[0], mean)
	}
	// model a: 2 of 3 right, shrunk (2 + 4/6)/(3 + 1).
	if p := ModelMeanPredict(trainR, testR); math.Abs(p[0]-(2+mean)/4) > 1e-12 {
		t.Errorf("model mean %v, want %v", p[0], (2+mean)/4)
	}
	// item 0: 1 of 1 right, shrunk (1 + 4/6)/2.
	if p := ItemMeanPredict(trainR, testR); math.Abs(p[0]-(1+mean)/2) > 1e-12 {
		t.Errorf("item mean %v, want %v", p[0], (1+mean)/2)
	}
	// An item without training cells falls back to the model mean.
	unseen := &model.Responses{Models: trainR.Models, Items: append(trainR.Items, "i4"), Model: []int32{1}, Item: []int32{4}, Label: []uint8{1}}
	tr := &model.Responses{Models: trainR.Models, Items: unseen.Items, Model: trainR.Model, Item: trainR.Item, Label: trainR.Label}
	if p, q := ItemMeanPredict(tr, unseen), ModelMeanPredict(tr, unseen); p[0] != q[0] {
		t.Errorf("unseen item: item mean %v, model mean %v", p[0], q[0])
	}
}

func TestKNNBaseline(t *testing.T) {
	trainR, valR, testR, feat := baselineFixture()
	p, k, err := KNN{Features: feat, Dim: 2}.Fit(context.Background(), trainR, valR, testR)
	if err != nil {
		t.Fatal(err)
	}
	// Validation: model b on i3; neighbours of i3 by cosine: i2 (b wrong), then i1, i0 (b right).
	// k = 1 predicts (0 + p_b)/2 < 0.5: correct (label 0), and has the lowest log loss among accurate k.
	if k != 1 {
		t.Errorf("k = %d, want 1", k)
	}
	// Test: model a on i0; nearest is i1, which a got right: (1 + p_a)/2.
	pa := (2 + 4.0/6) / 4
	if want := (1 + pa) / 2; math.Abs(p[0]-want) > 1e-12 {
		t.Errorf("knn p = %v, want %v", p[0], want)
	}
}
