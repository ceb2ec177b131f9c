package sweeprun

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/progress"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/pipeline"
	"github.com/jeirt/jeirt/train/sweep"
)

// sweepFixture writes a tiny synthetic responses file, a base training config
// and a sweep file into a temp folder and returns the sweep file's path.
func sweepFixture(t *testing.T, sweepText string) string {
	t.Helper()
	dir := t.TempDir()
	r, _, err := synth.Generate(synth.Options{Kind: "2pl", Models: 12, Items: 30, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	if err := read.WriteLongCSV(filepath.Join(dir, "responses.csv"), r); err != nil {
		t.Fatal(err)
	}
	base := `data: {responses: responses.csv}
encoder: {spec: "hash:16"}
model: {dim: 4, hidden: 8, dropout: 0.1}
train: {epochs: 2, batch_size: 64, lr: 1.0e-2, patience: 0}
output: unused
`
	if err := os.WriteFile(filepath.Join(dir, "base.yaml"), []byte(base), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "sweep.yaml")
	if err := os.WriteFile(p, []byte(sweepText), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const gridSweep = `name: tiny
base: base.yaml
grid:
  model.dim: [2, 4]
  train.lr: [1.0e-2, 3.0e-2]
seeds: [7, 8]
set: {train.epochs: 1}
slurm: {partition: gpu, gpus: 2, cpus: 8, mem: 32G, time: "1-00:00:00", max_parallel: 3, setup: ["module load cuda/12.4"]}
`

func TestSweepRunsExpandGridInOrder(t *testing.T) {
	s, err := LoadSweep(sweepFixture(t, gridSweep))
	if err != nil {
		t.Fatal(err)
	}
	if s.Size() != 8 || !reflect.DeepEqual(s.Keys(), []string{"model.dim", "train.lr", "train.seed"}) {
		t.Fatalf("size %d keys %v", s.Size(), s.Keys())
	}
	runs, err := s.Runs("/sw")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		dim  int
		lr   float64
		seed int64
	}{{2, 1e-2, 7}, {2, 1e-2, 8}, {2, 3e-2, 7}, {2, 3e-2, 8}, {4, 1e-2, 7}, {4, 1e-2, 8}, {4, 3e-2, 7}, {4, 3e-2, 8}}
	for k, r := range runs {
		c := r.Config
		if c.Model.Dim != want[k].dim || c.Train.LR != want[k].lr || c.Train.Seed != want[k].seed || c.Train.Epochs != 1 {
			t.Errorf("run %d: dim %d lr %v seed %d epochs %d, want %+v", k, c.Model.Dim, c.Train.LR, c.Train.Seed, c.Train.Epochs, want[k])
		}
		if c.Output != filepath.Join("/sw", "runs", RunID(k, 8), "checkpoint") || r.ID != RunID(k, 8) {
			t.Errorf("run %d: id %s output %s", k, r.ID, c.Output)
		}
		// The base config's other settings are kept.
		if c.Model.Hidden != 8 || c.Encoder.Spec != "hash:16" {
			t.Errorf("run %d lost base settings: %+v", k, c.Model)
		}
	}
	if got := sweep.FormatSettings(runs[5].Settings); got != "model.dim=4 train.lr=1.0e-2 train.seed=8" {
		t.Errorf("settings of run 5: %s", got)
	}
	sl := s.Slurm
	if sl.Partition != "gpu" || sl.GPUs != 2 || sl.CPUs != 8 || sl.Mem != "32G" || sl.Time != "1-00:00:00" || sl.MaxParallel != 3 ||
		sl.Jeirt != "jeirt" || !reflect.DeepEqual(sl.Setup, []string{"module load cuda/12.4"}) {
		t.Errorf("slurm settings: %+v", sl)
	}
	// A sweep file named by a relative path still writes absolute data paths,
	// since run configs are read from the sweep folder.
	t.Chdir(filepath.Dir(runs[0].Config.Data.Responses))
	rel, err := LoadSweep("sweep.yaml")
	if err != nil {
		t.Fatal(err)
	}
	relRuns, err := rel.Runs("out")
	if err != nil {
		t.Fatal(err)
	}
	if relRuns[0].Config.Data.Responses != runs[0].Config.Data.Responses || !filepath.IsAbs(relRuns[0].Config.Data.Responses) {
		t.Errorf("relative sweep file: data %q, want %q", relRuns[0].Config.Data.Responses, runs[0].Config.Data.Responses)
	}
	if RunID(7, 8) != "007" || RunID(999, 1000) != "999" || RunID(5, 1001) != "0005" {
		t.Errorf("RunID padding: %s %s %s", RunID(7, 8), RunID(999, 1000), RunID(5, 1001))
	}
}

func TestSweepFileErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"base: base.yaml\ngrid: {model.dim: [2]}\nepochs: 3\n",
			"sweep.yaml:3: unknown key epochs (known keys: name, base, grid, seeds, set, baselines, slurm)"},
		{"base: base.yaml\ngrid:\n  model.dimm: [2, 4]\n",
			"sweep.yaml:3: grid: unknown key model.dimm (known: model.dim, model.dropout, model.hidden, model.residual)"},
		{"base: base.yaml\ngrid: {output: [a, b]}\n",
			"sweep.yaml:2: grid: output cannot be set: each run writes runs/NNN/checkpoint in the sweep folder"},
		{"base: base.yaml\ngrid: {model.dim: []}\n", "sweep.yaml:2: grid: model.dim has no values"},
		{"base: base.yaml\ngrid: {model.dim: [2, 2]}\n", "sweep.yaml:2: grid: model.dim: value 2 is listed twice"},
		{"base: base.yaml\nseeds: [1, x]\n", `sweep.yaml:2: seeds: "x" is not an integer`},
		{"base: base.yaml\nslurm: {gpu: 1}\n",
			"sweep.yaml:2: unknown key slurm.gpu (known keys: partition, account, qos, constraint, gpus, cpus, mem, time, max_parallel, jeirt, setup)"},
		{"base: base.yaml\nslurm: {mem: lots}\n", `sweep.yaml: slurm.mem: must be a size such as 16G or 32000M, got "lots"`},
		{"base: base.yaml\nslurm: {time: 2h}\n", `sweep.yaml: slurm.time: must be minutes, HH:MM:SS or D-HH:MM:SS, got "2h"`},
		{"base: base.yaml\nslurm: {gpus: two}\n", `sweep.yaml:2: slurm.gpus: "two" is not valid here`},
		{"grid: {model.dim: [2]}\n", "sweep.yaml: base is required (the training config every run starts from)"},
		{"base: base.yaml\ngrid: {train.seed: [1]}\nseeds: [2]\n", "sweep.yaml: train.seed is both in grid and in seeds; use one"},
	} {
		_, err := ParseSweep([]byte(tc.text), "sweep.yaml")
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q:\n got %v\nwant %s", tc.text, err, tc.want)
		}
	}
	// A value the trainer rejects names the run, its settings and the key.
	p := sweepFixture(t, "base: base.yaml\ngrid: {model.dropout: [0.1, 1.5]}\n")
	_, err := LoadSweep(p)
	want := p + ": run 001 (model.dropout=1.5): model.dropout: must be in [0, 1), got 1.5"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	p = sweepFixture(t, "base: base.yaml\ngrid: {model.dim: [2, big]}\n")
	_, err = LoadSweep(p)
	want = p + `: run 001 (model.dim=big): model.dim: "big" is not a valid integer`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

