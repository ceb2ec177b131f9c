package onboard

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/synth"
)

// The leave-one-out residuals of Score, one Newton step from the MAP row,
// agree with refitting the row without each cell.
func TestLOOResidualsMatchRefits(t *testing.T) {
	r, truth, err := synth.Generate(synth.Options{Kind: "jeirt", Models: 20, Items: 60, Seed: 5, EmbedDim: 8})
	if err != nil {
		t.Fatal(err)
	}
	m := checkpointFromTruth(r, truth, seq(1, 20))
	ob := Onboard{}
	prior, err := ob.PriorFor(m)
	if err != nil {
		t.Fatal(err)
	}
	cells := r.ByModel().Row(0)
	data := &RowData{Dim: m.Dim}
	for _, c := range cells {
		data.AddCell(m.ItemEmbedding(int(r.Item[c])), r, int(c))
	}
	post, err := ob.Posterior(data, prior)
	if err != nil {
		t.Fatal(err)
	}
	var ch mat.Cholesky
	if !ch.Factorize(mat.NewSymDense(m.Dim, post.Precision)) {
		t.Fatal("posterior precision not positive definite")
	}
	mean, variance, err := looResiduals(data, post, &ch)
	if err != nil {
		t.Fatal(err)
	}
	// The exact residuals: a refit without cell j, then y_j − P_j.
	e := make([]float64, len(cells))
	var exact float64
	for j, c := range cells {
		rest := &RowData{Dim: m.Dim}
		for k, c2 := range cells {
			if k != j {
				rest.AddCell(m.ItemEmbedding(int(r.Item[c2])), r, int(c2))
			}
		}
		row, _, err := ob.FitRow(rest, prior)
		if err != nil {
			t.Fatal(err)
		}
		e[j] = float64(r.Label[c]) - model.Sigmoid(model.Logit(m.ItemEmbedding(int(r.Item[c])), float32Row(row)))
		exact += e[j] / float64(len(cells))
	}
	var exactVar float64
	for _, v := range e {
		exactVar += (v - exact) * (v - exact) / float64(len(e)-1)
	}
	t.Logf("mean residual %.5f (refits %.5f), variance %.5f (refits %.5f)", mean, exact, variance, exactVar)
	if math.Abs(mean-exact) > 2e-3 || math.Abs(variance-exactVar) > 0.02*exactVar {
		t.Errorf("one-step LOO residuals: mean %.5f, variance %.5f; refits: %.5f, %.5f", mean, variance, exact, exactVar)
	}
}

func seq(lo, hi int) []int {
	s := make([]int, 0, hi-lo)
	for i := lo; i < hi; i++ {
		s = append(s, i)
	}
	return s
}
