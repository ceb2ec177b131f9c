package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/encoder"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/pipeline"
	"github.com/jeirt/jeirt/train/sweep"
)

// sweepRepoRoot is the module root, two folders above this package.
func sweepRepoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(wd, "..", "..")
}

// runBash runs script with env added to the environment, in dir, and returns its
// combined output and error.
func runBash(t *testing.T, dir string, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("bash", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func writeTinyResponses(t *testing.T, path string, models, items int, seed int64) *model.Responses {
	t.Helper()
	r, _, err := synth.Generate(synth.Options{Kind: "2pl", Models: models, Items: items, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := read.WriteLongCSV(path, r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestSlurmScripts builds jeirt, checks every template and generated script
// with bash -n, and runs array tasks locally by setting SLURM_ARRAY_TASK_ID,
// as Slurm would, on tiny data.
func TestSlurmScripts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the jeirt binary")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	root := sweepRepoRoot(t)
	slurmDir := filepath.Join(root, "scripts", "slurm")
	work := t.TempDir()
	bin := filepath.Join(work, "bin", "jeirt")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	jeirtEnv := "JEIRT=" + bin

	templates, _ := filepath.Glob(filepath.Join(slurmDir, "*"))
	if len(templates) != 8 {
		t.Errorf("scripts/slurm holds %d files, want 8: %v", len(templates), templates)
	}
	for _, p := range templates {
		if out, err := runBash(t, work, nil, "-n", p); err != nil {
			t.Errorf("bash -n %s: %v\n%s", p, err, out)
		}
		if info, err := os.Stat(p); err != nil || info.Mode()&0o111 == 0 {
			t.Errorf("%s is not executable", p)
		}
	}

	t.Run("sweep array task", func(t *testing.T) {
		dir := filepath.Join(work, "sweep")
		writeTinyResponses(t, filepath.Join(dir, "responses.csv"), 10, 24, 3)
		os.WriteFile(filepath.Join(dir, "base.yaml"), []byte(`data: {responses: responses.csv}
encoder: {spec: "hash:16"}
model: {dim: 4, hidden: 8, dropout: 0.1}
train: {epochs: 2, batch_size: 64, lr: 1.0e-2}
output: unused
`), 0o644)
		os.WriteFile(filepath.Join(dir, "sweep.yaml"), []byte("name: tiny\nbase: base.yaml\ngrid: {model.dim: [2, 4], train.lr: [1.0e-2, 2.0e-2]}\nslurm: {setup: [\"export FROM_SETUP=1\"]}\n"), 0o644)
		out := filepath.Join(dir, "out")
		cmd := exec.Command(bin, "sweep", "--config", filepath.Join(dir, "sweep.yaml"), "--emit", "slurm", "--out", out, "--partition", "short", "--gpus", "0", "--time", "10")
		if b, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(b), "submit: sbatch "+out+"/sweep.sbatch") {
			t.Fatalf("sweep --emit slurm: %v\n%s", err, b)
		}
		script := filepath.Join(out, "sweep.sbatch")
		if b, err := runBash(t, dir, nil, "-n", script); err != nil {
			t.Fatalf("bash -n: %v\n%s", err, b)
		}
		text, _ := os.ReadFile(script)
		for _, line := range []string{"#SBATCH --array=0-3", "#SBATCH --partition=short", "#SBATCH --time=10", "export FROM_SETUP=1"} {
			if !bytes.Contains(text, []byte(line+"\n")) {
				t.Errorf("script lacks %q", line)
			}
		}
		if bytes.Contains(text, []byte("--gres")) {
			t.Errorf("--gpus 0 still asks for a GPU")
		}
		// Task 2 only: it writes runs/002 and nothing else.
		b, err := runBash(t, dir, []string{jeirtEnv, "SLURM_ARRAY_TASK_ID=2", "SLURM_JOB_ID=99"}, script)
		if err != nil {
			t.Fatalf("task 2: %v\n%s", err, b)
		}
		ck, err := checkpoint.Load(filepath.Join(out, "runs", "002", "checkpoint"))
		if err != nil {
			t.Fatal(err)
		}
		var ran pipeline.Config
		if err := json.Unmarshal(ck.Manifest.Config, &ran); err != nil {
			t.Fatal(err)
		}
		if ck.Model.Dim != 4 || ran.Train.LR != 1e-2 || ran.Model.Dim != 4 {
			t.Errorf("run 002 trained dim %d, config %+v; want dim 4, lr 1e-2", ck.Model.Dim, ran)
		}
		for _, id := range []string{"000", "001", "003"} {
			if _, err := os.Stat(filepath.Join(out, "runs", id, "checkpoint")); err == nil {
				t.Errorf("task 2 wrote run %s", id)
			}
		}
		b, err = runBash(t, dir, []string{jeirtEnv, "SLURM_ARRAY_TASK_ID=2"}, script)
		if err != nil || !strings.Contains(b, "sweep: run 002 is already done") {
			t.Errorf("second task 2: %v\n%s", err, b)
		}
		b, err = runBash(t, dir, []string{jeirtEnv, "SLURM_ARRAY_TASK_ID=4"}, script)
		if err == nil || !strings.Contains(b, "sweep: SLURM_ARRAY_TASK_ID=4 is not a run of this sweep (0 to 3)") {
			t.Errorf("task 4: %v\n%s", err, b)
		}
		b, err = runBash(t, dir, []string{jeirtEnv, "SLURM_ARRAY_TASK_ID="}, script)
		if err == nil || !strings.Contains(b, "SLURM_ARRAY_TASK_ID: is not set") {
			t.Errorf("no task id: %v\n%s", err, b)
		}
		tab, err := sweep.Collect(out)
		if err != nil {
			t.Fatal(err)
		}
		if tab.Finished() != 1 || tab.Best != 2 || tab.Rows[0].Status != "missing" {
			t.Errorf("collect: finished %d best %d", tab.Finished(), tab.Best)
		}
	})

	t.Run("sharded encode and dependent merge", func(t *testing.T) {
		dir := filepath.Join(work, "encode")
		os.MkdirAll(dir, 0o755)
		items := filepath.Join(dir, "items.csv")
		os.WriteFile(items, []byte("item_id,text\nq1,What is 2+2?\nq2,Name a prime number.\nq3,Capital of France?\nq4,Who wrote Hamlet?\nq5,Boiling point of water?\n"), 0o644)
		// A stand-in sbatch that records its arguments and runs the job at
		// once: every array index with SLURM_ARRAY_TASK_ID set, as Slurm would.
		fake := filepath.Join(dir, "fakebin", "sbatch")
		os.MkdirAll(filepath.Dir(fake), 0o755)
		os.WriteFile(fake, []byte(`#!/bin/bash
set -euo pipefail
echo "$*" >> "$SBATCH_LOG"
array=""
while [[ "$1" == -* ]]; do
  case "$1" in --array=*) array="${1#--array=}" ;; esac
  shift
done
script="$1"; shift
id=$((4240 + $(wc -l < "$SBATCH_LOG")))
if [[ -n "$array" ]]; then
  for ((i = ${array%-*}; i <= ${array#*-}; i++)); do
    SLURM_ARRAY_TASK_ID=$i SLURM_JOB_ID=$id bash "$script" "$@" >> "$SBATCH_LOG.out" 2>&1
  done
else
  SLURM_JOB_ID=$id bash "$script" "$@" >> "$SBATCH_LOG.out" 2>&1
fi
echo "$id;cluster"
`), 0o755)
		log := filepath.Join(dir, "sbatch.log")
		env := []string{jeirtEnv, "PATH=" + filepath.Dir(fake) + ":" + os.Getenv("PATH"), "SBATCH_LOG=" + log,
			"INPUT=items.csv", "OUT_DIR=vec", "N=2", "ENCODER=hash:8"}
		b, err := runBash(t, dir, env, filepath.Join(slurmDir, "submit-encode.sh"), "--partition=cpu")
		if err != nil {
			outLog, _ := os.ReadFile(log + ".out")
			t.Fatalf("submit-encode.sh: %v\n%s\n%s", err, b, outLog)
		}
		if !strings.Contains(b, "encode: array job 4241 (2 shards into "+filepath.Join(dir, "vec")+"), merge job 4242") {
			t.Errorf("submit-encode.sh printed %q", b)
		}
		calls, _ := os.ReadFile(log)
		want := "--parsable --array=0-1 --partition=cpu " + filepath.Join(slurmDir, "encode.sbatch") + "\n" +
			"--parsable --dependency=afterok:4241 --partition=cpu " + filepath.Join(slurmDir, "encode-merge.sbatch") + "\n"
		if string(calls) != want {
			t.Errorf("sbatch calls:\n%s\nwant\n%s", calls, want)
		}
		merged, err := encoder.ReadVectors(filepath.Join(dir, "vec", "vectors.safetensors"))
		if err != nil {
			t.Fatal(err)
		}
		h, _ := encoder.NewHash(8)
		wantRows, _ := h.Encode(t.Context(), []string{"What is 2+2?", "Name a prime number.", "Capital of France?", "Who wrote Hamlet?", "Boiling point of water?"})
		if !reflect.DeepEqual(merged.IDs, []string{"q1", "q2", "q3", "q4", "q5"}) || !reflect.DeepEqual(merged.Rows, wantRows) {
			t.Errorf("merged vectors: ids %v", merged.IDs)
		}
		shard1, err := encoder.ReadVectors(filepath.Join(dir, "vec", "shard-0001.safetensors"))
		if err != nil || !reflect.DeepEqual(shard1.IDs, []string{"q2", "q4"}) {
			t.Errorf("shard 1: %v %v", shard1, err)
		}
		b, err = runBash(t, dir, []string{jeirtEnv, "INPUT=items.csv", "OUT_DIR=vec", "N=2", "SLURM_ARRAY_TASK_ID=2"}, filepath.Join(slurmDir, "encode.sbatch"))
		if err == nil || !strings.Contains(b, "encode: SLURM_ARRAY_TASK_ID=2 is not a shard of N=2 (0 to 1)") {
			t.Errorf("task 2 of 2: %v\n%s", err, b)
		}
		os.Remove(filepath.Join(dir, "vec", "shard-0000.safetensors"))
		b, err = runBash(t, dir, []string{jeirtEnv, "INPUT=items.csv", "OUT_DIR=vec", "N=2"}, filepath.Join(slurmDir, "encode-merge.sbatch"))
		if err == nil || !strings.Contains(b, "encode merge: shard 0 of 2 is missing (vec/shard-0000.safetensors)") {
			t.Errorf("merge with a missing shard: %v\n%s", err, b)
		}
	})

	t.Run("irt per benchmark and in one batch job", func(t *testing.T) {
		dir := filepath.Join(work, "irt")
		writeTinyResponses(t, filepath.Join(dir, "data", "alpha", "responses.csv"), 15, 20, 1)
		writeTinyResponses(t, filepath.Join(dir, "data", "beta", "responses.csv"), 12, 25, 2)
		os.WriteFile(filepath.Join(dir, "list.txt"), []byte("# benchmarks\ndata/alpha/responses.csv\n\ndata/beta/responses.csv b2\n"), 0o644)
		env := []string{jeirtEnv, "LIST=list.txt", "OUT_DIR=fits", "IRT_ARGS=--max-iter 50", "SLURM_ARRAY_TASK_ID=1"}
		b, err := runBash(t, dir, env, filepath.Join(slurmDir, "irt-per-benchmark.sbatch"))
		if err != nil {
			t.Fatalf("irt task 1: %v\n%s", err, b)
		}
		if _, err := os.Stat(filepath.Join(dir, "fits", "alpha")); err == nil {
			t.Errorf("task 1 fitted alpha")
		}
		items, err := os.ReadFile(filepath.Join(dir, "fits", "b2", "items.csv"))
		if err != nil || strings.Count(string(items), "\n") != 26 {
			t.Errorf("fits/b2/items.csv: %d lines, %v", strings.Count(string(items), "\n"), err)
		}
		env[len(env)-1] = "SLURM_ARRAY_TASK_ID=2"
		b, err = runBash(t, dir, env, filepath.Join(slurmDir, "irt-per-benchmark.sbatch"))
		if err == nil || !strings.Contains(b, "irt: SLURM_ARRAY_TASK_ID=2 is not a line of list.txt (0 to 1)") {
			t.Errorf("task 2: %v\n%s", err, b)
		}
		// The per-benchmark jobs' folder is not the batch's to replace, even
		// with --force: it was made to hold them and carries no marker.
		b, err = runBash(t, dir, []string{jeirtEnv, "LIST=list.txt", "OUT_DIR=fits", "DEVICE=cpu"}, filepath.Join(slurmDir, "irt-batch-gpu.sbatch"))
		if err == nil || !strings.Contains(b, "fits was not written by this jeirt (it has no .jeirt-output.json; it holds b2/)") {
			t.Fatalf("batch job over the per-benchmark fits: %v\n%s", err, b)
		}
		os.RemoveAll(filepath.Join(dir, "fits"))
		b, err = runBash(t, dir, []string{jeirtEnv, "LIST=list.txt", "OUT_DIR=fits", "DEVICE=cpu"}, filepath.Join(slurmDir, "irt-batch-gpu.sbatch"))
		if err != nil || !strings.Contains(b, "irt: 2 fits in fits") {
			t.Fatalf("batch job: %v\n%s", err, b)
		}
		abil, err := os.ReadFile(filepath.Join(dir, "fits", "alpha", "abilities.csv"))
		if err != nil || strings.Count(string(abil), "\n") != 16 {
			t.Errorf("fits/alpha/abilities.csv: %d lines, %v", strings.Count(string(abil), "\n"), err)
		}
		// The report of a fit alone: the four IRT figures and the page.
		cmd := exec.Command(bin, "report", "--fit", "fits/alpha", "--out", "report")
		cmd.Dir = dir
		if b, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(b), "index.html (4 figures as PNG and SVG, 2 tables)") {
			t.Fatalf("jeirt report --fit: %v\n%s", err, b)
		}
		for _, f := range []string{"index.html", "abilities.png", "abilities.svg", "icc.png", "icc.svg", "discrimination.png", "discrimination.svg", "information.png", "information.svg"} {
			if _, err := os.Stat(filepath.Join(dir, "report", f)); err != nil {
				t.Error(err)
			}
		}
	})

	t.Run("text to checkpoint job", func(t *testing.T) {
		// The GPU job's steps with DEVICE=cpu: encode the config's items into
		// the cache, then train on the same encoder and cache.
		out := filepath.Join(work, "ttc")
		env := []string{jeirtEnv, "CONFIG=" + filepath.Join(root, "configs", "quickstart.yaml"), "ENCODER=hash:16", "OUT_DIR=" + out, "DEVICE=cpu"}
		b, err := runBash(t, work, env, filepath.Join(slurmDir, "text-to-checkpoint.sbatch"), "--set", "train.epochs=1", "--no-baselines")
		if err != nil {
			t.Fatalf("text-to-checkpoint.sbatch: %v\n%s", err, b)
		}
		if v, err := encoder.ReadVectors(filepath.Join(out, "questions.safetensors")); err != nil || len(v.IDs) != 500 || v.Dim != 16 {
			t.Errorf("questions.safetensors: %v", err)
		}
		if _, err := checkpoint.Load(filepath.Join(out, "run")); err != nil {
			t.Errorf("checkpoint: %v", err)
		}
	})

	t.Run("train job", func(t *testing.T) {
		dir := filepath.Join(work, "train")
		writeTinyResponses(t, filepath.Join(dir, "r.csv"), 8, 16, 4)
		os.WriteFile(filepath.Join(dir, "c.yaml"), []byte("data: {responses: r.csv}\nencoder: {spec: \"hash:8\"}\nmodel: {dim: 2, hidden: 4}\ntrain: {epochs: 1}\noutput: ck\n"), 0o644)
		b, err := runBash(t, dir, []string{jeirtEnv, "CONFIG=c.yaml"}, filepath.Join(slurmDir, "train.sbatch"), "--set", "model.dim=3", "--no-baselines")
		if err != nil {
			t.Fatalf("train.sbatch: %v\n%s", err, b)
		}
		ck, err := checkpoint.Load(filepath.Join(dir, "ck"))
		if err != nil || ck.Model.Dim != 3 {
			t.Errorf("checkpoint: %v", err)
		}
		// The report of a checkpoint alone finds its training data through the manifest.
		cmd := exec.Command(bin, "report", "--checkpoint", "ck", "--out", "report")
		cmd.Dir = dir
		if b, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(b), "figure Question-embedding norm against item error rate") ||
			!strings.Contains(string(b), "figure 2-D PCA of the embedding space") {
			t.Errorf("jeirt report --checkpoint: %v\n%s", err, b)
		}
	})
}