func TestSweepEmitWritesLoadableConfigsAndResumes(t *testing.T) {
	p := sweepFixture(t, gridSweep)
	s, err := LoadSweep(p)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "sw")
	runs, err := s.Emit(out, EmitOptions{Slurm: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		c, err := pipeline.LoadConfig(filepath.Join(out, "runs", r.ID, "config.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		c.Source, r.Config.Source = "", ""
		if !reflect.DeepEqual(c, r.Config) {
			t.Errorf("run %s: config.yaml loads as\n%+v\nwant\n%+v", r.ID, c, r.Config)
		}
	}
	script, err := os.ReadFile(filepath.Join(out, SweepScriptFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"#SBATCH --array=0-7%3", "#SBATCH --partition=gpu", "#SBATCH --gres=gpu:2", "#SBATCH --cpus-per-task=8",
		"#SBATCH --mem=32G", "#SBATCH --time=1-00:00:00", "#SBATCH --output=\"" + out + "/runs/%3a/slurm-%A_%a.out\"",
		"#SBATCH --requeue", "#SBATCH --open-mode=append", `if [[ -n "${SLURM_CPUS_PER_TASK:-}" ]]; then export GOMAXPROCS="$SLURM_CPUS_PER_TASK"; fi`,
		"module load cuda/12.4", `exec "$JEIRT" train --config "$run_dir/config.yaml" --force --no-baselines`} {
		if !bytes.Contains(script, []byte(line+"\n")) {
			t.Errorf("script lacks %q:\n%s", line, script)
		}
	}
	// sbatch reads no #SBATCH line after the first command.
	if first := bytes.Index(script, []byte("\nset -euo")); first < 0 || bytes.LastIndex(script, []byte("#SBATCH")) > first {
		t.Errorf("an #SBATCH line comes after the first command:\n%s", script)
	}
	man, err := sweep.ReadManifest(out)
	if err != nil || len(man.Runs) != 8 || man.Runs[3].Dir != filepath.Join("runs", "003") {
		t.Fatalf("manifest: %+v %v", man, err)
	}
	// The same sweep again reuses the folder (results kept); a different one is refused.
	marker := filepath.Join(out, "runs", "000", "kept")
	os.WriteFile(marker, nil, 0o644)
	if _, err := s.Emit(out, EmitOptions{Slurm: true}); err != nil {
		t.Fatalf("re-emitting the same sweep: %v", err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("re-emitting removed run files: %v", err)
	}
	s.Set = []sweep.Setting{{Key: "train.epochs", Value: "2"}}
	_, err = s.Emit(out, EmitOptions{})
	if err == nil || !strings.Contains(err.Error(), "already holds a different sweep (runs/000/config.yaml differs)") {
		t.Errorf("different sweep: %v", err)
	}
	other := t.TempDir()
	if _, err := s.Emit(other, EmitOptions{}); err != nil {
		t.Errorf("emitting into an empty folder: %v", err)
	}
	other = t.TempDir()
	os.WriteFile(filepath.Join(other, "notes.txt"), nil, 0o644)
	_, err = s.Emit(other, EmitOptions{})
	var fe *model.FieldError
	if err == nil || err.Error() != other+" exists and is not this sweep's folder (no runs/000/config.yaml); choose another out or pass force to replace it" || !errors.As(err, &fe) || fe.Field != "Out" {
		t.Errorf("emitting into an unrelated folder: %v", err)
	}
	// --force replaces what jeirt wrote, and nothing else.
	_, err = s.Emit(out, EmitOptions{Replace: true})
	if err == nil || !strings.Contains(err.Error(), "holds files jeirt did not write (runs/000/kept)") {
		t.Errorf("--force over a file of the user's: %v", err)
	}
	os.Remove(marker)
	// A finished run's checkpoint (train writes it with its marker), its log, the table.
	if err := fileio.WriteDirAtomic(filepath.Join(out, "runs", "001", "checkpoint"), false, func(tmp string) error {
		return os.WriteFile(filepath.Join(tmp, "metrics.json"), []byte(`{"test": {"accuracy": 0.5}}`), 0o644)
	}); err != nil {
		t.Fatal(err)
	}
	// (A train.log and a table as jeirt writes them: files merely named so
	// are the user's; TestSafetySweepForceKeepsLookalikes.)
	os.WriteFile(filepath.Join(out, "runs", "001", "train.log"), []byte(trainLogBanner("001")+" (jeirt test)\n"), 0o644)
	os.WriteFile(filepath.Join(out, SweepTableFile), []byte("run,model.dim,status,best,best_epoch,epochs_run,seconds_per_epoch,checkpoint\n"), 0o644)
	if _, err := s.Emit(out, EmitOptions{Replace: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "runs", "001", "train.log")); err == nil {
		t.Errorf("--force kept old run files")
	}
}

func writeMetrics(t *testing.T, dir, id, body string) {
	t.Helper()
	p := filepath.Join(dir, "runs", id, "checkpoint", "metrics.json")
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCollectSweepNamesBestByValidationLoss(t *testing.T) {
	p := sweepFixture(t, "base: base.yaml\ngrid: {model.dim: [2, 4, 8, 16]}\n")
	s, err := LoadSweep(p)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if _, err := s.Emit(out, EmitOptions{Replace: true}); err != nil {
		t.Fatal(err)
	}
	writeMetrics(t, out, "000", `{"val": {"n": 10, "accuracy": 0.7, "auc": 0.8, "log_loss": 0.55, "brier": 0.2, "ece": 0.05},
 "test": {"n": 12, "accuracy": 0.75, "auc": null, "log_loss": 0.5, "brier": 0.19, "ece": 0.04}, "best_epoch": 3, "epochs_run": 5, "seconds_per_epoch": 0.5}`)
	writeMetrics(t, out, "001", `{"val": {"n": 10, "accuracy": 0.72, "auc": 0.81, "log_loss": 0.52, "brier": 0.2, "ece": 0.05},
 "test": {"n": 12, "accuracy": 0.7, "auc": 0.79, "log_loss": 0.53, "brier": 0.2, "ece": 0.06}, "best_epoch": 4, "epochs_run": 5, "seconds_per_epoch": 0.25}`)
	// Interrupted runs are not candidates even with a lower loss.
	writeMetrics(t, out, "002", `{"val": {"n": 10, "accuracy": 0.9, "auc": 0.9, "log_loss": 0.1, "brier": 0.1, "ece": 0.01},
 "test": {"n": 12, "accuracy": 0.9, "auc": 0.9, "log_loss": 0.1, "brier": 0.1, "ece": 0.01}, "best_epoch": 1, "epochs_run": 1, "seconds_per_epoch": 1, "interrupted": true}`)
	tab, err := sweep.Collect(out)
	if err != nil {
		t.Fatal(err)
	}
	if tab.Best != 1 || tab.Finished() != 2 {
		t.Fatalf("best %d finished %d", tab.Best, tab.Finished())
	}
	var csvOut bytes.Buffer
	if err := tab.WriteCSV(&csvOut); err != nil {
		t.Fatal(err)
	}
	want := `run,model.dim,status,best,val_log_loss,val_accuracy,val_auc,val_brier,test_log_loss,test_accuracy,test_auc,test_brier,test_ece,best_epoch,epochs_run,seconds_per_epoch,checkpoint
000,2,ok,,0.550000,0.700000,0.800000,0.200000,0.500000,0.750000,,0.190000,0.040000,3,5,0.500000,runs/000/checkpoint
001,4,ok,yes,0.520000,0.720000,0.810000,0.200000,0.530000,0.700000,0.790000,0.200000,0.060000,4,5,0.250000,runs/001/checkpoint
002,8,interrupted,,0.100000,0.900000,0.900000,0.100000,0.100000,0.900000,0.900000,0.100000,0.010000,1,1,1.000000,runs/002/checkpoint
003,16,missing,,,,,,,,,,,,,,runs/003/checkpoint
`
	if csvOut.String() != want {
		t.Errorf("csv:\n%s\nwant\n%s", csvOut.String(), want)
	}
	var printed bytes.Buffer
	tab.Print(&printed)
	for _, s := range []string{"001 *", "2 of 4 runs finished",
		"best by validation log-loss: run 001 (model.dim=4): val log-loss 0.5200, test log-loss 0.5300, test accuracy 0.7000, test AUC 0.7900"} {
		if !strings.Contains(printed.String(), s) {
			t.Errorf("printed table lacks %q:\n%s", s, printed.String())
		}
	}
	if _, err := sweep.Collect(t.TempDir()); err == nil || !strings.Contains(err.Error(), "is not a sweep folder: no sweep.json") {
		t.Errorf("collect of an empty folder: %v", err)
	}
}

func TestSweepRunLocalTrainsEachRunOnceAndCollects(t *testing.T) {
	p := sweepFixture(t, "base: base.yaml\ngrid: {model.dim: [2, 4]}\nseeds: [1, 2]\n")
	s, err := LoadSweep(p)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "sw")
	runs, err := s.Emit(out, EmitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	if err := s.RunLocal(context.Background(), out, runs, SweepLocalOptions{Log: progress.LogTo(&log)}); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	for _, r := range runs {
		ck, err := checkpoint.Load(filepath.Join(out, "runs", r.ID, "checkpoint"))
		if err != nil {
			t.Fatal(err)
		}
		if ck.Model.Dim != r.Config.Model.Dim {
			t.Errorf("run %s: checkpoint dim %d, want %d", r.ID, ck.Model.Dim, r.Config.Model.Dim)
		}
		if b, err := os.ReadFile(filepath.Join(out, "runs", r.ID, "train.log")); err != nil || !bytes.Contains(b, []byte("wrote ")) {
			t.Errorf("run %s: train.log %q %v", r.ID, b, err)
		}
	}
	if !strings.Contains(log.String(), "[run 002] epoch   1/2") {
		t.Errorf("log lines are not prefixed by run:\n%s", log.String())
	}
	tab, err := sweep.Collect(out)
	if err != nil {
		t.Fatal(err)
	}
	if tab.Finished() != 4 || tab.Best < 0 {
		t.Fatalf("finished %d best %d", tab.Finished(), tab.Best)
	}
	best := tab.Rows[tab.Best]
	for _, r := range tab.Rows {
		if math.IsNaN(r.Val.LogLoss) || r.Val.LogLoss < best.Val.LogLoss || r.Test.N == 0 || r.Val.N == 0 {
			t.Errorf("run %s: val loss %v (n %d), test n %d; best %s has %v", r.ID, r.Val.LogLoss, r.Val.N, r.Test.N, best.ID, best.Val.LogLoss)
		}
	}
	var printed bytes.Buffer
	tab.Print(&printed)
	if !strings.Contains(printed.String(), "mean ± sd over seeds:") || !strings.Contains(printed.String(), "model.dim=4  2") {
		t.Errorf("no seed summary:\n%s", printed.String())
	}
	// A second pass trains nothing.
	log.Reset()
	if err := s.RunLocal(context.Background(), out, runs, SweepLocalOptions{Log: progress.LogTo(&log)}); err != nil {
		t.Fatal(err)
	}
	if strings.Count(log.String(), "is already done; skipping") != 4 || strings.Contains(log.String(), "epoch") {
		t.Errorf("second pass:\n%s", log.String())
	}
}

// A grid whose runs multiply past sweep.MaxRuns is refused before anything is
// expanded (10^6 runs here; 10^30 once overflowed the count).
func TestSweepTooManyRuns(t *testing.T) {
	var b strings.Builder
	b.WriteString("base: b.yaml\ngrid:\n")
	for _, k := range []string{"model.dim", "model.hidden", "train.epochs", "train.patience", "train.batch_size", "train.seed"} {
		b.WriteString("  " + k + ": [1,2,3,4,5,6,7,8,9,10]\n")
	}
	_, err := ParseSweep([]byte(b.String()), "sweep.yaml")
	if err == nil || !strings.Contains(err.Error(), "sweep.yaml: the grid and seeds make more than 100000 runs") {
		t.Fatalf("got %v", err)
	}
}
