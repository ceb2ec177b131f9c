package onboard

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/jeirt/jeirt/model"
)

// A new model's row fitted from k of n trials per question (AddCounts) is
// the row fitted from the same trials as n 0/1 answers (the objective is the
// same sum), and its Laplace posterior the same Gaussian.
func TestFitRowTrialsEqualExpanded(t *testing.T) {
	const d = 3
	rng := rand.New(rand.NewPCG(3, 4))
	counts, expanded := &RowData{Dim: d}, &RowData{Dim: d}
	for j := 0; j < 80; j++ {
		q := make([]float32, d)
		for k := range q {
			q[k] = float32(rng.NormFloat64())
		}
		n := 1 + rng.IntN(6)
		k := rng.IntN(n + 1)
		counts.AddCounts(q, float64(k)/float64(n), n)
		for s := 0; s < n; s++ {
			expanded.Add(q, map[bool]uint8{true: 1, false: 0}[s < k])
		}
	}
	ob := Onboard{Prior: "l2", L2: 0.1}
	prior, err := ob.PriorFor(&model.JEIRT{Dim: d})
	if err != nil {
		t.Fatal(err)
	}
	a, _, err := ob.FitRow(counts, prior)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := ob.FitRow(expanded, prior)
	if err != nil {
		t.Fatal(err)
	}
	pa, _ := ob.Posterior(counts, prior)
	pb, _ := ob.Posterior(expanded, prior)
	for k := range a {
		if math.Abs(a[k]-b[k]) > 1e-6 {
			t.Errorf("row[%d]: from counts %v, from expanded trials %v", k, a[k], b[k])
		}
	}
	for k := range pa.Precision {
		if math.Abs(pa.Precision[k]-pb.Precision[k]) > 1e-6*(1+math.Abs(pb.Precision[k])) {
			t.Errorf("posterior precision[%d]: %v vs %v", k, pa.Precision[k], pb.Precision[k])
		}
	}
}
