package jeirt

import (
	"context"
	"fmt"
	"io"

	"github.com/jeirt/jeirt/encoder"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/eval"
)

// JEIRTEval is a checkpoint scored on a responses file.
type JEIRTEval struct {
	Metrics       model.Scores `json:"metrics"`
	ModelMean     model.Scores `json:"model_mean"`               // each model's accuracy in the file itself (an in-sample reference)
	UnknownModels []string     `json:"unknown_models,omitempty"` // models not in the checkpoint: their cells are skipped
	SkippedCells  int          `json:"skipped_cells"`
	NewItems      int          `json:"new_items"` // items not in the checkpoint, encoded with its encoder
}

// EvalCheckpoint predicts every cell of r whose model the checkpoint knows.
// Items the checkpoint has not seen are encoded with its encoder (which must
// have the checkpoint's fingerprint) and run through the adapter, without a
// residual.
func EvalCheckpoint(ctx context.Context, ck *model.Checkpoint, r *model.Responses, log io.Writer) (*JEIRTEval, error) {
	m := ck.Model
	modelRow := map[string]int{}
	for i, n := range m.Models {
		modelRow[n] = i
	}
	itemRow := map[string]int{}
	for j, id := range m.Items {
		itemRow[id] = j
	}
	ev := &JEIRTEval{}
	// Question embeddings of r's items: known rows of Q, or encoded now.
	q := make([][]float32, r.NumItems())
	var newItems []int
	for j, id := range r.Items {
		if k, ok := itemRow[id]; ok {
			q[j] = m.ItemEmbedding(k)
		} else {
			newItems = append(newItems, j)
		}
	}
	if len(newItems) > 0 {
		spec := ck.Manifest.Encoder.Spec
		enc, err := encoder.Open(spec)
		if err != nil {
			return nil, fmt.Errorf("encoding %d items the checkpoint has not seen: %w", len(newItems), err)
		}
		if fp := enc.Fingerprint(); fp != ck.Manifest.Encoder.Fingerprint {
			return nil, fmt.Errorf("encoder %s now has fingerprint %s, but the checkpoint was trained with %s: its %d new items cannot be encoded the same way",
				spec, fp, ck.Manifest.Encoder.Fingerprint, len(newItems))
		}
		sub := &model.Responses{Items: make([]string, len(newItems))}
		if r.ItemText != nil {
			sub.ItemText = make([]string, len(newItems))
		}
		for k, j := range newItems {
			sub.Items[k] = r.Items[j]
			if r.ItemText != nil {
				sub.ItemText[k] = r.ItemText[j]
			}
		}
		x, err := EncodeItems(ctx, enc, sub, log)
		if err != nil {
			return nil, err
		}
		emb := m.QuestionEmbeddings(x, len(newItems))
		for k, j := range newItems {
			q[j] = emb[k*m.Dim : (k+1)*m.Dim]
		}
		ev.NewItems = len(newItems)
	}
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
