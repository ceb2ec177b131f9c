package pipeline

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/jeirt"
)

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadConfigDefaultsAndPaths(t *testing.T) {
	p := writeConfig(t, `
data: {responses: data/r.csv, items: /abs/items.csv}
model: {dim: 64}
train: {lr: 1.0e-3, batching: per-pair}
output: out/run
`)
	c, err := LoadConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(p)
	if c.Data.Responses != filepath.Join(dir, "data/r.csv") || c.Data.Items != "/abs/items.csv" || c.Output != filepath.Join(dir, "out/run") {
		t.Errorf("paths not resolved against the config folder: %+v, output %q", c.Data, c.Output)
	}
	want := DefaultConfig()
	if c.Model.Dim != 64 || c.Model.Dropout != want.Model.Dropout || c.Train.LR != 1e-3 || c.Train.Batching != "per-pair" ||
		c.Train.Epochs != 100 || c.Train.BatchSize != 512 || c.Train.Gamma != want.Train.Gamma || c.Split != want.Split || c.Encoder.Spec != "hash" {
		t.Errorf("defaults not kept: %+v", c)
	}
}

func TestLoadConfigErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"data: {responses: r.csv}\noutput: o\ntrain:\n  lr: -1\n", "config.yaml: train.lr: must be finite and > 0, got -1"},
		{"data: {responses: r.csv}\noutput: o\ntrain:\n  lr: .inf\n", "config.yaml: train.lr: must be finite and > 0, got +Inf"},
		{"data: {responses: r.csv}\noutput: o\ntrain:\n  weight_decay: .nan\n", "config.yaml: train.weight_decay: must be finite and >= 0, got NaN"},
		{"data: {responses: r.csv}\noutput: o\nmodel:\n  dropout: .nan\n", "config.yaml: model.dropout: must be in [0, 1), got NaN"},
		{"data: {responses: r.csv}\noutput: o\nmodel:\n  residual: .nan\n", "config.yaml: model.residual: must be >= 0"},
		{"data: {responses: r.csv}\noutput: o\nsplit:\n  val: .nan\n", "config.yaml: split.val: must be in [0, 1), got NaN"},
		{"data: {responses: r.csv}\noutput: o\nsplit:\n  test: .nan\n", "config.yaml: split.test: must be in [0, 1), got NaN"},
		{"data: {responses: r.csv}\noutput: o\nmodel:\n  dim: 1000000000\n", "config.yaml: model.dim: must be in [1, 65536], got 1000000000"},
		{"data: {responses: r.csv}\noutput: o\nmodel:\n  hidden: 2000000000\n", "config.yaml: model.hidden: must be in [0, 65536]"},
		{"data: {responses: r.csv}\noutput: o\ntrain:\n  lrr: 1\n", "config.yaml:4: unknown key train.lrr (known keys here: batch_size, batching, device, epochs, gamma, lr, patience, preset, seed, step, weight_decay)"},
		{"data: {responses: r.csv}\noutput: o\nsplits: {}\n", "config.yaml:3: unknown key splits (known keys here: data, encoder, model, output, route, split, train)"},
		{"data: {responses: r.csv}\noutput: o\nroute: {folds: 1}\n", "config.yaml: route.folds: must be 0 (no cross-validation) or at least 2, got 1"},
		{"data: {responses: r.csv}\noutput: o\nroute: {refit: warm}\n", "config.yaml: route.refit: must be best-epoch or early-stop, got \"warm\""},
		{"data: {responses: r.csv}\noutput: o\nroute: {false_flag_rate: 0}\n", "config.yaml: route.false_flag_rate: must be in (0, 1), got 0"},
		{"data: {responses: r.csv}\noutput: o\nroute: {guard: strict}\n", "config.yaml: route.guard: must be one-se, se or reality-check, got \"strict\""},
		{"data: {responses: r.csv}\noutput: o\nroute: {repeats: 0}\n", "config.yaml: route.repeats: must be >= 1, got 0"},
		{"data: {responses: r.csv}\noutput: o\nmodel:\n  dim: big\n", "config.yaml:4:8: model.dim: cannot unmarshal !!str `big` into int"},
		// Flow style: the error names the value's own key and column, not
		// the last key of the line.
		{"data: {responses: r.csv}\noutput: o\ntrain: {lr: fast, patience: 3}\n", "config.yaml:3:13: train.lr: cannot unmarshal !!str `fast` into float64"},
		{"data: {responses: r.csv}\noutput: o\ntrain: {lr: 0.1, patience: soon}\n", "config.yaml:3:28: train.patience: cannot unmarshal !!str `soon` into int"},
		{"data: {responses: r.csv}\noutput: o\ntrain:\n  lr: fast\n  patience: 3\n", "config.yaml:4:7: train.lr: cannot unmarshal !!str `fast` into float64"},
		{"data: {responses: r.csv}\noutput: o\ntrain:\n  lr: 0.1\n  patience: soon\n", "config.yaml:5:13: train.patience: cannot unmarshal !!str `soon` into int"},
		{"{data: {responses: r.csv, format: [long]}, output: o}\n", "config.yaml:1:35: data.format must be a single value"},
		{"data: {responses: r.csv}\noutput: o\ntrain: {batching: pairs}\n", "config.yaml: train.batching: must be by-question or per-pair, got \"pairs\""},
		{"data: {train: a.csv}\noutput: o\n", "config.yaml: data: data.train, data.val and data.test must all be set (got train"},
		{"data: {responses: r.csv}\n", "config.yaml: output: must be set (the checkpoint folder to write)"},
		{"data: {responses: r.csv}\noutput: o\nsplit: {val: 0.5, test: 0.5}\n", "config.yaml: split: val + test must be below 1, got 1"},
		{"data: {responses: r.csv}\noutput: o\nmodel: 3\n", "config.yaml:3:8: model must be a mapping of keys to values"},
	} {
		p := writeConfig(t, tc.text)
		_, err := LoadConfig(p)
		if err == nil {
			t.Errorf("%q: no error", tc.text)
			continue
		}
		got := err.Error()
		want := filepath.Dir(p) + "/" + tc.want
		if len(got) < len(want) || got[:len(want)] != want {
			t.Errorf("%q:\n got %s\nwant %s", tc.text, got, want)
		}
	}
}

