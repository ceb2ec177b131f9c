package pipeline

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/progress"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/model/synth"
)

// jeirt train on a graded benchmark (scores on 11 levels, exact 0s and 1s
// among them): the soft-target BCE trains without clamping, every score is
// finite, the scoring rule is stated, JE-IRT predicts the held-out scores
// better than each model's mean score, and jeirt eval scores the same test
// cells the same way.
func TestRunJEIRTGraded(t *testing.T) {
	dir := t.TempDir()
	r, _, err := synth.Generate(synth.Options{Kind: "jeirt", Models: 40, Items: 300, Levels: 11, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.GradedCells() == 0 {
		t.Fatal("no graded cells")
	}
	if err := read.WriteLongCSV(filepath.Join(dir, "responses.csv"), r); err != nil {
		t.Fatal(err)
	}
	if err := read.WriteItemsCSV(filepath.Join(dir, "items.csv"), r); err != nil {
		t.Fatal(err)
	}
	cfgText := `
data: {responses: responses.csv, items: items.csv, graded: true}
encoder: {spec: "hash:64"}
model: {dim: 16, dropout: 0.2}
train: {epochs: 20, lr: 1.0e-2, batch_size: 256, seed: 1}
output: ckpt
`
	os.WriteFile(filepath.Join(dir, "c.yaml"), []byte(cfgText), 0o644)
	cfg, err := LoadConfig(filepath.Join(dir, "c.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	var met *checkpoint.RunMetrics
	if _, err := Run(context.Background(), cfg, Options{Log: progress.LogTo(&log), Version: "test",
		Results: func(_ string, m *checkpoint.RunMetrics) { met = m; PrintScoreTable(&log, m) }}); err != nil {
		t.Fatal(err)
	}
	if met == nil || met.Scoring != checkpoint.ScoringFractions || !strings.Contains(log.String(), "scoring: cells of several trials or graded scores") {
		t.Fatalf("the scoring rule is not stated:\n%s", log.String())
	}
	for name, s := range map[string]model.Scores{"jeirt": met.Test, "model_mean": met.Baselines["model_mean"], "irt_2pl": met.Baselines["irt_2pl"]} {
		for _, v := range []model.Float{s.Accuracy, s.AUC, s.LogLoss, s.Brier, s.ECE} {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatalf("%s: a score is %v: %+v", name, v, s)
			}
		}
	}
	t.Logf("held-out log loss: jeirt %.4f, model_mean %.4f, irt_2pl %.4f", met.Test.LogLoss, met.Baselines["model_mean"].LogLoss, met.Baselines["irt_2pl"].LogLoss)
	if !(met.Test.LogLoss < met.Baselines["model_mean"].LogLoss) {
		t.Errorf("jeirt log loss %.4f is not below the model mean's %.4f", met.Test.LogLoss, met.Baselines["model_mean"].LogLoss)
	}
	// A graded file whose label column does not say so (jeirt's own files
	// name it graded_score) needs --graded.
	b, err := os.ReadFile(filepath.Join(dir, "responses.csv"))
	if err != nil || !strings.HasPrefix(string(b), "model,item,graded_score,") {
		t.Fatalf("responses.csv: %v\n%.100s", err, b)
	}
	unmarked := filepath.Join(dir, "unmarked.csv")
	os.WriteFile(unmarked, []byte(strings.Replace(string(b), "graded_score", "correct", 1)), 0o644)
	if _, err := EvalFile(context.Background(), filepath.Join(dir, "ckpt"), "", unmarked, read.Options{}, nil); err == nil ||
		!strings.Contains(err.Error(), "use --graded") {
		t.Errorf("eval without --graded: %v", err)
	}
	ev, err := EvalFile(context.Background(), filepath.Join(dir, "ckpt"), "", filepath.Join(dir, "responses.csv"), read.Options{Graded: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Scoring != checkpoint.ScoringFractions || ev.Heldout == nil || ev.HeldoutCells != met.Cells["test"]+met.Cells["val"] {
		t.Errorf("eval: scoring %q, held-out %d cells (train reported %d test + %d val)", ev.Scoring, ev.HeldoutCells, met.Cells["test"], met.Cells["val"])
	}
}
