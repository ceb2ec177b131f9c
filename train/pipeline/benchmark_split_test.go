package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/progress"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/eval"
)

// split.by: benchmark holds out one topic of the simulated items: its cells
// are the test cells, scored next to the baselines, and metrics.json gains
// the held-out benchmark and the alignment diagnostic.
func TestRunJEIRTLeaveBenchmarkOut(t *testing.T) {
	dir := t.TempDir()
	r, _, err := synth.Generate(synth.Options{Kind: "jeirt", Models: 30, Items: 200, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	groups := eval.BenchmarkNames(r)
	if len(groups) < 3 {
		t.Fatalf("simulated topics: %v", groups)
	}
	hold := groups[1]
	if err := read.WriteLongCSV(filepath.Join(dir, "responses.csv"), r); err != nil {
		t.Fatal(err)
	}
	if err := read.WriteItemsCSV(filepath.Join(dir, "items.csv"), r); err != nil {
		t.Fatal(err)
	}
	cfgText := `
data: {responses: responses.csv, items: items.csv}
split: {by: benchmark, hold: "` + hold + `", val: 0.1}
encoder: {spec: "hash:64"}
model: {dim: 8}
train: {epochs: 3, lr: 3.0e-3, batch_size: 128}
output: ckpt
`
	os.WriteFile(filepath.Join(dir, "c.yaml"), []byte(cfgText), 0o644)
	cfg, err := LoadConfig(filepath.Join(dir, "c.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var log, out strings.Builder
	res, err := Run(context.Background(), cfg, Options{Log: progress.LogTo(&log), Results: func(stop string, m *checkpoint.RunMetrics) { PrintScoreTable(&out, m) }, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	met := res.Metrics
	heldCells := 0
	for _, g := range r.ItemGroup {
		if g == hold {
			heldCells += r.NumModels()
		}
	}
	if met.SplitBy != "benchmark" || len(met.HeldOutBenchmarks) != 1 || met.HeldOutBenchmarks[0] != hold || met.Test.N != heldCells {
		t.Fatalf("split %s, held %v, %d test cells (want %s, %d)", met.SplitBy, met.HeldOutBenchmarks, met.Test.N, hold, heldCells)
	}
	a := met.Alignment
	if a == nil || len(a.PerBenchmark) != len(groups)-1 || a.Cosine < -1 || a.Cosine > 1 || a.Nearest == "" || a.Nearest == hold {
		t.Fatalf("alignment %+v", a)
	}
	if len(a.PerModel) != r.NumModels() {
		t.Errorf("per-model alignment for %d of %d models", len(a.PerModel), r.NumModels())
	}
	// The held-out benchmark's questions are new: item_mean cannot predict
	// them (n/a, not the model mean's number); kNN can, from their text.
	if _, ok := met.Baselines["knn"]; !ok || met.BaselineNotes["item_mean"].NA != "unseen questions" {
		t.Errorf("baselines %v, notes %+v: want knn scored and item_mean n/a (unseen questions)", met.Baselines, met.BaselineNotes)
	}
	if !strings.Contains(out.String(), "held-out benchmark(s): "+hold) {
		t.Errorf("printed table lacks the held-out benchmark:\n%s", out.String())
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "ckpt", "metrics.json"))
	if !strings.Contains(string(raw), `"held_out_benchmarks"`) || !strings.Contains(string(raw), `"alignment"`) {
		t.Errorf("metrics.json lacks the held-out benchmark or the alignment")
	}
}
