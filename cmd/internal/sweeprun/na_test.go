package sweeprun

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/train/eval"
	"github.com/jeirt/jeirt/train/sweep"
)

// The best run's undefined test AUC (test cells of one class) prints n/a
// with the reason (it printed NaN).
func TestSweepBestLineNA(t *testing.T) {
	m := eval.Metrics{N: 5, Accuracy: 1, AUC: math.NaN(), LogLoss: 0.2, Brier: 0.05, ECE: 0.03}
	tab := &sweep.Table{Dir: "sw", Rows: []sweep.Row{{ID: "000", Status: "ok", Val: m, Test: m, Checkpoint: "runs/000/checkpoint"}}, Best: 0}
	var b bytes.Buffer
	tab.Print(&b)
	if out := b.String(); strings.Contains(out, "NaN") ||
		!strings.Contains(out, "test AUC n/a (AUC needs both right and wrong answers; the 5 cells hold one kind only)\n") {
		t.Errorf("printed:\n%s", out)
	}
}
