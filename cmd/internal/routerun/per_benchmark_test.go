package routerun

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/train/route"
)

// Model a is best overall, b is best on benchmark "code": per-benchmark-best
// sends code questions to b and the rest to a.
func TestPerBenchmarkBest(t *testing.T) {
	m := &model.JEIRT{Dim: 2, Models: []string{"a", "b"}, M: []float32{1, 1, 1, 1}}
	q := [][]float32{{1, 0}, {1, 0}, {0, 1}, {0, 1}}
	// Test questions: x1, x2 (chat), y1, y2 (code). a answers the chat ones,
	// b the code ones.
	r := &model.Responses{Models: []string{"a", "b"}, Items: []string{"x1", "x2", "y1", "y2"}, ItemGroup: []string{"chat", "chat", "code", "code"}}
	for i, row := range [][]uint8{{1, 1, 0, 0}, {0, 0, 1, 1}} {
		for j, y := range row {
			r.Model, r.Item, r.Label = append(r.Model, int32(i)), append(r.Item, int32(j)), append(r.Label, y)
		}
	}
	// Training data: a 0.75 overall (1.0 chat, 0.5 code), b 0.5 (0.25 chat, 0.75 code).
	dir := t.TempDir()
	train := "model,item,correct,category\n" +
		"a,t1,1,chat\na,t2,1,chat\na,t3,1,chat\na,t4,1,chat\na,u1,1,code\na,u2,0,code\na,u3,1,code\na,u4,0,code\n" +
		"b,t1,0,chat\nb,t2,0,chat\nb,t3,1,chat\nb,t4,0,chat\nb,u1,1,code\nb,u2,1,code\nb,u3,1,code\nb,u4,0,code\n"
	p := filepath.Join(dir, "train.csv")
	os.WriteFile(p, []byte(train), 0o644)
	ref, err := TrainReference(m, p, read.Options{})
	if err != nil {
		t.Fatal(err)
	}
	bench, err := TrainBenchmarkReference(m, p, read.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if bench["code"][1] != 0.75 || bench["chat"][0] != 1 {
		t.Fatalf("benchmark reference %v", bench)
	}
	pts, err := route.RouteEval(m, r, q, route.RouteEvalOptions{Reference: ref, BenchmarkReference: bench, Margins: []float64{math.Inf(1)}, Shortlists: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	acc := map[string]float64{}
	for _, pt := range pts {
		acc[pt.Policy] = pt.Accuracy
	}
	if acc["best-single"] != 0.5 || acc["per-benchmark-best"] != 1 {
		t.Errorf("best-single %v, per-benchmark-best %v (want 0.5, 1)", acc["best-single"], acc["per-benchmark-best"])
	}
	// Without groups in the data, the policy is left out.
	r.ItemGroup = nil
	pts, _ = route.RouteEval(m, r, q, route.RouteEvalOptions{Reference: ref, BenchmarkReference: bench})
	for _, pt := range pts {
		if pt.Policy == "per-benchmark-best" {
			t.Error("per-benchmark-best without item groups")
		}
	}
}
