package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/progress"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/train/eval"
	"github.com/jeirt/jeirt/train/jeirt"
)

// Eval is a checkpoint scored on a responses file.
type Eval struct {
	Metrics       model.Scores `json:"metrics"`
	ModelMean     model.Scores `json:"model_mean"`               // each model's accuracy in the file itself (an in-sample reference)
	UnknownModels []string     `json:"unknown_models,omitempty"` // models not in the checkpoint: their cells are skipped
	SkippedCells  int          `json:"skipped_cells"`
	NewItems      int          `json:"new_items"` // items not in the checkpoint, encoded with its encoder
	// Scoring is checkpoint.ScoringFractions for cells of several trials
	// or graded scores.
	Scoring string `json:"scoring,omitempty"`

	// The scored cells that were training cells of the checkpoint (found by
	// re-reading and re-splitting the data its training config names), the
	// validation cells among the rest (they chose the stopping epoch), and
	// the scores of the held-out cells, those that were not training cells.
	// TrainingNote says why the training cells are unknown (then Heldout is nil).
	TrainingCells   int           `json:"training_cells"`
	ValidationCells int           `json:"validation_cells"`
	HeldoutCells    int           `json:"heldout_cells"`
	Heldout         *model.Scores `json:"heldout,omitempty"`
	TrainingNote    string        `json:"training_note,omitempty"`
}

// EvalCheckpoint predicts every cell of r whose model the checkpoint knows.
// Items the checkpoint has not seen are encoded with its encoder (which must
// have the checkpoint's fingerprint) and run through the adapter, without a
// residual.
func EvalCheckpoint(ctx context.Context, ck *checkpoint.Checkpoint, r *model.Responses, log progress.Logf) (*Eval, error) {
	m := ck.Model
	modelRow := map[string]int{}
	for i, n := range m.Models {
		modelRow[n] = i
	}
	ev := &Eval{}
	// Question embeddings of r's items: known rows of Q, or encoded now.
	q, newItems, _, err := jeirt.Questions(ctx, ck, r, nil, log)
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
		pc := m.Prob(i, q[r.Item[c]])
		if !model.Finite(pc) { // the embeddings are checked; this is the last guard
			return nil, fmt.Errorf("%s: P(correct) of model %q on item %q is %v", ck.Where(), name, r.Items[r.Item[c]], pc)
		}
		p = append(p, pc)
		cells = append(cells, int32(c))
	}
	if len(cells) == 0 {
		return nil, fmt.Errorf("none of the %d models in the data is in the checkpoint (e.g. %q)", r.NumModels(), r.Models[0])
	}
	sub := r.Subset(cells)
	if sub.Weighted() {
		ev.Scoring = checkpoint.ScoringFractions
	}
	ev.Metrics = eval.ScoreResponses(p, sub).Scores()
	ev.ModelMean = eval.ScoreResponses(eval.ModelMeanPredict(sub, sub), sub).Scores()
	train, val, err := checkpointCells(ck)
	if err != nil {
		ev.TrainingNote = err.Error()
		return ev, nil
	}
	var hp []float64
	var hc []int32 // of sub
	for k, c := range cells {
		key := [2]string{r.Models[r.Model[c]], r.Items[r.Item[c]]}
		switch {
		case train[key]:
			ev.TrainingCells++
			continue
		case val[key]:
			ev.ValidationCells++
		}
		hp, hc = append(hp, p[k]), append(hc, int32(k))
	}
	if ev.HeldoutCells = len(hp); len(hp) > 0 {
		s := eval.ScoreResponses(hp, sub.Subset(hc)).Scores()
		ev.Heldout = &s
	}
	return ev, nil
}

// checkpointCells are the training and validation cells, as (model, item)
// names, of the data the checkpoint's training config names, split as
// training split them.
func checkpointCells(ck *checkpoint.Checkpoint) (train, val map[[2]string]bool, err error) {
	var cfg Config
	if len(ck.Manifest.Config) == 0 || json.Unmarshal(ck.Manifest.Config, &cfg) != nil {
		return nil, nil, fmt.Errorf("the checkpoint records no training config")
	}
	trainR, valR, _, _, err := LoadSplits(&cfg, nil) // the training run said its warnings
	if err != nil {
		return nil, nil, fmt.Errorf("cannot re-read the training data: %w", err)
	}
	set := func(r *model.Responses) map[[2]string]bool {
		m := make(map[[2]string]bool, r.Len())
		for c := range r.Label {
			m[[2]string{r.Models[r.Model[c]], r.Items[r.Item[c]]}] = true
		}
		return m
	}
	return set(trainR), set(valR), nil
}

// WriteText prints the evaluation as jeirt eval does: the cells scored, how
// many were training cells of the checkpoint, and the scores on all cells, on
// the held-out cells and of the in-sample model-mean reference.
func (ev *Eval) WriteText(w io.Writer, ckDir, data string) error {
	fmt.Fprintf(w, "%s on %s: %d cells, %d items new to the checkpoint\n", ckDir, data, ev.Metrics.N, ev.NewItems)
	if ev.TrainingNote != "" {
		fmt.Fprintf(w, "training cells unknown (%s): the scores may include cells the checkpoint was trained on\n", ev.TrainingNote)
	} else {
		fmt.Fprintf(w, "%d of them were training cells of the checkpoint; %d held out (%d of those validation cells, which chose the stopping epoch)\n",
			ev.TrainingCells, ev.HeldoutCells, ev.ValidationCells)
	}
	fmt.Fprintf(w, "%-22s %8s %8s %8s %8s %8s\n", "", "accuracy", "AUC", "logloss", "Brier", "ECE")
	var notes []string
	row := func(name string, s model.Scores) {
		fmt.Fprintf(w, "%-22s %8.4f %8.4f %8.4f %8.4f %8.4f\n", name, s.Accuracy, s.AUC, s.LogLoss, s.Brier, s.ECE)
		if why := s.Undefined(); why != "" && !slices.Contains(notes, why) {
			notes = append(notes, why)
		}
	}
	row("jeirt, all cells", ev.Metrics)
	if ev.Heldout != nil {
		row("jeirt, held-out cells", *ev.Heldout)
	}
	row("model mean (in-sample)", ev.ModelMean)
	for _, why := range notes {
		fmt.Fprintf(w, "n/a: %s\n", why)
	}
	if ev.Scoring != "" {
		fmt.Fprintf(w, "scoring: %s\n", ev.Scoring)
	}
	return nil
}

// EvalFile is jeirt eval: it loads the checkpoint in dir (encoder, when not
// "", replaces the one it records; the fingerprint must match), reads the
// responses file data and scores it (EvalCheckpoint).
func EvalFile(ctx context.Context, dir, encoder, data string, ro read.Options, log progress.Logf) (*Eval, error) {
	ck, err := checkpoint.Open(dir, encoder, log)
	if err != nil {
		return nil, err
	}
	r, _, err := read.File(data, ro)
	if err != nil {
		return nil, err
	}
	return EvalCheckpoint(ctx, ck, r, log)
}

// WriteJSON writes the evaluation as indented JSON.
func (ev *Eval) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(ev)
}
