package onboardrun

import (
	"math"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/train/onboard"
)

// The held-out table's undefined AUC (held-out cells of one class) prints
// n/a with the reason under the table, never NaN.
func TestWriteAddedNA(t *testing.T) {
	nan := model.Float(math.NaN())
	oneClass := &model.Scores{Accuracy: 1, AUC: nan, LogLoss: 0.1, Brier: 0.01, ECE: 0.02, N: 3}
	both := &model.Scores{Accuracy: 0.5, AUC: 0.75, LogLoss: 0.6, Brier: 0.2, ECE: 0.1, N: 4}
	ck := &checkpoint.Checkpoint{Model: &model.JEIRT{Dim: 1, Models: []string{"sure", "mixed"}, M: []float32{0, 0}}}
	res := &onboard.AddModelsResult{Checkpoint: ck, Added: []checkpoint.AddedModel{
		{Name: "sure", FitCells: 10, HeldCells: 3, Heldout: oneClass, ModelMean: oneClass},
		{Name: "mixed", FitCells: 10, HeldCells: 4, Heldout: both, ModelMean: both},
	}}
	var b strings.Builder
	if err := WriteAdded(&b, "out", res, false); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "NaN") || !strings.Contains(out, "1.0000 n/a 0.1000") ||
		!strings.Contains(out, "n/a: sure: AUC needs both right and wrong answers; the 3 cells hold one kind only\n") || strings.Contains(out, "n/a: mixed") {
		t.Errorf("table:\n%s", out)
	}
}

// A placed model's line ends with its score, interval, answers counted and
// the map's residual correction.
func TestWriteAddedScore(t *testing.T) {
	ck := &checkpoint.Checkpoint{Model: &model.JEIRT{Dim: 1, Models: []string{"new"}, M: []float32{0}}}
	res := &onboard.AddModelsResult{Checkpoint: ck, Added: []checkpoint.AddedModel{
		{Name: "new", FitCells: 50, Iterations: 6, Score: &checkpoint.ScoreEstimate{Items: 500, Answered: 50, Score: 0.6612, Lo: 0.5923, Hi: 0.7301, Residual: -0.0481}},
	}}
	var b strings.Builder
	if err := WriteAdded(&b, "out", res, false); err != nil {
		t.Fatal(err)
	}
	want := "added new from 50 answers (Newton 6 iterations); score on all 500 items 0.6612 [0.5923, 0.7301] (50 answered, map residual -0.0481)\n"
	if !strings.HasPrefix(b.String(), want) {
		t.Errorf("got\n%s\nwant it to start with\n%s", b.String(), want)
	}
}
