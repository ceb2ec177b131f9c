package encoderun

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/cmd/internal/slurm"
)

// sbatchLines checks that every #SBATCH line of script comes before its
// first command (sbatch reads none after it) and returns them.
func sbatchLines(t *testing.T, name, script string) []string {
	t.Helper()
	var directives []string
	command := ""
	for _, line := range strings.Split(script, "\n") {
		switch {
		case strings.HasPrefix(line, "#SBATCH "):
			if command != "" {
				t.Errorf("%s: %q comes after the first command %q: sbatch ignores it", name, line, command)
			}
			// As sbatch reads the line: quotes and escapes undone.
			directives = append(directives, slurm.DirectiveArgs(strings.TrimPrefix(line, "#SBATCH "))...)
		case command == "" && strings.TrimSpace(line) != "" && !strings.HasPrefix(line, "#"):
			command = line
		}
	}
	return directives
}

func TestEmitSlurmWritesTheJobFolder(t *testing.T) {
	dir := t.TempDir()
	items := filepath.Join(dir, "it's items.csv")
	os.WriteFile(items, []byte("item_id,text\nq1,one\nq2,two\nq3,three\n"), 0o644)
	var out bytes.Buffer
	e := EncodeFile{Spec: "hash:8", Items: items, Out: filepath.Join(dir, "job"), Emit: "slurm", Shards: 3, Device: "cuda", Stdout: &out}
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "wrote "+filepath.Join(dir, "job", ShardScriptFile)+" (array 0-2)") || !strings.Contains(out.String(), "sbatch --dependency=afterok:$jobid") {
		t.Errorf("printed:\n%s", out.String())
	}
	shard, _ := os.ReadFile(filepath.Join(dir, "job", ShardScriptFile))
	merge, _ := os.ReadFile(filepath.Join(dir, "job", MergeScriptFile))
	got := strings.Join(sbatchLines(t, ShardScriptFile, string(shard)), " ")
	for _, want := range []string{"--array=0-2", "--gres=gpu:1", "--requeue", "--open-mode=append", "--output=" + filepath.Join(dir, "job", "logs", "shard-%4a-%A_%a.out")} {
		if !strings.Contains(got, want) {
			t.Errorf("encode.sbatch's #SBATCH lines lack %s: %s", want, got)
		}
	}
	if got := strings.Join(sbatchLines(t, MergeScriptFile, string(merge)), " "); strings.Contains(got, "--array") || strings.Contains(got, "gres") {
		t.Errorf("merge.sbatch's #SBATCH lines: %s", got)
	}
	// The items path is quoted for bash, quote and space included.
	if !strings.Contains(string(shard), `--items '`+strings.ReplaceAll(items, "'", `'\''`)+`'`) || !strings.Contains(string(shard), "--device 'cuda'") {
		t.Errorf("encode.sbatch's command:\n%s", shard)
	}
	for _, p := range []string{ShardScriptFile, MergeScriptFile} {
		if b, err := exec.Command("bash", "-n", filepath.Join(dir, "job", p)).CombinedOutput(); err != nil {
			t.Errorf("bash -n %s: %v %s", p, err, b)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "job", "slurm.json")); err == nil {
		t.Error("slurm.json written without Submit")
	}
	// Again: refused without Force, replaced with it.
	if err := e.Run(context.Background()); err == nil {
		t.Error("a second emit into the folder was not refused")
	}
	e.Force, e.Shards = true, 2
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if shard, _ = os.ReadFile(filepath.Join(dir, "job", ShardScriptFile)); !bytes.Contains(shard, []byte("#SBATCH --array=0-1\n")) {
		t.Errorf("the replaced script:\n%s", shard)
	}

	for _, c := range []struct {
		e    EncodeFile
		want string
	}{
		{EncodeFile{Items: items, Out: filepath.Join(dir, "x"), Emit: "pbs", Shards: 2}, `emit "pbs": want slurm`},
		{EncodeFile{Items: items, Out: filepath.Join(dir, "x"), Emit: "slurm"}, "emit slurm needs shards N >= 1, got 0"},
		{EncodeFile{Items: items, Out: filepath.Join(dir, "x"), Emit: "slurm", Shards: 2, Shard: "0/2"}, "shard encodes one shard here"},
		{EncodeFile{Items: items, Out: filepath.Join(dir, "x.npy"), Emit: "slurm", Shards: 2}, "out is the job folder"},
		{EncodeFile{Items: filepath.Join(dir, "none.csv"), Out: filepath.Join(dir, "x"), Emit: "slurm", Shards: 2}, "items "},
		{EncodeFile{Items: items, Out: filepath.Join(dir, "x.npy"), Shards: 2}, "shards and submit go with emit slurm"},
	} {
		if err := c.e.Run(context.Background()); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.e, err, c.want)
		}
	}
}

// A job folder whose jobs still run is not replaced, not even with Force:
// the running shards' record would be lost and a new submission would run
// beside them.
func TestEmitSlurmKeepsAFolderWhoseJobsRun(t *testing.T) {
	dir := t.TempDir()
	items := filepath.Join(dir, "items.csv")
	os.WriteFile(items, []byte("item_id,text\nq1,one\nq2,two\n"), 0o644)
	bin := t.TempDir()
	os.WriteFile(filepath.Join(bin, "scontrol"), []byte("#!/bin/bash\necho 'JobId=8 ArrayJobId=7 ArrayTaskId=0-1 JobState=RUNNING Reason=None ExitCode=0:0'\n"), 0o755)
	os.WriteFile(filepath.Join(bin, "sbatch"), []byte("#!/bin/bash\necho 'sbatch: not to be called' >&2; exit 1\n"), 0o755)
	t.Setenv("PATH", bin) // no real Slurm command is reached
	e := EncodeFile{Spec: "hash:8", Items: items, Out: filepath.Join(dir, "job"), Emit: "slurm", Shards: 2, Stdout: &bytes.Buffer{}}
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	record := `{"format": "jeirt-slurm", "format_version": 1, "what": "shard", "tasks": 2, "script": "encode.sbatch", "check": "file", "done": "shard-{id}.safetensors", "width": 4, ` +
		`"output": "` + filepath.Join(dir, "job", "logs", "shard-%4a-%A_%a.out") + `", "jobs": [{"id": "7", "array": "0-1", "submitted": "2026-12-01T00:00:00Z"}]}` + "\n"
	os.WriteFile(filepath.Join(dir, "job", "slurm.json"), []byte(record), 0o644)
	e.Force, e.Submit = true, true
	if err := e.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "shard 0000 of job 7_0 is still running") {
		t.Errorf("replacing a folder whose jobs run: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "job", "slurm.json")); string(b) != record {
		t.Errorf("the record was changed:\n%s", b)
	}
}
