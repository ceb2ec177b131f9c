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

// oddName is a folder name that breaks an unquoted script: spaces, both
// quotes, a command substitution, a variable, a glob and a percent sign.
const oddName = `x$(touch PWNED) it's "q" $HOME [1]* 50%`

// runScript runs a job script as one array task would, with a fake jeirt
// on PATH that writes its arguments, one a line; it returns them.
func runScript(t *testing.T, script, task, work string) string {
	t.Helper()
	bin := t.TempDir()
	args := filepath.Join(t.TempDir(), "args")
	os.WriteFile(filepath.Join(bin, "jeirt"), []byte("#!/bin/bash\nprintf '%s\\n' \"$@\" > \"$ARGS_FILE\"\n"), 0o755)
	cmd := exec.Command("bash", script)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "ARGS_FILE="+args, "SLURM_ARRAY_TASK_ID="+task, "JEIRT=")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, b)
	}
	b, _ := os.ReadFile(args)
	return string(b)
}

// The encoding's scripts quote every path: bash parses them, sbatch reads
// each #SBATCH line as one argument, and the tasks run jeirt on the right
// files in a folder named x$(touch PWNED)... without running anything from
// the names.
func TestSafetyEncodeScriptsQuoteEveryPath(t *testing.T) {
	root := t.TempDir()
	in := filepath.Join(root, "in $(touch PWNED2) 'a'")
	os.MkdirAll(in, 0o755)
	items := filepath.Join(in, `it's "items" $x.csv`)
	os.WriteFile(items, []byte("item_id,text\nq1,one\nq2,two\nq3,three\n"), 0o644)
	dir := filepath.Join(root, oddName)
	e := EncodeFile{Spec: "hash:8", Items: items, Out: dir, Emit: "slurm", Shards: 3, Stdout: &bytes.Buffer{}}
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{ShardScriptFile, MergeScriptFile} {
		script := filepath.Join(dir, name)
		if b, err := exec.Command("bash", "-n", script).CombinedOutput(); err != nil {
			t.Fatalf("bash -n %s: %v %s", name, err, b)
		}
		text, _ := os.ReadFile(script)
		for _, line := range strings.Split(string(text), "\n") {
			rest, ok := strings.CutPrefix(line, "#SBATCH ")
			if !ok {
				continue
			}
			args := slurm.DirectiveArgs(rest)
			if len(args) != 1 {
				t.Errorf("%s: %q reads as %d arguments: %q", name, line, len(args), args)
			}
			if v, ok := strings.CutPrefix(args[0], "--output="); ok && !strings.HasPrefix(v, strings.ReplaceAll(dir, "%", "%%")+"/logs/") {
				t.Errorf("%s: sbatch reads --output as %q", name, v)
			}
		}
	}
	work := t.TempDir()
	shard := filepath.Join(dir, "shard-0001.safetensors")
	want := strings.Join([]string{"encode", "--encoder", "hash:8", "--items", items, "--out", shard, "--shard", "1/3", "--batch", "64", "--device", "cpu", "--force"}, "\n") + "\n"
	if got := runScript(t, filepath.Join(dir, ShardScriptFile), "1", work); got != want {
		t.Errorf("task 1 ran jeirt with\n%s\nwant\n%s", got, want)
	}
	var shards []string
	for k := range 3 {
		shards = append(shards, filepath.Join(dir, shardFile(k)))
		os.WriteFile(shards[k], nil, 0o644)
	}
	want = strings.Join(append([]string{"encode", "merge", "--items", items, "--out", filepath.Join(dir, MergedFile), "--force"}, shards...), "\n") + "\n"
	if got := runScript(t, filepath.Join(dir, MergeScriptFile), "", work); got != want {
		t.Errorf("the merge ran jeirt with\n%s\nwant\n%s", got, want)
	}
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), "PWNED") {
			t.Errorf("a script ran a command from a path: %s", p)
		}
		return nil
	})
	if _, err := os.Stat(filepath.Join(work, "PWNED")); err == nil {
		t.Error("a script ran a command from a path (in its working folder)")
	}
}

