package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/jeirt"
)

// `jeirt train` with split.by model on simulated data: the held-out models
// are not in the trained table, each is onboarded from 10% of its cells and
// scored on the rest, beating its per-model mean and no more than 3 points below the
// joint fit on the same cells; metrics.json names them.
func TestRunJEIRTByModelOnboards(t *testing.T) {
	dir := t.TempDir()
	r := writeSynth(t, dir, synth.Options{Kind: "jeirt", Models: 40, Items: 400, Seed: 8})
	cfg := DefaultConfig()
	cfg.Data.Responses, cfg.Data.Items = filepath.Join(dir, "responses.csv"), filepath.Join(dir, "items.csv")
	cfg.Output = filepath.Join(dir, "ckpt")
	if err := cfg.SetAll([]string{"encoder.spec=hash:64", "model.dim=8", "train.epochs=30", "split.by=model", "split.test=0.2", "split.joint=true"}); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	res, err := Run(context.Background(), cfg, Options{
		Results: func(_ string, m *checkpoint.RunMetrics) { PrintScoreTable(&out, m) }})
	if err != nil {
		t.Fatal(err)
	}
	met := res.Metrics
	t.Logf("\n%s", out.String())
	if len(met.HeldOutModels) != 8 || len(met.NewModels) != 8 {
		t.Fatalf("%d held-out models, %d scored, want 8", len(met.HeldOutModels), len(met.NewModels))
	}
	for k, name := range met.HeldOutModels {
		if slices.Contains(res.Fit.Model.Models, name) {
			t.Errorf("held-out model %s is in the trained table", name)
		}
		if met.NewModels[k].Name != name || met.NewModels[k].FitCells != 40 || met.NewModels[k].ScoredCells != 360 {
			t.Errorf("new model %d: %+v, want %s with 40 fitted and 360 scored cells", k, met.NewModels[k], name)
		}
		if !strings.Contains(out.String(), name) {
			t.Errorf("the printed table does not name %s", name)
		}
	}
	// Each new model's score on all 400 items from its 40 fitted answers,
	// against its true mean; the coverage line counts them.
	acc := r.ModelAccuracy()
	cover, mae := 0, 0.0
	for _, nm := range met.NewModels {
		s := nm.Score
		if s == nil || s.Items != 400 || s.Answered != 40 || !(s.Lo <= s.Score && s.Score <= s.Hi) {
			t.Fatalf("%s: score %+v", nm.Name, s)
		}
		if want := acc[r.ModelIndex(nm.Name)]; nm.TrueScore != want {
			t.Errorf("%s: true score %v, want its accuracy %v", nm.Name, nm.TrueScore, want)
		}
		if s.Lo <= nm.TrueScore && nm.TrueScore <= s.Hi {
			cover++
		}
		mae += math.Abs(s.Score-nm.TrueScore) / 8
	}
	if met.ScoreCoverage == nil || *met.ScoreCoverage != float64(cover)/8 || math.Abs(*met.ScoreMAE-mae) > 1e-12 || mae > 0.1 {
		t.Errorf("score coverage %v, MAE %v; want %d of 8 and %v below 0.1", met.ScoreCoverage, met.ScoreMAE, cover, mae)
	}
	if line := fmt.Sprintf("%.0f%% of 8 models; score MAE %.4f", 100*float64(cover)/8, mae); !strings.Contains(out.String(), line) {
		t.Errorf("the table has no line %q", line)
	}
	if len(res.Fit.Model.Models) != 32 {
		t.Errorf("trained table has %d models, want 32", len(res.Fit.Model.Models))
	}
	onb, mean, joint := met.Test.Accuracy, met.Baselines["model_mean"].Accuracy, met.Baselines["joint"].Accuracy
	if met.Test.N != 8*360 || !(onb > mean+0.01) || onb < joint-0.03 {
		t.Errorf("held-out cells %d: onboarded %.4f, model mean %.4f, joint %.4f", met.Test.N, onb, mean, joint)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "ckpt", "metrics.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Held  []string `json:"held_out_models"`
		Step  string   `json:"step"`
		Frac  float64  `json:"onboard_fraction"`
		Stop  string   `json:"stop"`
		Split string   `json:"split_by"`
		Cover float64  `json:"score_coverage"`
	}
	json.Unmarshal(raw, &m)
	if !slices.Equal(m.Held, met.HeldOutModels) || m.Step != jeirt.StepGraph || m.Frac != 0.1 || m.Stop == "" || m.Split != "model" || m.Cover != *met.ScoreCoverage {
		t.Errorf("metrics.json: %+v", m)
	}
}
