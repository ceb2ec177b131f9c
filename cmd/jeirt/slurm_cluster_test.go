package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jeirt/jeirt/cmd/internal/slurm"
	"github.com/jeirt/jeirt/encoder"
	"github.com/jeirt/jeirt/model/checkpoint"
)

// The tests in this file submit real jobs to a Slurm cluster: the
// single-node one of scripts/slurm/local-cluster.sh (which .ci/run starts),
// or any cluster whose client commands work here and whose nodes see this
// machine's temporary folder. Where none answers they skip, saying how to
// start one; JEIRT_SLURM_REQUIRED=1 (set by .ci/run when the cluster started)
// turns that skip into a failure.

// slurmCluster skips t unless sinfo answers with a usable node.
func slurmCluster(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("submits jobs to a Slurm cluster")
	}
	skip := func(format string, args ...any) {
		t.Helper()
		msg := "no Slurm cluster reachable: " + strings.TrimSpace(fmt.Sprintf(format, args...)) +
			" (start one with: scripts/slurm/local-cluster.sh start, then export SLURM_CONF=/tmp/jeirt-slurm/slurm.conf)"
		if os.Getenv("JEIRT_SLURM_REQUIRED") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if _, err := exec.LookPath("sbatch"); err != nil {
		skip("sbatch is not on PATH")
	}
	out, err := exec.Command("sinfo", "-h", "-o", "%T").CombinedOutput()
	if err != nil {
		skip("sinfo (SLURM_CONF=%q): %v: %s", os.Getenv("SLURM_CONF"), err, out)
	}
	for _, s := range strings.Fields(string(out)) {
		if s == "idle" || s == "mixed" || s == "allocated" {
			return
		}
	}
	skip("sinfo shows no node that takes jobs: %q", out)
}

