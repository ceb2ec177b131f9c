package pipeline

import (
	"context"
	"encoding/json"
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
	writeSynth(t, dir, synth.Options{Kind: "jeirt", Models: 40, Items: 400, Seed: 8})
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
	}
	json.Unmarshal(raw, &m)
	if !slices.Equal(m.Held, met.HeldOutModels) || m.Step != jeirt.StepGraph || m.Frac != 0.1 || m.Stop == "" || m.Split != "model" {
		t.Errorf("metrics.json: %+v", m)
	}
}
