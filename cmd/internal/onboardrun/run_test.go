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