// waitTasks polls the job folder dir until no task (and no merge) is pending
// or running, and returns the states.
func waitTasks(t *testing.T, dir string, limit time.Duration) []slurm.Task {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		_, tasks, err := slurm.States(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		busy := false
		for _, k := range tasks {
			busy = busy || k.State == slurm.Pending || k.State == slurm.Running
		}
		if !busy {
			return tasks
		}
		if time.Now().After(deadline) {
			out, _ := exec.Command("squeue").CombinedOutput()
			t.Fatalf("%s: tasks still queued or running after %s: %+v\nsqueue:\n%s", dir, limit, tasks, out)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func taskStates(tasks []slurm.Task) []string {
	s := make([]string, len(tasks))
	for k, t := range tasks {
		s[k] = t.State
	}
	return s
}

// TestSlurmCluster runs the cluster workflow of docs/cluster.md on a real
// Slurm: a sweep whose one task fails on purpose, resubmitted; a task
// cancelled mid-training and another requeued (preempted); a sharded
// encoding with its dependent merge, one shard failing and resubmitted.
func TestSlurmCluster(t *testing.T) {
	slurmCluster(t)
	work := t.TempDir()
	bin := filepath.Join(work, "bin", "jeirt")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// sbatch passes its environment to the jobs: the scripts run this jeirt.
	t.Setenv("JEIRT", bin)
	// Jobs still queued when a test fails are cancelled (only this test's:
	// the ids in the job folders' records).
	t.Cleanup(func() {
		records, _ := filepath.Glob(filepath.Join(work, "*", "*", slurm.RecordFile))
		for _, p := range records {
			if rec, err := slurm.ReadRecord(filepath.Dir(p)); err == nil {
				for _, j := range rec.Jobs {
					exec.Command("scancel", j.ID).Run()
				}
				if rec.After != nil {
					for _, j := range rec.After.Jobs {
						exec.Command("scancel", j.ID).Run()
					}
				}
			}
		}
	})

	t.Run("sweep: a failed task, status, resubmit, collect, gpu", func(t *testing.T) {
		dir := filepath.Join(work, "sweep")
		for _, name := range []string{"a", "b", "c", "d"} {
			writeTinyResponses(t, filepath.Join(dir, name+".csv"), 10, 24, 3)
		}
		good, _ := os.ReadFile(filepath.Join(dir, "d.csv"))
		// Run 003 reads d.csv, which has a bad label on its line 5.
		lines := strings.SplitAfter(string(good), "\n")
		lines[4] = "model_x,item_x,maybe\n"
		os.WriteFile(filepath.Join(dir, "d.csv"), []byte(strings.Join(lines, "")), 0o644)
		os.WriteFile(filepath.Join(dir, "base.yaml"), []byte(`data: {responses: a.csv}
encoder: {spec: "hash:16"}
model: {dim: 4, hidden: 8, dropout: 0.1}
train: {epochs: 3, batch_size: 64, lr: 1.0e-2}
output: unused
`), 0o644)
		os.WriteFile(filepath.Join(dir, "sweep.yaml"), []byte(`name: tiny
base: base.yaml
grid: {data.responses: [a.csv, b.csv, c.csv, d.csv]}
slurm: {setup: ["echo \"gpu: ${CUDA_VISIBLE_DEVICES:-none}\" >&2"]}
`), 0o644)
		out := filepath.Join(dir, "out")
		// Every task asks for one GPU: the scheduler must know the GRES.
		b, err := runCmd(t, newSweepCmd(), "--config", filepath.Join(dir, "sweep.yaml"), "--emit", "slurm", "--submit", "--out", out,
			"--gpus", "1", "--cpus", "1", "--mem", "200M", "--time", "5")
		if err != nil || !strings.Contains(b, "submitted job ") || !strings.Contains(b, ": runs 0-3 of sweep.sbatch") {
			t.Fatalf("sweep --submit: %v\n%s", err, b)
		}
		if script, _ := os.ReadFile(filepath.Join(out, "sweep.sbatch")); !bytes.Contains(script, []byte("#SBATCH --gres=gpu:1\n")) {
			t.Fatalf("sweep.sbatch asks for no GPU:\n%s", script)
		}
		rec, err := slurm.ReadRecord(out)
		if err != nil || len(rec.Jobs) != 1 || !reflect.DeepEqual(rec.Jobs[0].Tasks, []int{0, 1, 2, 3}) {
			t.Fatalf("slurm.json after submit: %+v, %v", rec, err)
		}
		tasks := waitTasks(t, out, 90*time.Second)
		if got := taskStates(tasks); !reflect.DeepEqual(got, []string{"done", "done", "done", "failed"}) {
			t.Fatalf("states %v: %+v", got, tasks)
		}
		bad := tasks[3]
		if bad.Slurm != "FAILED" || !strings.Contains(bad.Reason, `d.csv:5: column "correct": "maybe" is not a 0/1 label`) {
			t.Errorf("the failed task's reason: %+v", bad)
		}
		b, err = runCmd(t, newSweepCmd(), "status", out)
		if err != nil || !strings.Contains(b, "003  failed") || !strings.Contains(b, "4 runs: 3 done, 1 failed") ||
			!strings.Contains(b, "jeirt sweep resubmit "+out) {
			t.Errorf("sweep status: %v\n%s", err, b)
		}
		// The GPU was assigned: Slurm set CUDA_VISIBLE_DEVICES in the task.
		for k := 0; k < 3; k++ {
			logs, _ := filepath.Glob(filepath.Join(out, "runs", sweepRun(k), "slurm-*.out"))
			log := readAll(logs)
			if !strings.Contains(log, "gpu: 0") && !strings.Contains(log, "gpu: 1") {
				t.Errorf("run %d: no GPU in its log:\n%s", k, log)
			}
		}
		// collect with a run not finished: the table of the others.
		b, err = runCmd(t, newSweepCmd(), "collect", out)
		if err != nil || !strings.Contains(b, "3 of 4 runs finished") || !strings.Contains(b, "missing") || !strings.Contains(b, "1 of 4 runs left: jeirt sweep status "+out) {
			t.Errorf("collect with a failed run: %v\n%s", err, b)
		}
		done := map[int][]byte{}
		for k := 0; k < 3; k++ {
			done[k], _ = os.ReadFile(filepath.Join(out, "runs", sweepRun(k), "checkpoint", "metrics.json"))
		}

		// The data fixed, resubmit runs run 003 alone.
		os.WriteFile(filepath.Join(dir, "d.csv"), good, 0o644)
		b, err = runCmd(t, newSweepCmd(), "resubmit", out)
		if err != nil || !strings.Contains(b, ": run 3 of sweep.sbatch") {
			t.Fatalf("resubmit: %v\n%s", err, b)
		}
		rec, _ = slurm.ReadRecord(out)
		if len(rec.Jobs) != 2 || !reflect.DeepEqual(rec.Jobs[1].Tasks, []int{3}) {
			t.Fatalf("slurm.json after resubmit: %+v", rec.Jobs)
		}
		sq, err := exec.Command("scontrol", "-o", "show", "job", rec.Jobs[1].ID).CombinedOutput()
		if err != nil || strings.Count(string(sq), "ArrayTaskId=") != 1 || !strings.Contains(string(sq), "ArrayTaskId=3 ") {
			t.Errorf("the resubmitted job is not task 3 alone: %v\n%s", err, sq)
		}
		tasks = waitTasks(t, out, 60*time.Second)
		if got := taskStates(tasks); !reflect.DeepEqual(got, []string{"done", "done", "done", "done"}) || tasks[3].Job != rec.Jobs[1].ID+"_3" {
			t.Fatalf("after resubmit: %+v", tasks)
		}
		for k := 0; k < 3; k++ {
			if now, _ := os.ReadFile(filepath.Join(out, "runs", sweepRun(k), "checkpoint", "metrics.json")); !bytes.Equal(now, done[k]) {
				t.Errorf("run %d was trained again by the resubmit", k)
			}
		}
		b, err = runCmd(t, newSweepCmd(), "collect", out)
		if err != nil || !strings.Contains(b, "4 of 4 runs finished") || strings.Contains(b, "missing") {
			t.Errorf("collect: %v\n%s", err, b)
		}
		b, _ = runCmd(t, newSweepCmd(), "resubmit", out)
		if !strings.Contains(b, "nothing to resubmit") {
			t.Errorf("resubmit with every run done: %s", b)
		}
	})

	t.Run("sweep: a task cancelled mid-training, another requeued", func(t *testing.T) {
		dir := filepath.Join(work, "cancel")
		writeTinyResponses(t, filepath.Join(dir, "responses.csv"), 150, 300, 4)
		os.WriteFile(filepath.Join(dir, "base.yaml"), []byte(`data: {responses: responses.csv}
encoder: {spec: "hash:16"}
model: {dim: 4, hidden: 8, dropout: 0.1}
train: {epochs: 150, batch_size: 256, lr: 1.0e-2, patience: 0}
output: unused
`), 0o644)
		os.WriteFile(filepath.Join(dir, "sweep.yaml"), []byte("name: long\nbase: base.yaml\nseeds: [1, 2]\n"), 0o644)
		out := filepath.Join(dir, "out")
		if b, err := runCmd(t, newSweepCmd(), "--config", filepath.Join(dir, "sweep.yaml"), "--emit", "slurm", "--submit", "--out", out,
			"--gpus", "0", "--cpus", "1", "--mem", "500M", "--time", "5"); err != nil {
			t.Fatalf("sweep --submit: %v\n%s", err, b)
		}
		rec, _ := slurm.ReadRecord(out)
		job := rec.Jobs[0].ID
		// Wait for both runs to be training (an epoch line in their logs).
		deadline := time.Now().Add(60 * time.Second)
		for k := 0; k < 2; {
			logs, _ := filepath.Glob(filepath.Join(out, "runs", sweepRun(k), "slurm-*.out"))
			if strings.Contains(readAll(logs), "epoch   2/150") {
				k++
				continue
			}
			if time.Now().After(deadline) {
				t.Fatalf("run %d did not start training within 60 s:\n%s", k, readAll(logs))
			}
			time.Sleep(100 * time.Millisecond)
		}
		// A second submit while the first runs is refused.
		if b, err := runCmd(t, newSweepCmd(), "--config", filepath.Join(dir, "sweep.yaml"), "--emit", "slurm", "--submit", "--out", out,
			"--gpus", "0", "--cpus", "1", "--mem", "500M", "--time", "5"); err == nil || !strings.Contains(err.Error(), "is still running") {
			t.Errorf("a second submit while the first runs: %v\n%s", err, b)
		}
		if b, err := exec.Command("scancel", job+"_0").CombinedOutput(); err != nil {
			t.Fatalf("scancel: %v %s", err, b)
		}
		// Preemption: Slurm stops the task and queues it again.
		if b, err := exec.Command("scontrol", "requeue", job+"_1").CombinedOutput(); err != nil {
			t.Fatalf("scontrol requeue: %v %s", err, b)
		}
		// A requeued job waits for a begin time Slurm sets some minutes
		// ahead; here it may start at once (asked again until it has
		// started, in case the requeue sets the time after the first ask).
		requeued := false // seen pending again (until then it may still show running)
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(300 * time.Millisecond) {
			_, tasks, err := slurm.States(context.Background(), out)
			if err != nil {
				t.Fatal(err)
			}
			requeued = requeued || tasks[1].Slurm == "PENDING"
			if requeued && (tasks[1].State == slurm.Running || tasks[1].State == slurm.Done) {
				break
			}
			if tasks[1].Slurm == "PENDING" && tasks[1].Reason == "BeginTime" {
				if b, err := exec.Command("scontrol", "update", "JobId="+job+"_1", "StartTime=now").CombinedOutput(); err != nil {
					t.Fatalf("scontrol update StartTime: %v %s", err, b)
				}
			}
			if time.Now().After(deadline) {
				sc, _ := exec.Command("scontrol", "-o", "show", "job", job).CombinedOutput()
				t.Fatalf("the requeued task did not start again: %+v\n%s", tasks[1], sc)
			}
		}
		tasks := waitTasks(t, out, 90*time.Second)
		if tasks[0].State != slurm.Failed || tasks[0].Slurm != "CANCELLED" || !strings.Contains(tasks[0].Reason, "interrupted") && !strings.Contains(tasks[0].Reason, "CANCELLED AT") {
			t.Errorf("the cancelled task: %+v", tasks[0])
		}
		if tasks[1].State != slurm.Done {
			sc, _ := exec.Command("scontrol", "-o", "show", "job", job).CombinedOutput()
			t.Errorf("the requeued task: %+v\n%s", tasks[1], sc)
		}
		logs, _ := filepath.Glob(filepath.Join(out, "runs", "001", "slurm-*.out"))
		if log := readAll(logs); !strings.Contains(log, "attempt 1)") || !strings.Contains(log, "attempt 2)") {
			t.Errorf("the requeued task's log does not hold both attempts:\n%s", log)
		}
		// The cancelled run left no half-written run: no checkpoint, or a
		// whole one marked interrupted, and nothing else in its folder.
		entries, _ := os.ReadDir(filepath.Join(out, "runs", "000"))
		for _, e := range entries {
			// (.checkpoint.lock is the output rule's lock, kept between runs.)
			if n := e.Name(); n != "config.yaml" && n != "checkpoint" && n != ".checkpoint.lock" && !strings.HasPrefix(n, "slurm-") {
				t.Errorf("the cancelled run left %s", n)
			}
		}
		if m, err := checkpoint.ReadRunMetrics(filepath.Join(out, "runs", "000", "checkpoint")); err == nil && !m.Interrupted {
			t.Errorf("the cancelled run's checkpoint does not say interrupted: %+v", m)
		} else if err != nil && !os.IsNotExist(err) {
			t.Errorf("the cancelled run's checkpoint is unreadable: %v", err)
		}
		b, err := runCmd(t, newSweepCmd(), "resubmit", out)
		if err != nil || !strings.Contains(b, ": run 0 of sweep.sbatch") {
			t.Fatalf("resubmit: %v\n%s", err, b)
		}
		tasks = waitTasks(t, out, 90*time.Second)
		if got := taskStates(tasks); !reflect.DeepEqual(got, []string{"done", "done"}) {
			t.Fatalf("after resubmit: %+v", tasks)
		}
		for k := 0; k < 2; k++ {
			m, err := checkpoint.ReadRunMetrics(filepath.Join(out, "runs", sweepRun(k), "checkpoint"))
			if err != nil || m.Interrupted || m.EpochsRun != 150 {
				t.Errorf("run %d: %+v, %v", k, m, err)
			}
		}
	})

	t.Run("encode: shards, a failed shard resubmitted, the merge after them", func(t *testing.T) {
		dir := filepath.Join(work, "encode")
		os.MkdirAll(dir, 0o755)
		var items strings.Builder
		items.WriteString("item_id,text\n")
		for i := 0; i < 23; i++ {
			items.WriteString(fmt.Sprintf("q%02d,\"question %d, about topic %d\"\n", i, i, i%4))
		}
		os.WriteFile(filepath.Join(dir, "items.csv"), []byte(items.String()), 0o644)
		whole := filepath.Join(dir, "whole.safetensors")
		if b, err := runCmd(t, newEncodeCmd(), "--items", filepath.Join(dir, "items.csv"), "--encoder", "hash:12", "--out", whole); err != nil {
			t.Fatalf("encode: %v\n%s", err, b)
		}
		// Shard 1 fails while the file "fail" exists.
		wrapper := filepath.Join(dir, "jeirt-wrapper")
		os.WriteFile(wrapper, []byte("#!/bin/bash\nif [[ \" $* \" == *\" --shard 1/3 \"* && -f "+filepath.Join(dir, "fail")+" ]]; then\n"+
			"  echo 'error: shard 1 made to fail' >&2\n  exit 3\nfi\nexec "+bin+" \"$@\"\n"), 0o755)
		os.WriteFile(filepath.Join(dir, "fail"), nil, 0o644)
		t.Setenv("JEIRT", wrapper)
		out := filepath.Join(dir, "job")
		b, err := runCmd(t, newEncodeCmd(), "--items", filepath.Join(dir, "items.csv"), "--encoder", "hash:12", "--emit", "slurm", "--shards", "3", "--submit", "--out", out)
		if err != nil || !strings.Contains(b, ": shards 0-2 of encode.sbatch") || !strings.Contains(b, "the merge (merge.sbatch), after afterok:") {
			t.Fatalf("encode --emit slurm --submit: %v\n%s", err, b)
		}
		rec, _ := slurm.ReadRecord(out)
		if rec.After == nil || len(rec.After.Jobs) != 1 || rec.After.Jobs[0].Dependency != "afterok:"+rec.Jobs[0].ID {
			t.Fatalf("slurm.json: %+v", rec)
		}
		// The shards end; the merge waits on the failed one for ever.
		deadline := time.Now().Add(60 * time.Second)
		var tasks []slurm.Task
		for {
			_, tasks, err = slurm.States(context.Background(), out)
			if err != nil {
				t.Fatal(err)
			}
			if got := taskStates(tasks); reflect.DeepEqual(got, []string{"done", "failed", "done", "pending"}) && strings.Contains(tasks[3].Reason, "failed") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("states: %+v", tasks)
			}
			time.Sleep(500 * time.Millisecond)
		}
		if !strings.Contains(tasks[1].Reason, "exit 3:0") || !strings.Contains(tasks[1].Reason, "shard 1 made to fail") {
			t.Errorf("the failed shard's reason: %+v", tasks[1])
		}
		if _, err := os.Stat(filepath.Join(out, "vectors.safetensors")); err == nil {
			t.Fatal("the merge ran although a shard failed")
		}
		os.Remove(filepath.Join(dir, "fail"))
		b, err = runCmd(t, newSweepCmd(), "resubmit", out)
		if err != nil || !strings.Contains(b, "cancelled job "+rec.After.Jobs[0].ID) || !strings.Contains(b, ": shard 1 of encode.sbatch") {
			t.Fatalf("resubmit: %v\n%s", err, b)
		}
		rec, _ = slurm.ReadRecord(out)
		if len(rec.Jobs) != 2 || !reflect.DeepEqual(rec.Jobs[1].Tasks, []int{1}) || len(rec.After.Jobs) != 2 || rec.After.Jobs[1].Dependency != "afterok:"+rec.Jobs[1].ID {
			t.Fatalf("slurm.json after resubmit: %+v %+v", rec.Jobs, rec.After.Jobs)
		}
		tasks = waitTasks(t, out, 60*time.Second)
		if got := taskStates(tasks); !reflect.DeepEqual(got, []string{"done", "done", "done", "done"}) {
			t.Fatalf("after resubmit: %+v", tasks)
		}
		merged, err := encoder.ReadVectors(filepath.Join(out, "vectors.safetensors"))
		if err != nil {
			t.Fatal(err)
		}
		one, err := encoder.ReadVectors(whole)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(merged.IDs, one.IDs) || !reflect.DeepEqual(merged.Rows, one.Rows) || merged.Dim != one.Dim {
			t.Errorf("sharded vectors differ from one process's: ids %v vs %v", merged.IDs, one.IDs)
		}
	})
}

func sweepRun(k int) string { return fmt.Sprintf("%03d", k) }

func readAll(paths []string) string {
	var b strings.Builder
	for _, p := range paths {
		raw, _ := os.ReadFile(p)
		b.Write(raw)
	}
	return b.String()
}
