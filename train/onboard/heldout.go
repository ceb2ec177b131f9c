package onboard

import (
	"context"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/progress"
)

// Onboarded is one held-out model fitted by HeldOut: the cells of r its row
// was fitted on, the cells it was scored on, and on those the predicted
// probabilities of its row and of its per-model mean.
type Onboarded struct {
	Name                string
	FitCells, HeldCells []int32
	Prob, ModelMeanProb []float64
	Iterations          int
	Converged           bool
	// Score is its estimated score on the items of its cells in r from the
	// fitted cells (AddModels with ScoreOwnItems), True its mean over them.
	Score *checkpoint.ScoreEstimate
	True  float64
}

// HeldOut is the add-model fit as the new-model experiment of a by-model
// training split (the JE-IRT paper's): every model with cells in r is fitted onto ck
// (AddModels with the default Onboard settings) from the fraction of its
// cells drawn with seed and its name, and its row and its per-model mean
// predict the rest of its cells.
func HeldOut(ctx context.Context, ck *checkpoint.Checkpoint, r *model.Responses, fraction float64, seed int64, log progress.Logf) ([]Onboarded, error) {
	res, err := AddModels(ctx, ck, r, AddModelsOptions{Fraction: fraction, Seed: seed, ScoreOwnItems: true, Log: log})
	if err != nil {
		return nil, err
	}
	m := res.Checkpoint.Model
	itemRow := nameIndex(m.Items)
	q := make([][]float32, r.NumItems())
	for j, id := range r.Items {
		if k, ok := itemRow[id]; ok {
			q[j] = m.ItemEmbedding(k)
		}
	}
	byModel := r.ByModel()
	out := make([]Onboarded, 0, len(res.Added))
	for _, a := range res.Added {
		i := r.ModelIndex(a.Name)
		fit, held := fractionSplit(byModel.Row(i), fraction, seed, a.Name)
		heldR := r.Subset(held)
		row := m.ModelEmbedding(nameIndex(m.Models)[a.Name])
		out = append(out, Onboarded{Name: a.Name, FitCells: fit, HeldCells: held,
			Prob: rowProbs(row, q, heldR), ModelMeanProb: meanRate(r, fit, heldR.Len()),
			Iterations: a.Iterations, Converged: a.Converged, Score: a.Score, True: meanScore(r, byModel.Row(i))})
	}
	return out, nil
}

// meanScore is the mean score of cells of r (successes over trials).
func meanScore(r *model.Responses, cells []int32) float64 {
	var s, t float64
	for _, c := range cells {
		s += r.SuccessesAt(int(c))
		t += float64(r.TrialsAt(int(c)))
	}
	return s / t
}
