package eval

import (
	"math"
	"testing"

	"github.com/jeirt/jeirt/model"
)

// Three training benchmarks along e1, e2 and e1+e2 and a held-out one along
// −e1 (with lengths that must not matter): the held-out mean direction is
// (−1, 0), the training mean (after unit-normalising each item) is
// ((1 + 0 + 1/√2)/3, (0 + 1 + 1/√2)/3).
func TestBenchmarkAlignment(t *testing.T) {
	q := []float32{
		2, 0, 5, 0, // a
		0, 1, 0, 3, // b
		1, 1, 4, 4, // c
		-7, 0, -0.5, 0, // held
	}
	group := []string{"a", "a", "b", "b", "c", "c", "h", "h"}
	al := BenchmarkAlignment(q, 2, group, []string{"h"})
	s := 1 / math.Sqrt2
	tx, ty := (1+0+s)/3, (0+1+s)/3
	want := -tx / math.Hypot(tx, ty)
	if math.Abs(al.Cosine-want) > 1e-6 {
		t.Errorf("cosine %v, want %v", al.Cosine, want)
	}
	if math.Abs(al.PerBenchmark["a"]+1) > 1e-6 || math.Abs(al.PerBenchmark["b"]) > 1e-6 || math.Abs(al.PerBenchmark["c"]+s) > 1e-6 {
		t.Errorf("per benchmark %v", al.PerBenchmark)
	}
	if al.Nearest != "b" {
		t.Errorf("nearest %q, want b", al.Nearest)
	}
}

// Model 0 trained on a's questions (e1), model 1 on b's (e2), model 2 on
// c's (e1 + e2); all answered the held-out questions (−e1). Their cosines are
// −1, 0 and −1/√2, and their held-out accuracies 0, 1 and ½: ρ = 1.
func TestAlignmentPerModel(t *testing.T) {
	q := []float32{2, 0, 5, 0, 0, 1, 0, 3, 1, 1, 4, 4, -7, 0, -0.5, 0}
	models := []string{"m0", "m1", "m2"}
	items := []string{"a1", "a2", "b1", "b2", "c1", "c2", "h1", "h2"}
	trainR := &model.Responses{Models: models, Items: items,
		Model: []int32{0, 0, 1, 1, 2, 2}, Item: []int32{0, 1, 2, 3, 4, 5}, Label: []uint8{1, 1, 1, 1, 1, 1}}
	testR := &model.Responses{Models: models, Items: items,
		Model: []int32{0, 0, 1, 1, 2, 2}, Item: []int32{6, 7, 6, 7, 6, 7}, Label: []uint8{1, 1, 1, 1, 1, 1}}
	p := []float64{0.1, 0.2, 0.9, 0.8, 0.9, 0.2}
	al := BenchmarkAlignment(q, 2, []string{"a", "a", "b", "b", "c", "c", "h", "h"}, []string{"h"})
	AddPerModel(al, q, 2, trainR, testR, p)
	if math.Abs(al.PerModel["m0"]+1) > 1e-9 || math.Abs(al.PerModel["m1"]) > 1e-9 || math.Abs(al.PerModel["m2"]+1/math.Sqrt2) > 1e-9 {
		t.Errorf("per model %v", al.PerModel)
	}
	if al.AccuracySpearman != 1 {
		t.Errorf("Spearman(cosine, accuracy) %v, want 1", al.AccuracySpearman)
	}
}