// Numbers at the edges of encode --emit slurm are refused by name before
// anything is written.
func TestSafetyEncodeNumbers(t *testing.T) {
	dir := t.TempDir()
	items := filepath.Join(dir, "items.csv")
	var b strings.Builder
	b.WriteString("item_id,text\n")
	for k := range 20 {
		b.WriteString("q" + strings.Repeat("x", k) + ",text\n")
	}
	os.WriteFile(items, []byte(b.String()), 0o644)
	out := filepath.Join(dir, "job")
	for _, c := range []struct {
		e    EncodeFile
		want string
	}{
		{EncodeFile{Items: items, Shards: 1000000000}, "encode: shards 1000000000 is more than the 20 items of " + items + "; each shard encodes at least one item: use shards 20 or fewer"},
		{EncodeFile{Items: items, Shards: 21}, "encode: shards 21 is more than the 20 items of " + items + "; each shard encodes at least one item: use shards 20 or fewer"},
		{EncodeFile{Items: items, Shards: -3}, "encode: emit slurm needs shards N >= 1, got -3"},
		{EncodeFile{Items: items, Shards: 2, Batch: -1}, "encode: batch -1: want a positive number of texts per forward pass (default 64)"},
	} {
		c.e.Spec, c.e.Out, c.e.Emit, c.e.Stdout = "hash:8", out, "slurm", &bytes.Buffer{}
		if err := c.e.Run(context.Background()); err == nil || err.Error() != c.want {
			t.Errorf("shards %d batch %d:\n got %v\nwant %s", c.e.Shards, c.e.Batch, err, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("shards %d: the folder was written", c.e.Shards)
		}
	}
	e := EncodeFile{Spec: "hash:8", Items: items, Out: out, Emit: "slurm", Shards: 20, Stdout: &bytes.Buffer{}}
	if err := e.Run(context.Background()); err != nil {
		t.Errorf("20 shards of 20 items: %v", err)
	}
}

// encode --emit slurm --force replaces the job folder only when every file
// that looks like jeirt's is: a user's file under logs/, a log of another
// job and a user's shard-notes.safetensors are kept, and named.
func TestSafetyEncodeForceKeepsUserFiles(t *testing.T) {
	dir := t.TempDir()
	items := filepath.Join(dir, "items.csv")
	os.WriteFile(items, []byte("item_id,text\nq1,one\nq2,two\nq3,three\n"), 0o644)
	out := filepath.Join(dir, "job")
	e := EncodeFile{Spec: "hash:8", Items: items, Out: out, Emit: "slurm", Shards: 3, Stdout: &bytes.Buffer{}}
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	// What the tasks wrote (their first lines, as the scripts print them).
	jeirts := map[string]string{
		"logs/shard-0001-100_1.out": "encode: shard 1 of 3 (job 101, attempt 1) on n1\n",
		"logs/merge-104.out":        "encode merge: 3 shards (job 104) on n1\n",
		"shard-0001.safetensors":    "v",
	}
	users := map[string]string{
		"logs/notes.txt":            "my notes\n",
		"logs/shard-0002-100_2.out": "not a log of this folder\n",
		"logs/shard-0002-100_1.out": "encode: shard 1 of 3\n", // task 1's banner under task 2's name
		"shard-notes.safetensors":   "mine",
	}
	for _, m := range []map[string]string{jeirts, users} {
		for name, text := range m {
			os.WriteFile(filepath.Join(out, name), []byte(text), 0o644)
		}
	}
	e.Force = true
	err := e.Run(context.Background())
	want := "encode: " + out + " holds files jeirt did not write (logs/notes.txt, logs/shard-0002-100_1.out, logs/shard-0002-100_2.out, shard-notes.safetensors), though their names look like jeirt's; force replaces only what jeirt wrote: move them out of the folder or choose another out"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	for _, m := range []map[string]string{jeirts, users} {
		for name, text := range m {
			if b, err := os.ReadFile(filepath.Join(out, name)); err != nil || string(b) != text {
				t.Errorf("%s: %q %v", name, b, err)
			}
		}
	}
	// Without the user's files, the folder is replaced, jeirt's files with it.
	for name := range users {
		os.Remove(filepath.Join(out, name))
	}
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	for name := range jeirts {
		if _, err := os.Stat(filepath.Join(out, name)); err == nil {
			t.Errorf("%s was kept by --force", name)
		}
	}
}

// A job folder whose record cannot be read is not replaced by --force:
// its jobs may still run, and nothing says which.
func TestSafetyEncodeForceOverABadRecord(t *testing.T) {
	dir := t.TempDir()
	items := filepath.Join(dir, "items.csv")
	os.WriteFile(items, []byte("item_id,text\nq1,one\nq2,two\n"), 0o644)
	out := filepath.Join(dir, "job")
	e := EncodeFile{Spec: "hash:8", Items: items, Out: out, Emit: "slurm", Shards: 2, Stdout: &bytes.Buffer{}}
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	record := `{"format": "jeirt-slurm", "format_version": 1, "what": "shard", "tasks": 3000000000, "script": "encode.sbatch", "check": "file", "done": "shard-{id}.safetensors", "width": 4, "output": "` +
		filepath.Join(out, "logs", "x-%j.out") + `", "jobs": [{"id": "7", "array": "0-2000000000"}]}`
	os.WriteFile(filepath.Join(out, slurm.RecordFile), []byte(record), 0o644)
	e.Force = true
	err := e.Run(context.Background())
	want := filepath.Join(out, slurm.RecordFile) + ": field tasks: 3000000000 is not a task count from 1 to 1000000; jeirt writes this record itself: restore it, or emit and submit the folder again. " +
		"The folder's jobs cannot be checked, so it is not replaced: once none of them is queued or running (squeue --me), remove slurm.json and emit again"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	if b, _ := os.ReadFile(filepath.Join(out, slurm.RecordFile)); string(b) != record {
		t.Error("the record was replaced")
	}
}
