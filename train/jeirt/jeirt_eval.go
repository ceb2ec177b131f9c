package jeirt

import (
	"context"
	"fmt"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/eval"
)

// JEIRTEval is a checkpoint scored on a responses file.
type JEIRTEval struct {
	Metrics       eval.Scores `json:"metrics"`
	ModelMean     eval.Scores `json:"model_mean"`               // each model's accuracy in the file itself (an in-sample reference)
	UnknownModels []string    `json:"unknown_models,omitempty"` // models not in the checkpoint: their cells are skipped
	SkippedCells  int         `json:"skipped_cells"`
	NewItems      int         `json:"new_items"` // items not in the checkpoint, encoded with its encoder
}

// EvalCheckpoint predicts every cell of r whose model the checkpoint knows.
// Items the checkpoint has not seen are encoded with its encoder (which must
// have the checkpoint's fingerprint) and run through the adapter, without a
// residual.
func EvalCheckpoint(ctx context.Context, ck *model.Checkpoint, r *model.Responses, log model.Logf) (*JEIRTEval, error) {
	m := ck.Model
	modelRow := map[string]int{}
	for i, n := range m.Models {
		modelRow[n] = i
	}
	ev := &JEIRTEval{}
	// Question embeddings of r's items: known rows of Q, or encoded now.
	q, newItems, err := Questions(ctx, ck, r, nil, log)
	if err != nil {
		return nil, err
	}
	ev.NewItems = len(newItems)
	var p []float64
	var cells []int32
	unknown := map[string]bool{}
	for c := range r.Label {
		name := r.Models[r.Model[c]]
		i, ok := modelRow[name]
		if !ok {
			if !unknown[name] {
				unknown[name] = true
				ev.UnknownModels = append(ev.UnknownModels, name)
			}
			ev.SkippedCells++
			continue
		}
		p = append(p, m.Prob(i, q[r.Item[c]]))
		cells = append(cells, int32(c))
	}
	if len(cells) == 0 {
		return nil, fmt.Errorf("none of the %d models in the data is in the checkpoint (e.g. %q)", r.NumModels(), r.Models[0])
	}
	sub := r.Subset(cells)
	ev.Metrics = eval.Score(p, sub.Label).Scores()
	ev.ModelMean = eval.Score(eval.ModelMeanPredict(sub, sub), sub.Label).Scores()
	return ev, nil
}