func TestConfigSet(t *testing.T) {
	c := DefaultConfig()
	for _, kv := range []string{"model.dim=128", "train.lr=1e-3", "train.batching=per-pair", "output=x", "model.residual=0.01", "split.seed=7"} {
		if err := c.SetAll([]string{kv}); err != nil {
			t.Fatal(err)
		}
	}
	if c.Model.Dim != 128 || c.Train.LR != 1e-3 || c.Train.Batching != "per-pair" || c.Output != "x" || c.Model.Residual != 0.01 || c.Split.Seed != 7 {
		t.Errorf("Set: %+v", c)
	}
	for _, tc := range []struct{ kv, want string }{
		{"model.dims=1", "set unknown key model.dims (known: model.dim, model.dropout, model.hidden, model.residual)"},
		{"model.dim=abc", `set model.dim: "abc" is not a valid integer`},
		{"model=1", "set model is a section; set one of its keys, e.g. model.dim"},
		{"output.x=1", "set unknown key output.x (output is a single value)"},
		{"train.lr", `set "train.lr": want key=value, e.g. model.dim=128`},
	} {
		// The library names the setting Set (the command line shows --set).
		err := c.SetAll([]string{tc.kv})
		var fe *model.FieldError
		if err == nil || err.Error() != tc.want || !errors.As(err, &fe) || fe.Field != "Set" {
			t.Errorf("%s: got %v, want %s", tc.kv, err, tc.want)
		}
	}
}

// The zero JEIRT trains as DefaultConfig does: defaults live in one place.
func TestJEIRTZeroIsDefaultConfig(t *testing.T) {
	const inputDim = 384
	zero := jeirt.Trainer{}.WithDefaults(inputDim)
	def := DefaultConfig().Trainer("").WithDefaults(inputDim)
	if zero.Dropout != def.Dropout || zero.WeightDecay != def.WeightDecay || zero.Patience != def.Patience ||
		zero.Dim != def.Dim || zero.Hidden != def.Hidden || zero.Epochs != def.Epochs || zero.BatchSize != def.BatchSize ||
		zero.LR != def.LR || zero.Gamma != def.Gamma || zero.Batching != def.Batching {
		t.Errorf("JEIRT{} trains with %+v, DefaultConfig with %+v", zero, def)
	}
	if zero.Dropout != 0.5 || zero.WeightDecay != 0.3 || zero.Patience != 10 {
		t.Errorf("defaults %v %v %v", zero.Dropout, zero.WeightDecay, zero.Patience)
	}
	none := jeirt.Trainer{Dropout: -1, WeightDecay: -1, Patience: -1}.WithDefaults(inputDim)
	if none.Dropout != 0 || none.WeightDecay != 0 || none.Patience != 0 {
		t.Errorf("negative means none: %+v", none)
	}
}

