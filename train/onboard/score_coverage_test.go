package onboard

import (
	"context"
	"sort"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/jeirt"
)

// On a JE-IRT map trained on other models, and off for the new ones (the
// map has seen only the 60 strongest of 140 simulated models; the 80 others
// are placed from 10% of their answers), the 95% score intervals cover
// each new model's true score (its mean over all its answers) 85–99% of the
// time. Laplace-only intervals without the residual covered 35 of these 80
// (score MAE 0.110); with it, 73 (MAE 0.086).
func TestScoreIntervalCoversOnTrainedMap(t *testing.T) {
	ctx := context.Background()
	const newModels, items = 80, 300
	r, truth, err := synth.Generate(synth.Options{Kind: "jeirt", Models: newModels + 60, Items: items, Seed: 21, EmbedDim: 8, FeatureDim: 16})
	if err != nil {
		t.Fatal(err)
	}
	var features []float32
	for _, x := range truth.Features {
		features = append(features, x...)
	}
	// The map is trained on the 60 strongest models; the 80 others are new,
	// weaker than any the map has seen.
	order := make([]int, r.NumModels())
	for i := range order {
		order[i] = i
	}
	acc := r.ModelAccuracy()
	sort.Slice(order, func(a, b int) bool { return acc[order[a]] < acc[order[b]] })
	var train, val []int32
	byModel := r.ByModel()
	for _, i := range order[newModels:] {
		cells := byModel.Row(i)
		k := len(cells) / 10
		val = append(val, cells[:k]...)
		train = append(train, cells[k:]...)
	}
	tr := jeirt.Trainer{Dim: 8, Hidden: 16, Dropout: -1, Epochs: 8, BatchSize: 512, LR: 1e-2, WeightDecay: -1, Gamma: 0.98, Patience: -1, Seed: 1, Device: "cpu:fused"}
	fit, err := tr.Fit(ctx, r.Subset(train), r.Subset(val), features, 16)
	if err != nil {
		t.Fatal(err)
	}
	om := fit.Model
	base := &model.JEIRT{InputDim: om.InputDim, Hidden: om.Hidden, Dim: om.Dim, W1: om.W1, C1: om.C1, W2: om.W2, C2: om.C2,
		Items: om.Items, Q: om.Q}
	for _, i := range order[newModels:] {
		base.Models = append(base.Models, om.Models[i])
		base.M = append(base.M, om.ModelEmbedding(i)...)
	}
	var names []string
	for _, i := range order[:newModels] {
		names = append(names, r.Models[i])
	}
	res, err := AddModels(ctx, &checkpoint.Checkpoint{Model: base}, r, AddModelsOptions{Models: names, Fraction: 0.1, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	cover := 0
	var mae float64
	for k, a := range res.Added {
		s := a.Score
		if s == nil || s.Items != items || s.Answered != items/10 || !(s.Lo <= s.Score && s.Score <= s.Hi) {
			t.Fatalf("%s: score %+v", a.Name, s)
		}
		truth := acc[order[k]]
		if s.Lo <= truth && truth <= s.Hi {
			cover++
		}
		mae += abs(s.Score-truth) / newModels
	}
	t.Logf("%d of %d intervals cover the true score; score MAE %.4f", cover, newModels, mae)
	if f := float64(cover) / newModels; f < 0.85 || f > 0.99 {
		t.Errorf("coverage %d of %d (%.3f), want 85–99%%", cover, newModels, f)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
