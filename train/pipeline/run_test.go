package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/encoder"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/progress"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/eval"
)

func openFingerprint(spec string) (string, error) {
	enc, err := encoder.Open(spec)
	if err != nil {
		return "", err
	}
	return enc.Fingerprint(), nil
}

// The whole `jeirt train` pipeline on a small simulated file: metrics.json has
// the contract's keys, the checkpoint reloads bit for bit, and scoring the
// test cells from the reloaded checkpoint (EvalCheckpoint) gives exactly the
// test metrics training reported.
func TestRunJEIRTPipeline(t *testing.T) {
	dir := t.TempDir()
	writeSynth(t, dir, synth.Options{Kind: "jeirt", Models: 30, Items: 200, Seed: 4})
	cfgText := `
data: {responses: responses.csv, items: items.csv}
encoder: {spec: "hash:64", cache: cache}
model: {dim: 8, dropout: 0.2}
train: {epochs: 4, lr: 3.0e-3, batch_size: 128}
output: ckpt
`
	os.WriteFile(filepath.Join(dir, "c.yaml"), []byte(cfgText), 0o644)
	cfg, err := LoadConfig(filepath.Join(dir, "c.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	res, err := Run(context.Background(), cfg, Options{Log: progress.LogTo(&log), Version: "test",
		Results: func(_ string, m *checkpoint.RunMetrics) { PrintScoreTable(&log, m) }})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"epoch   4/4", "irt_2pl", "knn (k=", "wrote "} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}
	if entries, err := os.ReadDir(filepath.Join(dir, "cache")); err != nil || len(entries) == 0 {
		t.Errorf("encoder.cache: nothing cached (%v)", err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "ckpt", "metrics.json"))
	if err != nil {
		t.Fatal(err)
	}
	var met map[string]any
	json.Unmarshal(raw, &met)
	for _, k := range []string{"test", "val", "baselines", "best_epoch", "epochs_run", "seconds_per_epoch", "geometry", "step", "stop"} {
		if _, ok := met[k]; !ok {
			t.Errorf("metrics.json lacks %s", k)
		}
	}
	base := met["baselines"].(map[string]any)
	for _, k := range []string{"majority", "model_mean", "item_mean", "knn", "irt_2pl"} {
		m, ok := base[k].(map[string]any)
		if !ok {
			t.Errorf("baselines lack %s", k)
			continue
		}
		for _, f := range []string{"accuracy", "auc", "log_loss", "brier", "ece"} {
			if _, ok := m[f]; !ok {
				t.Errorf("baselines.%s lacks %s", k, f)
			}
		}
	}
	if g := met["geometry"].(map[string]any); g["projection_by_group"] == nil {
		t.Errorf("synthetic items have topic groups, but geometry has no projection_by_group")
	}

	ck, err := checkpoint.Load(filepath.Join(dir, "ckpt"))
	if err != nil {
		t.Fatal(err)
	}
	// The out-of-domain reference holds the training questions' encoder
	// vectors: each is in domain, at distance 0 from itself.
	dom, err := checkpoint.LoadDomain(filepath.Join(dir, "ckpt"))
	if err != nil || dom == nil {
		t.Fatalf("domain file: %v, %v", dom, err)
	}
	if dom.Dim != 64 || dom.NumReference() < 150 || dom.NumReference() > 200 || !(dom.Threshold > 0 && dom.Threshold < 1) {
		t.Errorf("domain: dim %d, %d reference questions, threshold %v", dom.Dim, dom.NumReference(), dom.Threshold)
	}
	for k := 0; k < 5; k++ {
		if d := dom.Distance(dom.Vectors[k*64 : (k+1)*64]); d > 1e-5 {
			t.Errorf("reference question %d at distance %v from the reference", k, d)
		}
	}
	if !reflect.DeepEqual(ck.Model, res.Fit.Model) || ck.Manifest.JEIRTVersion != "test" || ck.Manifest.Encoder.Fingerprint == "" {
		t.Errorf("checkpoint does not reload to the trained model")
	}
	if _, err := Run(context.Background(), cfg, Options{}); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("second run into the same output: %v", err)
	}

	// Score the test cells through the file reader and the reloaded checkpoint.
	_, _, testR, _, err := LoadSplits(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	testFile := filepath.Join(dir, "test.csv")
	if err := read.WriteLongCSV(testFile, testR); err != nil {
		t.Fatal(err)
	}
	tr, _, err := read.File(testFile, read.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := EvalCheckpoint(context.Background(), ck, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Metrics.N != res.Metrics.Test.N || math.Abs(float64(ev.Metrics.LogLoss-res.Metrics.Test.LogLoss)) > 1e-12 || ev.Metrics.Accuracy != res.Metrics.Test.Accuracy {
		t.Errorf("eval of the reloaded checkpoint %+v, training reported %+v", ev.Metrics, res.Metrics.Test)
	}
	// The test file holds no training cell: all of it is held out.
	if ev.TrainingCells != 0 || ev.ValidationCells != 0 || ev.HeldoutCells != ev.Metrics.N || ev.Heldout == nil || *ev.Heldout != ev.Metrics {
		t.Errorf("test file: %d training, %d validation, %d held-out cells, held-out scores %+v", ev.TrainingCells, ev.ValidationCells, ev.HeldoutCells, ev.Heldout)
	}
	// The whole responses file: the training cells are counted and the rest
	// (validation and test) scored apart.
	trainR, valR, _, all, _ := LoadSplits(cfg, nil)
	ev, err = EvalCheckpoint(context.Background(), ck, all, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ev.TrainingCells != trainR.Len() || ev.ValidationCells != valR.Len() || ev.HeldoutCells != all.Len()-trainR.Len() ||
		ev.Heldout == nil || ev.Heldout.N != ev.HeldoutCells {
		t.Errorf("whole file: %d training (want %d), %d validation (want %d), %d held out (want %d), held-out scores %+v",
			ev.TrainingCells, trainR.Len(), ev.ValidationCells, valR.Len(), ev.HeldoutCells, all.Len()-trainR.Len(), ev.Heldout)
	}
	var text strings.Builder
	ev.WriteText(&text, "ckpt", "responses.csv")
	want := fmt.Sprintf("%d of them were training cells of the checkpoint; %d held out (%d of those validation cells", trainR.Len(), all.Len()-trainR.Len(), valR.Len())
	if !strings.Contains(text.String(), want) || !strings.Contains(text.String(), "\njeirt, held-out cells ") {
		t.Errorf("eval text:\n%s\nwant %q", text.String(), want)
	}
	// A checkpoint without a training config: the split is unknown, and said so.
	ck.Manifest.Config = nil
	if ev, err = EvalCheckpoint(context.Background(), ck, all, nil); err != nil || ev.Heldout != nil || ev.TrainingNote == "" {
		t.Errorf("no config: %v, %+v", err, ev)
	}
}

func TestEvalCheckpointNewItemsAndModels(t *testing.T) {
	m := &model.JEIRT{InputDim: 4, Hidden: 3, Dim: 2, W1: make([]float32, 12), C1: []float32{1, 0, 0},
		W2: []float32{1, 0, 0, 0, 0, 0}, C2: []float32{0, 0.5}, M: []float32{2, 0}, Models: []string{"a"}, Items: []string{"known"},
		Q: []float32{0, 3}}
	ck := &checkpoint.Checkpoint{Model: m, Manifest: checkpoint.Manifest{Encoder: checkpoint.EncoderInfo{Spec: "hash:4", Fingerprint: "wrong"}}}
	r := &model.Responses{Models: []string{"a", "b"}, Items: []string{"known", "new"}, ItemText: []string{"", "a new question"},
		Model: []int32{0, 0, 1}, Item: []int32{0, 1, 1}, Label: []uint8{0, 1, 1}}
	if _, err := EvalCheckpoint(context.Background(), ck, r, nil); err == nil || !strings.Contains(err.Error(), "but the checkpoint was trained with wrong") {
		t.Fatalf("fingerprint mismatch: %v", err)
	}
	ck.Manifest.Encoder.Fingerprint = ""
	enc, _ := openFingerprint("hash:4")
	ck.Manifest.Encoder.Fingerprint = enc
	ev, err := EvalCheckpoint(context.Background(), ck, r, nil)
	if err != nil {
		t.Fatal(err)
	}
	// known: q = (0,3): logit = 0 − 3; new: W1 = 0 so h = relu(c1) = (1,0,0), q = (1, 0.5):
	// logit = 2/‖q‖ − ‖q‖ with ‖q‖ = √1.25.
	n := math.Sqrt(1.25)
	want := eval.Score([]float64{model.Sigmoid(-3), model.Sigmoid(2/n - n)}, []uint8{0, 1})
	if ev.NewItems != 1 || ev.SkippedCells != 1 || !reflect.DeepEqual(ev.UnknownModels, []string{"b"}) || math.Abs(float64(ev.Metrics.LogLoss)-want.LogLoss) > 1e-6 {
		t.Errorf("eval %+v, want log loss %v", ev, want.LogLoss)
	}
}

func TestMergeResponses(t *testing.T) {
	a := &model.Responses{Models: []string{"x", "y"}, Items: []string{"i1", "i2"}, ItemText: []string{"t1", ""},
		Model: []int32{0, 1}, Item: []int32{1, 0}, Label: []uint8{1, 0}}
	b := &model.Responses{Models: []string{"z", "x"}, Items: []string{"i2", "i3"}, ItemText: []string{"t2", "t3"},
		Model: []int32{0, 1}, Item: []int32{0, 1}, Label: []uint8{0, 1}}
	parts, all := MergeResponses(a, b)
	if !reflect.DeepEqual(all.Models, []string{"x", "y", "z"}) || !reflect.DeepEqual(all.Items, []string{"i1", "i2", "i3"}) ||
		!reflect.DeepEqual(all.ItemText, []string{"t1", "t2", "t3"}) {
		t.Errorf("names %v %v %v", all.Models, all.Items, all.ItemText)
	}
	if !reflect.DeepEqual(parts[1].Model, []int32{2, 0}) || !reflect.DeepEqual(parts[1].Item, []int32{1, 2}) ||
		!reflect.DeepEqual(all.Label, []uint8{1, 0, 0, 1}) {
		t.Errorf("cells %v %v %v", parts[1].Model, parts[1].Item, all.Label)
	}
}

// A run whose output folder another run is writing fails before it reads
// any data, naming the holder.
func TestRunJEIRTOutputTaken(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "c.yaml"), []byte("data: {responses: missing.csv}\nencoder: {spec: \"hash:8\"}\noutput: ckpt\n"), 0o644)
	cfg, err := LoadConfig(filepath.Join(dir, "c.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	release, err := fileio.LockOutput(cfg.Output)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	_, err = Run(context.Background(), cfg, Options{})
	if err == nil || !strings.Contains(err.Error(), "being written by another run") {
		t.Errorf("want the output-taken error before reading data, got %v", err)
	}
}

// A memory budget that holds the training but not the kNN baseline's dense
// tables refuses the baseline with its estimate, and keeps the checkpoint
// (written before the baselines run).
func TestRunKNNOverMaxMemory(t *testing.T) {
	dir := t.TempDir()
	writeSynth(t, dir, synth.Options{Kind: "jeirt", Models: 20, Items: 300, Seed: 5})
	cfgText := "data: {responses: responses.csv, items: items.csv}\nencoder: {spec: \"hash:8\"}\nmodel: {dim: 2, hidden: 4}\ntrain: {epochs: 1}\noutput: ckpt\n"
	os.WriteFile(filepath.Join(dir, "c.yaml"), []byte(cfgText), 0o644)
	cfg, err := LoadConfig(filepath.Join(dir, "c.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), cfg, Options{Version: "test", MaxMemory: 100000})
	var fe *model.FieldError
	if err == nil || !strings.Contains(err.Error(), "the kNN baseline (a table of the training labels of 20 models x 300 items") ||
		!strings.Contains(err.Error(), "more than 97.7 KiB (max-memory)") || !errors.As(err, &fe) || fe.Field != "MaxMemory" {
		t.Fatalf("err = %v", err)
	}
	if _, err := checkpoint.Load(filepath.Join(dir, "ckpt")); err != nil {
		t.Errorf("the trained checkpoint was not kept: %v", err)
	}
}

// writeSynth simulates responses with opt and writes them to dir as
// responses.csv (long) and items.csv (the item texts).
func writeSynth(t *testing.T, dir string, opt synth.Options) *model.Responses {
	t.Helper()
	r, _, err := synth.Generate(opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := read.WriteLongCSV(filepath.Join(dir, "responses.csv"), r); err != nil {
		t.Fatal(err)
	}
	if err := read.WriteItemsCSV(filepath.Join(dir, "items.csv"), r); err != nil {
		t.Fatal(err)
	}
	return r
}

// jeirt train records the default rule its routing cross-validation chose,
// the figures of every candidate and the out-of-domain threshold in the
// manifest; they come back from the checkpoint, agree with its domain file,
// and route.folds: 0 records best-single without cross-validating.
func TestRunRecordsRouting(t *testing.T) {
	dir := t.TempDir()
	r, _, err := synth.Generate(synth.Options{Kind: "jeirt", Models: 12, Items: 120, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	read.WriteLongCSV(filepath.Join(dir, "responses.csv"), r)
	read.WriteItemsCSV(filepath.Join(dir, "items.csv"), r)
	os.WriteFile(filepath.Join(dir, "c.yaml"), []byte(`
data: {responses: responses.csv, items: items.csv}
split: {by: item}
encoder: {spec: "hash:32"}
model: {dim: 4}
train: {epochs: 3, batch_size: 256}
route: {folds: 3, false_flag_rate: 0.1, calibrate: true}
output: ckpt
`), 0o644)
	cfg, err := LoadConfig(filepath.Join(dir, "c.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	if _, err := Run(context.Background(), cfg, Options{Log: progress.LogTo(&log), NoBaselines: true}); err != nil {
		t.Fatal(err)
	}
	ck, err := checkpoint.Load(filepath.Join(dir, "ckpt"))
	if err != nil {
		t.Fatal(err)
	}
	rt := ck.Manifest.Routing
	if rt == nil || rt.CV == nil {
		t.Fatalf("no routing recorded: %+v\n%s", rt, log.String())
	}
	// 120 items by item: 96 training questions, 3 folds of 32.
	if rt.CV.Folds != 3 || rt.CV.Completed != 3 || rt.CV.Questions != 96 || len(rt.CV.Rules) != 1+4+5+1 || rt.CV.Rules[0].Rule != "best-single" {
		t.Errorf("cv: %+v", rt.CV)
	}
	if len(rt.TrainAccuracy) != 12 || rt.Fallback == "" || rt.TrainAccuracy[rt.Fallback] < slicesMax(rt.TrainAccuracy) {
		t.Errorf("fallback %q is not the best by training accuracy: %v", rt.Fallback, rt.TrainAccuracy)
	}
	chosen := false
	for _, s := range rt.CV.Rules {
		if s.Rule == rt.Rule && (s.Param == nil) == (rt.Param == nil) && (s.Param == nil || *s.Param == *rt.Param) {
			chosen = true
		}
	}
	if !chosen || !strings.Contains(log.String(), "routing: default rule ") {
		t.Errorf("rule %s %v not among the candidates, or not said:\n%s", rt.Rule, rt.Param, log.String())
	}
	// The calibrated P is fitted on every out-of-fold prediction: the 96
	// training questions' cells of the 12 models.
	if c := rt.Calibration; c == nil || c.Cells != 96*12 || !(c.LogLoss > 0) || !(c.RawLogLoss > 0) || !strings.Contains(log.String(), "calibrated P = σ(") {
		t.Errorf("calibration %+v\n%s", c, log.String())
	}
	dom, err := checkpoint.LoadDomain(ck.Dir)
	if err != nil || dom == nil {
		t.Fatal(err)
	}
	if o := rt.OutOfDomain; o == nil || o.FalseFlagRate != 0.1 || o.Threshold != dom.Threshold || o.Calibration != 96 || dom.FalseFlagRate != 0.1 {
		t.Errorf("out of domain: manifest %+v, file rate %v threshold %v", o, dom.FalseFlagRate, dom.Threshold)
	}
	cfg.Route.Folds, cfg.Output = 0, filepath.Join(dir, "ckpt0")
	if _, err := Run(context.Background(), cfg, Options{NoBaselines: true}); err != nil {
		t.Fatal(err)
	}
	ck0, err := checkpoint.Load(cfg.Output)
	if err != nil {
		t.Fatal(err)
	}
	if rt := ck0.Manifest.Routing; rt.Rule != "best-single" || rt.CV != nil || rt.Calibration != nil || !strings.Contains(rt.Why, "route.folds: 0") {
		t.Errorf("folds 0: %+v", rt)
	}
	cfg.Route.Folds, cfg.Route.Calibrate, cfg.Output = 3, false, filepath.Join(dir, "ckpt-raw")
	if _, err := Run(context.Background(), cfg, Options{NoBaselines: true}); err != nil {
		t.Fatal(err)
	}
	ckRaw, err := checkpoint.Load(cfg.Output)
	if err != nil {
		t.Fatal(err)
	}
	if rt := ckRaw.Manifest.Routing; rt.CV == nil || rt.Calibration != nil {
		t.Errorf("route.calibrate false: %+v", rt)
	}
}

func slicesMax(m map[string]float64) float64 {
	best := math.Inf(-1)
	for _, v := range m {
		best = math.Max(best, v)
	}
	return best
}

// train says when its data look transposed, as the readers of the other
// commands do, in the config's words (data.format, not --format).
func TestLoadSplitsWarnsTransposed(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("model,20231010_rag_claude2,20240620_sweagent_gpt4o,llama-3.1-8b-instruct\n")
	for j := 0; j < 20; j++ {
		fmt.Fprintf(&b, "django__django-%d,1,0,%d\n", 11000+j, j%2)
	}
	p := filepath.Join(dir, "t.csv")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := &Config{}
	cfg.Data.Responses = p
	cfg.Split = SplitConfig{Val: 0.1, Test: 0.1, Seed: 1, By: "cell"}
	var log strings.Builder
	if _, _, _, _, err := LoadSplits(cfg, progress.LogTo(&log)); err != nil {
		t.Fatal(err)
	}
	got := log.String()
	if !strings.Contains(got, "warning: "+p+": read as 20 models x 3 items") || !strings.Contains(got, "read it with data.format: wide-items") || strings.Contains(got, "--format") {
		t.Errorf("log %q", got)
	}
}