// Preset reference starts from the reference implementation's settings; keys
// the file gives still win, and --set train.preset replaces the train block.
func TestConfigPresetReference(t *testing.T) {
	c, err := ParseConfig([]byte("data: {responses: r.csv}\noutput: o\ntrain: {preset: reference, epochs: 7}\n"), "config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ref := ReferenceTrain()
	if c.Train.LR != 5e-5 || c.Train.Gamma != 0.75 || c.Train.WeightDecay != 0.01 || c.Train.Epochs != 7 || c.Train.Preset != "reference" {
		t.Errorf("preset reference with epochs 7: got %+v, reference %+v", c.Train, ref)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	d := DefaultConfig()
	if d.Train.LR == ref.LR || d.Train.Gamma == ref.Gamma {
		t.Errorf("the defaults are the reference's: %+v", d.Train)
	}
	if err := d.SetAll([]string{"train.preset=reference", "train.lr=1e-4"}); err != nil {
		t.Fatal(err)
	}
	if d.Train.Gamma != 0.75 || d.Train.LR != 1e-4 {
		t.Errorf("--set train.preset=reference then train.lr: got %+v", d.Train)
	}
	if _, err := ParseConfig([]byte("train: {preset: fast}\n"), "config.yaml"); err == nil || !strings.Contains(err.Error(), "config.yaml:1: train.preset") {
		t.Errorf("unknown preset: got %v", err)
	}
}

// A config with only data and the encoder trains exactly as the shipped
// benchmark configs do: their model, split and training settings are the
// defaults (docs/training.md measures the defaults on both benchmarks).
func TestShippedConfigsAreTheDefaults(t *testing.T) {
	for _, name := range []string{"quickstart.yaml", "swebench.yaml", "rewardbench.yaml"} {
		c, err := LoadConfig(filepath.Join("..", "..", "configs", name))
		if err != nil {
			t.Fatal(err)
		}
		d := DefaultConfig()
		if c.Split != d.Split || c.Model != d.Model || c.Train != d.Train || c.Encoder.Spec != d.Encoder.Spec {
			t.Errorf("%s: split %+v model %+v train %+v; the defaults are split %+v model %+v train %+v",
				name, c.Split, c.Model, c.Train, d.Split, d.Model, d.Train)
		}
	}
}

// --set applies before validation: an override fixes a value the file gets
// wrong (or supplies one it lacks), and an override that is itself wrong is
// refused naming the key.
func TestLoadConfigSetBeforeValidation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.yaml")
	os.WriteFile(path, []byte("data: {responses: r.csv}\ntrain: {lr: -1}\noutput: out\n"), 0o644)
	if _, err := LoadConfig(path); err == nil || !strings.Contains(err.Error(), "train.lr") {
		t.Fatalf("lr -1 without an override: %v", err)
	}
	c, err := LoadConfigSet(path, []string{"train.lr=0.002"})
	if err != nil || c.Train.LR != 0.002 {
		t.Fatalf("fixed by --set: %v, lr %v", err, c.Train.LR)
	}
	if _, err := LoadConfigSet(path, []string{"train.lr=0.002", "model.dim=-3"}); err == nil || !strings.Contains(err.Error(), "model.dim") {
		t.Errorf("a bad override: %v", err)
	}
}

func TestSetPathNotes(t *testing.T) {
	wd, _ := os.Getwd()
	got := SetPathNotes("configs/q.yaml", []string{"output=out/x", "model.dim=8", "data.items=/abs/items.csv", "data.responses="})
	want := "--set output=out/x is " + filepath.Join(wd, "out/x") + ": a --set path is relative to the working directory (the config's own paths are relative to configs)"
	if len(got) != 1 || got[0] != want {
		t.Errorf("notes %q, want [%q]", got, want)
	}
	if got := SetPathNotes("q.yaml", []string{"output=out/x"}); got != nil {
		t.Errorf("a config in the working directory: %q", got)
	}
}
