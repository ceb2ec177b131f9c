package jeirt

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jeirt/jeirt/encoder"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/limits"
	"github.com/jeirt/jeirt/model/progress"
)

// OpenCheckpointEncoder opens the encoder a checkpoint was trained with (or
// ck.Encoder, when set) and checks that it still has the fingerprint the
// manifest recorded (see encoder.OpenRecorded).
func OpenCheckpointEncoder(ck *checkpoint.Checkpoint) (encoder.Encoder, error) {
	enc, err := encoder.OpenRecorded(ck.Manifest.Encoder, ck.Dir, ck.Encoder)
	if err != nil {
		return nil, ck.InManifest(err)
	}
	if enc.Dim() != ck.Model.InputDim {
		return nil, ck.InManifest(fmt.Errorf("encoder %s gives vectors of length %d, but the adapter of %s (tensor W1) takes %d",
			ck.Manifest.Encoder.Spec, enc.Dim(), ck.Where(), ck.Model.InputDim))
	}
	return enc, nil
}

// Questions returns the question embedding q_j of every item j of r with
// want[j] (nil: all): the checkpoint's row when it knows the item, otherwise
// the adapter applied to the item's vector from the checkpoint's encoder
// (OpenCheckpointEncoder). It also returns the items that were encoded
// (newItems, rows of r) and their encoder vectors (newX, in the same order:
// the input of the out-of-domain check). An
// item new to the checkpoint needs its text, unless the encoder serves
// precomputed vectors by id. This is the one place that embeds the questions
// of a checkpoint (jeirt eval, add-model, route eval).
func Questions(ctx context.Context, ck *checkpoint.Checkpoint, r *model.Responses, want []bool, log progress.Logf) (q [][]float32, newItems []int, newX [][]float32, err error) {
	m := ck.Model
	itemRow := make(map[string]int, len(m.Items))
	for j, id := range m.Items {
		itemRow[id] = j
	}
	q = make([][]float32, r.NumItems())
	for j, id := range r.Items {
		if want != nil && !want[j] {
			continue
		}
		if k, ok := itemRow[id]; ok {
			q[j] = m.ItemEmbedding(k)
		} else {
			newItems = append(newItems, j)
		}
	}
	if len(newItems) == 0 {
		return q, nil, nil, nil
	}
	enc, err := OpenCheckpointEncoder(ck)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("encoding %d items the checkpoint has not seen: %w", len(newItems), err)
	}
	ids, texts := make([]string, len(newItems)), make([]string, len(newItems))
	_, byID := enc.(encoder.ItemEncoder)
	for k, j := range newItems {
		ids[k] = r.Items[j]
		if r.ItemText != nil {
			texts[k] = r.ItemText[j]
		}
		if !byID && strings.TrimSpace(texts[k]) == "" {
			return nil, nil, nil, model.FieldErrorf("Items", "item %q is not in the checkpoint and has no text to encode (give item texts with {Items})", r.Items[j])
		}
	}
	emb, newX, err := EncodeQuestions(ctx, ck, enc, ids, texts)
	if err != nil {
		return nil, nil, nil, err
	}
	for k, j := range newItems {
		q[j] = emb[k]
	}
	log.Printf("encoded %d items new to the checkpoint with %s", len(newItems), ck.Manifest.Encoder.Spec)
	return q, newItems, newX, nil
}

// EmbedQuestions encodes questions (by id when enc serves precomputed
// vectors, else their texts; see encoder.EncodeItems) and runs the
// checkpoint's adapter on the vectors: one question embedding q per question.
func EmbedQuestions(ctx context.Context, ck *checkpoint.Checkpoint, enc encoder.Encoder, ids, texts []string) ([][]float32, error) {
	q, _, err := EncodeQuestions(ctx, ck, enc, ids, texts)
	return q, err
}

// EncodeQuestions is EmbedQuestions that also returns each question's
// encoder vector x (the input of the adapter), as the out-of-domain check
// (model.Domain) needs. An embedding that is not finite (weights that
// overflow in use) is an error naming the checkpoint, the question and the
// tensor, never a NaN probability.
func EncodeQuestions(ctx context.Context, ck *checkpoint.Checkpoint, enc encoder.Encoder, ids, texts []string) (q, x [][]float32, err error) {
	m := ck.Model
	vecs, err := encoder.EncodeItems(ctx, enc, ids, texts, encoder.ItemOptions{})
	if err != nil {
		return nil, nil, err
	}
	flat := make([]float32, 0, len(vecs)*m.InputDim)
	for k, v := range vecs {
		if len(v) != m.InputDim {
			return nil, nil, fmt.Errorf("question %s: encoder gave %d values, the adapter takes %d", ids[k], len(v), m.InputDim)
		}
		flat = append(flat, v...)
	}
	emb, err := m.QuestionEmbeddingsChecked(flat, len(ids))
	if err != nil {
		var nf *model.NonFiniteError
		if errors.As(err, &nf) {
			return nil, nil, fmt.Errorf("%s: question %q: %w", ck.Where(), limits.Clip(ids[nf.Row]), err)
		}
		return nil, nil, err
	}
	q = make([][]float32, len(ids))
	for k := range q {
		q[k] = emb[k*m.Dim : (k+1)*m.Dim : (k+1)*m.Dim]
	}
	return q, vecs, nil
}
