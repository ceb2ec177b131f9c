package pipeline

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/synth"
)

// jeirt train --splits 2 on a small simulated file: two runs of each split
// kind, nothing written, and each table's mean ± sd the mean and sample
// standard deviation of its runs' scores; on the item split the baselines
// that cannot predict new questions are n/a.
func TestRunSplits(t *testing.T) {
	dir := t.TempDir()
	writeSynth(t, dir, synth.Options{Kind: "jeirt", Models: 16, Items: 40, Seed: 4})
	cfgText := `
data: {responses: responses.csv, items: items.csv}
split: {val: 0.15, test: 0.2, seed: 5}
encoder: {spec: "hash:16"}
model: {dim: 4}
train: {epochs: 2, lr: 3.0e-3, batch_size: 128}
output: ckpt
`
	os.WriteFile(filepath.Join(dir, "c.yaml"), []byte(cfgText), 0o644)
	cfg, err := LoadConfig(filepath.Join(dir, "c.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	runs, err := RunSplits(context.Background(), cfg, 2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 6 {
		t.Fatalf("%d runs, want 6", len(runs))
	}
	for k, r := range runs {
		if by, seed := SplitKinds[k/2], int64(5+k%2); r.By != by || r.Seed != seed || r.Metrics.SplitBy != by || r.Metrics.Test.N <= 0 {
			t.Errorf("run %d: by %s seed %d (split_by %s, %d test cells), want by %s seed %d", k, r.By, r.Seed, r.Metrics.SplitBy, r.Metrics.Test.N, by, seed)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "ckpt")); !os.IsNotExist(err) {
		t.Errorf("--splits wrote the output: %v", err)
	}
	tables := SummariseSplits(runs)
	if len(tables) != 3 {
		t.Fatalf("%d tables", len(tables))
	}
	for k, tab := range tables {
		a, b := runs[2*k].Metrics, runs[2*k+1].Metrics
		x, y := float64(a.Test.LogLoss), float64(b.Test.LogLoss)
		want := Spread{Mean: (x + y) / 2, SD: math.Abs(x-y) / math.Sqrt2, N: 2}
		if got := tab.LogLoss["jeirt"]; tab.Runs != 2 || math.Abs(got.Mean-want.Mean) > 1e-12 || math.Abs(got.SD-want.SD) > 1e-12 || got.N != 2 {
			t.Errorf("by %s: jeirt log loss %+v, want %+v", tab.By, got, want)
		}
		if tab.Methods[0] != "jeirt" {
			t.Errorf("by %s: methods %v", tab.By, tab.Methods)
		}
	}
	var out strings.Builder
	PrintSplitTables(&out, tables)
	for _, want := range []string{"split by cell: mean ± sd over 2 splits", "split by item: mean ± sd over 2 splits", "split by model: mean ± sd over 2 splits",
		"irt_2pl      n/a (unseen questions)", "item_mean      "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the tables lack %q:\n%s", want, out.String())
		}
	}
	if _, err := RunSplits(context.Background(), cfg, 0, Options{}); err == nil || model.FieldName("Splits") == "" || !strings.Contains(err.Error(), "must be at least 1, got 0") {
		t.Errorf("0 splits: %v", err)
	}
}
