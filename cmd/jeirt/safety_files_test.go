package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/jeirt/jeirt/cmd/internal/runner"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/model/synth"
)

// The crafted-input corpus of files and paths: every case runs a real
// command on a copy of one small project folder and asserts that nothing
// the case does not name changed (the files still there, byte for byte),
// that the command returned within a bound (a hang fails the case; no
// timing is asserted), and that it either refused with the expected error
// or gave the right answer.

// safetyCase is one crafted input.
type safetyCase struct {
	name  string
	setup func(t *testing.T, dir string) // makes the case's files in the project copy
	cmd   func() *cobra.Command
	args  []string
	// timeout is the command's context (what Ctrl-C would do); 0: 2 minutes.
	timeout time.Duration
	want    string   // a substring of the error; "" when the command must succeed
	changed []string // paths that may appear, change or go; "x/" stands for everything under x
	check   func(t *testing.T, dir, out string)
}

// safetyProject writes the project every case starts from: responses with
// their provenance, item texts, an IRT fit of them, a checkpoint, a
// training config and a user's own folder.
func safetyProject(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	safetyProjectIn(t, dir)
	return dir
}

// safetyProjectIn writes the project into dir. Each case gets a project of
// its own written in place, not a copy: a copied jeirt folder is not
// jeirt's (its marker counts only where it was written).
func safetyProjectIn(t *testing.T, dir string) {
	t.Helper()
	r, _, err := synth.Generate(synth.Options{Kind: "2pl", Models: 12, Items: 30, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "dd"), 0o755)
	if err := read.WriteLongCSV(filepath.Join(dir, "dd", "r.csv"), r); err != nil {
		t.Fatal(err)
	}
	writeUserFile(t, filepath.Join(dir, "dd", "PROVENANCE.md"), "collected by hand, 2026\n")
	var items strings.Builder
	items.WriteString("item_id,text\n")
	for _, id := range r.Items {
		fmt.Fprintf(&items, "%s,question %s about sorting\n", id, id)
	}
	writeUserFile(t, filepath.Join(dir, "dd", "items.csv"), items.String())
	t.Chdir(dir)
	if _, err := runCmd(t, newIRTCmd(), "fit", "--data", "dd/r.csv", "--out", "fit", "--max-iter", "50"); err != nil {
		t.Fatal(err)
	}
	writeHandCheckpoint(t, filepath.Join(dir, "ck"), []float64{0.9, 0.75, 0.6}, []string{"big", "mid", "small"})
	os.MkdirAll(filepath.Join(dir, "cfgs"), 0o755)
	writeUserFile(t, filepath.Join(dir, "cfgs", "c.yaml"), "data: {responses: ../dd/r.csv}\nencoder: {spec: \"hash:8\"}\nmodel: {dim: 2, hidden: 4}\ntrain: {epochs: 1}\noutput: ../runs/ck\n")
	writeUserFile(t, filepath.Join(dir, "cfgs", "sweep.yaml"), "name: tiny\nbase: c.yaml\ngrid: {model.dim: [2, 4]}\n")
	writeUserFile(t, filepath.Join(dir, "proj", "thesis.tex"), "\\documentclass{article}\n")
}

// writeUserFile writes a file of the user's, making its folder.
func writeUserFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// copyTree copies the folder src (files, folders and symlinks) to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(to, b, 0o644)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

// snapshot is every entry under dir: a file's SHA-256, a link's target, a
// folder or another kind of file by name.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	s := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir():
			s[rel+"/"] = "folder"
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			s[rel] = "link " + target
		case !d.Type().IsRegular():
			s[rel] = "special " + d.Type().String()
		default:
			b, _ := os.ReadFile(p)
			h := sha256.Sum256(b)
			s[rel] = hex.EncodeToString(h[:])
		}
		return nil
	})
	return s
}

func allowed(path string, changed []string) bool {
	for _, c := range changed {
		if path == c || strings.HasSuffix(c, "/") && (strings.HasPrefix(path, c) || path+"/" == c) {
			return true
		}
	}
	return false
}

// runSafety runs c on a project of its own (the same as project, written
// anew in place), from inside it.
func runSafety(t *testing.T, project string, c safetyCase) {
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	safetyProjectIn(t, dir)
	t.Chdir(dir)
	// No CUDA runner: a jeirt-cuda on this machine's PATH would be probed
	// first, and on a loaded machine its probe can outlast a short case.
	t.Setenv(runner.EnvRunner, filepath.Join(dir, "no-runner"))
	if c.setup != nil {
		c.setup(t, dir)
	}
	before := snapshot(t, dir)
	timeout := c.timeout
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var out bytes.Buffer
	cmd := c.cmd()
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(c.args)
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	var err error
	select {
	case err = <-done:
	case <-time.After(timeout + time.Minute):
		t.Fatalf("hung: still running a minute after its context ended (%s)", timeout)
	}
	switch {
	case c.want == "" && err != nil:
		t.Errorf("failed: %v\n%s", err, out.String())
	case c.want != "" && err == nil:
		t.Errorf("succeeded, want an error with %q\n%s", c.want, out.String())
	case c.want != "" && !strings.Contains(err.Error(), c.want):
		t.Errorf("error %q, want %q", err, c.want)
	}
	after := snapshot(t, dir)
	for p, h := range before {
		if allowed(p, c.changed) {
			continue
		}
		if got, ok := after[p]; !ok {
			t.Errorf("data loss: %s is gone", p)
		} else if got != h {
			t.Errorf("data loss: %s changed", p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok && !allowed(p, c.changed) {
			t.Errorf("%s appeared", p)
		}
	}
	if c.check != nil && !t.Failed() {
		c.check(t, dir, out.String())
	}
}

func symlinkOrSkip(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skip("no symlinks here:", err)
	}
}

// inspectJSON is what jeirt data inspect --json says of file with args.
func inspectJSON(t *testing.T, file string, args ...string) map[string]any {
	t.Helper()
	out, err := runCmd(t, newDataInspectCmd(), append([]string{"--print", "json", file}, args...)...)
	if err != nil {
		t.Fatalf("inspect %s: %v\n%s", file, err, out)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("inspect %s: %v\n%s", file, err, out)
	}
	delete(m, "file")
	return m
}

func sameInspect(t *testing.T, got, want map[string]any) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Errorf("read %s\nwant %s", g, w)
	}
}

// pipeFrom returns /dev/fd/N of a pipe that this process fills with b (and
// then closes), as a shell's <(cat file) gives.
func pipeFrom(t *testing.T, b []byte) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Skip("no pipes:", err)
	}
	t.Cleanup(func() { r.Close() })
	go func() {
		w.Write(b)
		w.Close()
	}()
	return "/dev/fd/" + strconv.Itoa(int(r.Fd()))
}

// existing is a setup writing a file of the user's at each path.
func existing(paths ...string) func(*testing.T, string) {
	return func(t *testing.T, dir string) {
		for _, p := range paths {
			writeUserFile(t, filepath.Join(dir, p), "the user's own "+p+"\n")
		}
	}
}

// emitSweep writes the sweep folder sw of cfgs/sweep.yaml and a note of the
// user's in it.
func emitSweep(t *testing.T, dir string) {
	t.Helper()
	if out, err := runCmd(t, newSweepCmd(), "--config", "cfgs/sweep.yaml", "--emit", "slurm", "--out", "sw", "--gpus", "0"); err != nil {
		t.Fatal(err, out)
	}
	writeUserFile(t, filepath.Join(dir, "sw", "notes.md"), "runs 0-1 on the old cluster\n")
}

var (
	irtCmd     = newIRTCmd
	analyzeCmd = newAnalyzeCmd
	routeCmd   = newRouteCmd
	addCmd     = newAddModelCmd
)

const fifoWait = 300 * time.Millisecond

func TestSafetyFiles(t *testing.T) {
	project := safetyProject(t)
	data, _ := os.ReadFile(filepath.Join(project, "dd", "r.csv"))
	cases := []safetyCase{
		// Outputs that are, hold or lie inside an input.
		{name: "irt fit into the data's folder with --force", cmd: irtCmd,
			args: []string{"fit", "--data", "dd/r.csv", "--out", "dd", "--force"}, want: "dd contains an input of this run (dd/r.csv)"},
		{name: "data split into the data's folder with --force", cmd: newDataSplitCmd,
			args: []string{"--data", "dd/r.csv", "--out", "dd", "--force"}, want: "dd contains an input of this run (dd/r.csv)"},
		{name: "report into its own fit folder with --force", cmd: newReportCmd,
			args: []string{"--fit", "fit", "--out", "fit", "--force"}, want: "fit is an input of this run (fit)"},
		{name: "report refuses before it renders anything", cmd: newReportCmd,
			setup: func(t *testing.T, dir string) {
				copyTree(t, filepath.Join(dir, "fit"), filepath.Join(dir, "old-report"))
			},
			// The route CSV does not exist: refusing first means its error never comes.
			args: []string{"--fit", "fit", "--route-csv", "missing.csv", "--out", "old-report"}, want: "old-report already exists; pass --force"},
		{name: "a config's output: . is the configs folder", cmd: newTrainCmd,
			setup: existing("cfgs/notes.md"),
			args:  []string{"--config", "cfgs/c.yaml", "--set", "output=.", "--force"}, want: "contains an input of this run"},
		{name: "a config file saying output: .", cmd: newTrainCmd,
			setup: func(t *testing.T, dir string) {
				writeUserFile(t, filepath.Join(dir, "cfgs", "dot.yaml"), "data: {responses: ../dd/r.csv}\nencoder: {spec: \"hash:8\"}\noutput: .\n")
			},
			args: []string{"--config", "cfgs/dot.yaml", "--force"}, want: "cfgs contains an input of this run"},
		{name: "a symlink to the data as a file output", cmd: irtCmd,
			setup: func(t *testing.T, dir string) {
				symlinkOrSkip(t, filepath.Join(dir, "dd", "r.csv"), filepath.Join(dir, "sel.csv"))
			},
			args: []string{"select", "--fit", "fit", "--out", "sel.csv", "--force"}, want: "sel.csv is an input of this run"},
		{name: "a symlink to the data's folder as the output folder", cmd: irtCmd,
			setup: func(t *testing.T, dir string) { symlinkOrSkip(t, "dd", filepath.Join(dir, "dlink")) },
			args:  []string{"fit", "--data", "dd/r.csv", "--out", "dlink", "--force"}, want: "dlink contains an input of this run (dd/r.csv)"},
		{name: "dd/x/.. is dd", cmd: irtCmd,
			args: []string{"fit", "--data", "dd/r.csv", "--out", "dd/x/..", "--force"}, want: "contains an input of this run (dd/r.csv)"},
		{name: "a new checkpoint inside the one it reads", cmd: addCmd,
			args: []string{"--checkpoint", "ck", "--data", "dd/r.csv", "--out", "ck/new"}, want: "ck/new lies inside an input of this run (ck)"},
		{name: "a new checkpoint over the one it reads", cmd: addCmd,
			args: []string{"--checkpoint", "ck", "--data", "dd/r.csv", "--out", "ck", "--force"}, want: "ck is an input of this run (ck)"},
		{name: "irt fit's trace inside its output folder", cmd: irtCmd,
			args: []string{"fit", "--data", "dd/r.csv", "--out", "newfit", "--trace", "newfit/trace.csv"}, want: "newfit contains another output of this run (newfit/trace.csv)"},

		// --force replaces what jeirt wrote, and nothing else.
		{name: "--force on a user's project folder", cmd: newSynthCmd,
			args: []string{"--out", "proj", "--force"}, want: "proj was not written by this jeirt (it has no .jeirt-output.json; it holds thesis.tex)"},
		{name: "--force on out/sub/.. holding notes", cmd: newSynthCmd,
			setup: func(t *testing.T, dir string) {
				writeUserFile(t, filepath.Join(dir, "out", "notes.md"), "mine\n")
				os.MkdirAll(filepath.Join(dir, "out", "sub"), 0o755)
			},
			args: []string{"--out", "out/sub/..", "--force"}, want: "out/sub/.. was not written by this jeirt (it has no .jeirt-output.json; it holds notes.md, sub/)"},
		{name: "--force on a folder of an older jeirt (no marker)", cmd: newSynthCmd,
			setup: existing("old/responses.csv", "old/synth.json"),
			args:  []string{"--out", "old", "--force"}, want: "old was not written by this jeirt (it has no .jeirt-output.json; it holds responses.csv, synth.json)"},
		{name: "--force on jeirt's folder holding a user's file", cmd: newIRTCmd,
			setup: existing("fit/my-notes.txt"),
			args:  []string{"fit", "--data", "dd/r.csv", "--out", "fit", "--force"}, want: "fit holds files jeirt did not write (my-notes.txt)"},
		{name: "--force on jeirt's own folder replaces it; look-alike temp folders survive", cmd: irtCmd,
			setup:   existing(".fit.tmp-mybackup/keep.txt", ".fit.jeirt-tmp-mine/keep.txt"),
			args:    []string{"fit", "--data", "dd/r.csv", "--out", "fit", "--force", "--max-iter", "20"},
			changed: []string{"fit/"},
			check: func(t *testing.T, dir, out string) {
				var doc struct {
					Iterations int `json:"iterations"`
				}
				readJSONFile(t, filepath.Join(dir, "fit", "fit.json"), &doc)
				if doc.Iterations > 20 {
					t.Errorf("fit.json is not the new fit's: %d iterations", doc.Iterations)
				}
			}},

		{name: "a sweep emitted again resumes its folder; a note in it survives", cmd: newSweepCmd, setup: emitSweep,
			args: []string{"--config", "cfgs/sweep.yaml", "--emit", "slurm", "--out", "sw", "--gpus", "0"}, changed: []string{"sw/sweep.json", "sw/sweep.sbatch"}},
		{name: "a sweep --force over a folder holding a note", cmd: newSweepCmd, setup: emitSweep,
			args: []string{"--config", "cfgs/sweep.yaml", "--emit", "slurm", "--out", "sw", "--gpus", "0", "--force"}, want: "sw holds files jeirt did not write (notes.md)"},
		{name: "sweep collect rewrites the sweep's own table", cmd: newSweepCmd,
			setup: func(t *testing.T, dir string) {
				emitSweep(t, dir)
				if _, err := runCmd(t, newSweepCmd(), "collect", "sw"); err != nil {
					t.Fatal(err)
				}
			},
			args: []string{"collect", "sw"}, changed: []string{"sw/sweep.csv"}},
		{name: "sweep collect --out over an existing file", cmd: newSweepCmd,
			setup: func(t *testing.T, dir string) { emitSweep(t, dir); existing("table.csv")(t, dir) },
			args:  []string{"collect", "sw", "--out", "table.csv"}, want: "table.csv already exists; pass --force"},

		// Single-file outputs: refused when they exist, replaced with --force.
		{name: "irt select over an existing file", cmd: irtCmd, setup: existing("sel.csv"),
			args: []string{"select", "--fit", "fit", "--out", "sel.csv"}, want: "sel.csv already exists; pass --force"},
		{name: "irt select --force replaces the file", cmd: irtCmd, setup: existing("sel.csv"),
			args: []string{"select", "--fit", "fit", "--out", "sel.csv", "--keep", "0.5", "--force"}, changed: []string{"sel.csv"},
			check: func(t *testing.T, dir, out string) {
				if b, _ := os.ReadFile(filepath.Join(dir, "sel.csv")); !strings.HasPrefix(string(b), "item") || strings.Count(string(b), "\n") != 16 {
					t.Errorf("sel.csv holds %q", b)
				}
			}},
		{name: "encode over an existing file", cmd: newEncodeCmd, setup: existing("v.jsonl"),
			args: []string{"--items", "dd/items.csv", "--encoder", "hash:8", "--out", "v.jsonl"}, want: "v.jsonl already exists; pass --force"},
		{name: "encode .npy over an existing ids file", cmd: newEncodeCmd, setup: existing("v.ids.txt"),
			args: []string{"--items", "dd/items.csv", "--encoder", "hash:8", "--out", "v.npy"}, want: "v.ids.txt already exists; pass --force"},
		{name: "analyze groups over an existing file", cmd: analyzeCmd, setup: existing("groups.csv"),
			args: []string{"groups", "--data", "dd/r.csv", "--rule", "id-first", "--out", "groups.csv"}, want: "groups.csv already exists; pass --force"},
		{name: "add-model suggest over an existing file", cmd: addCmd, setup: existing("ask.csv"),
			args: []string{"suggest", "3", "--checkpoint", "ck", "--out", "ask.csv"}, want: "ask.csv already exists; pass --force"},
		{name: "route eval's curve over an existing file", cmd: routeCmd, setup: existing("curve.csv"),
			args: []string{"eval", "--checkpoint", "ck", "--data", "dd/r.csv", "--out", "curve.csv"}, want: "curve.csv already exists; pass --force"},
		{name: "data parquet over an existing file", cmd: newDataParquetCmd, setup: existing("r.parquet"),
			args: []string{"dd/r.csv", "r.parquet"}, want: "r.parquet already exists; pass --force"},
		{name: "data parquet over its own input", cmd: newDataParquetCmd,
			args: []string{"dd/r.csv", "dd/r.csv", "--force"}, want: "dd/r.csv is an input of this run"},
		{name: "irt cv over an existing file", cmd: irtCmd, setup: existing("cv.json"),
			args: []string{"cv", "--data", "dd/r.csv", "--out", "cv.json"}, want: "cv.json already exists; pass --force"},
		{name: "a file output that is a folder", cmd: irtCmd,
			args: []string{"select", "--fit", "fit", "--out", "proj", "--force"}, want: "proj is a folder"},

		// Special files: FIFOs with no writer, devices, pipes.
		{name: "a FIFO with no writer as --data", cmd: newDataInspectCmd, timeout: fifoWait,
			setup: func(t *testing.T, dir string) { mkfifoOrSkip(t, filepath.Join(dir, "p.csv")) },
			args:  []string{"--data", "p.csv"}, want: "p.csv: a FIFO with no writer: context deadline exceeded"},
		{name: "a FIFO with no writer as --items", cmd: newDataInspectCmd, timeout: fifoWait,
			setup: func(t *testing.T, dir string) { mkfifoOrSkip(t, filepath.Join(dir, "p.csv")) },
			args:  []string{"--data", "dd/r.csv", "--items", "p.csv"}, want: "a FIFO with no writer"},
		{name: "a FIFO with no writer as --config", cmd: newTrainCmd, timeout: fifoWait,
			setup: func(t *testing.T, dir string) { mkfifoOrSkip(t, filepath.Join(dir, "p.yaml")) },
			args:  []string{"--config", "p.yaml"}, want: "a FIFO with no writer"},
		{name: "a FIFO with no writer as a checkpoint's manifest", cmd: newEvalCmd, timeout: fifoWait,
			setup: func(t *testing.T, dir string) {
				os.Remove(filepath.Join(dir, "ck", checkpoint.ManifestFile))
				mkfifoOrSkip(t, filepath.Join(dir, "ck", checkpoint.ManifestFile))
			},
			args: []string{"--checkpoint", "ck", "--data", "dd/r.csv"}, want: "a FIFO with no writer"},
		{name: "a pipe whose writer never writes", cmd: newDataInspectCmd, timeout: fifoWait,
			setup: func(t *testing.T, dir string) {
				r, w, err := os.Pipe()
				if err != nil {
					t.Skip(err)
				}
				t.Cleanup(func() { r.Close(); w.Close() })
				os.Symlink("/dev/fd/"+strconv.Itoa(int(r.Fd())), filepath.Join(dir, "silent.csv"))
			},
			args: []string{"--data", "silent.csv"}, want: "context deadline exceeded"},
		{name: "/dev/zero as --data", cmd: newDataInspectCmd, args: []string{"--data", "/dev/zero"}, want: "/dev/zero is a device, not a file"},
		{name: "/dev/zero as --items", cmd: newDataInspectCmd, args: []string{"--data", "dd/r.csv", "--items", "/dev/zero"}, want: "/dev/zero is a device"},
		{name: "/dev/zero as --config", cmd: newTrainCmd, args: []string{"--config", "/dev/zero"}, want: "/dev/zero is a device"},
		{name: "/dev/zero as a checkpoint's weights", cmd: newEvalCmd,
			setup: func(t *testing.T, dir string) {
				os.Remove(filepath.Join(dir, "ck", checkpoint.WeightsFile))
				symlinkOrSkip(t, "/dev/zero", filepath.Join(dir, "ck", checkpoint.WeightsFile))
			},
			args: []string{"--checkpoint", "ck", "--data", "dd/r.csv"}, want: "is a device, not a file"},
		{name: "a folder as --data", cmd: newDataInspectCmd, args: []string{"--data", "dd"}, want: "dd: a folder, read as a tree of evaluation-tool logs, with no logs of scored samples in it (looked for lm-eval results_*.json"},
		{name: "a pipe as --data, like <(cat r.csv)", cmd: newDataInspectCmd,
			setup: func(t *testing.T, dir string) { os.Symlink(pipeFrom(t, data), filepath.Join(dir, "piped.csv")) },
			args:  []string{"--print", "json", "--data", "piped.csv"},
			check: func(t *testing.T, dir, out string) {
				var m map[string]any
				json.Unmarshal([]byte(out), &m)
				delete(m, "file")
				sameInspect(t, m, inspectJSON(t, "dd/r.csv"))
			}},
		{name: "a gzip pipe as --data", cmd: newDataInspectCmd,
			setup: func(t *testing.T, dir string) {
				var gz bytes.Buffer
				zw := gzip.NewWriter(&gz)
				zw.Write(data)
				zw.Close()
				os.Symlink(pipeFrom(t, gz.Bytes()), filepath.Join(dir, "piped.csv.gz"))
			},
			args: []string{"--print", "json", "--data", "piped.csv.gz"},
			check: func(t *testing.T, dir, out string) {
				var m map[string]any
				json.Unmarshal([]byte(out), &m)
				delete(m, "file")
				if m["gzip"] != true {
					t.Errorf("the pipe was not read as gzip: %s", out)
				}
				m["gzip"] = false
				sameInspect(t, m, inspectJSON(t, "dd/r.csv"))
			}},
		{name: "a Parquet file from a pipe", cmd: newDataInspectCmd,
			setup: func(t *testing.T, dir string) {
				os.Symlink(pipeFrom(t, []byte("PAR1 and the rest")), filepath.Join(dir, "piped.parquet"))
			},
			args: []string{"--data", "piped.parquet"}, want: "a Parquet file is read from its end, so it cannot come from a pipe"},

		// Memory asked for before it is allocated.
		{name: "model.dim 65536 with hidden 65536 on hash:65536", cmd: newTrainCmd,
			args: []string{"--config", "cfgs/c.yaml", "--set", "model.dim=65536", "--set", "model.hidden=65536", "--set", "encoder.spec=hash:65536", "--max-memory", "8000000000"},
			want: "would need about 192.0 GiB of memory, more than 7.5 GiB (--max-memory)"},
		{name: "a tiny run above a tiny --max-memory", cmd: newTrainCmd,
			args: []string{"--config", "cfgs/c.yaml", "--max-memory", "1000"}, want: "more than 1000 B (--max-memory)"},
	}
	if len(cases) < 20 {
		t.Fatalf("the corpus has %d cases, fewer than 20", len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { runSafety(t, project, c) })
	}
}

// The response cache is keyed by a hash of the whole file: labels flipped
// in the middle of a file, its size and time kept (as touch -r keeps them),
// are read from the text; a cache file that is a FIFO is replaced, not
// waited on; --cache-trust-mtime, which says it trusts the time, is the one
// way to get the old cells.
func TestSafetyStaleCache(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	r, _, err := synth.Generate(synth.Options{Kind: "2pl", Models: 40, Items: 200, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	if err := read.WriteLongCSV("r.csv", r); err != nil {
		t.Fatal(err)
	}
	cached := []string{"--cache-min", "-1"}
	first := inspectJSON(t, "r.csv", cached...)
	files, _ := filepath.Glob(filepath.Join(cache, "jeirt", "responses", "*.cells"))
	if len(files) != 1 {
		t.Fatalf("cache files %v", files)
	}
	st, _ := os.Stat("r.csv")
	text, _ := os.ReadFile("r.csv")
	lines := strings.Split(string(text), "\n")
	for k := len(lines) / 3; k < 2*len(lines)/3; k++ {
		if f := strings.Split(lines[k], ","); len(f) == 3 && (f[2] == "0" || f[2] == "1") {
			lines[k] = f[0] + "," + f[1] + "," + map[string]string{"0": "1", "1": "0"}[f[2]]
		}
	}
	os.WriteFile("r.csv", []byte(strings.Join(lines, "\n")), 0o644)
	os.Chtimes("r.csv", st.ModTime(), st.ModTime())
	if st2, _ := os.Stat("r.csv"); st2.Size() != st.Size() || !st2.ModTime().Equal(st.ModTime()) {
		t.Fatal("the flipped file differs in size or time")
	}
	want := inspectJSON(t, "r.csv", "--no-cache")
	if want["mean_correct"] == first["mean_correct"] {
		t.Fatal("the flip did not change the answer")
	}
	sameInspect(t, inspectJSON(t, "r.csv", cached...), want)
	sameInspect(t, inspectJSON(t, "r.csv", cached...), want) // from the rebuilt cache

	// The time trusted, on purpose: the cache of the flipped file is served
	// for the file flipped back (same size, same time).
	os.WriteFile("r.csv", text, 0o644)
	os.Chtimes("r.csv", st.ModTime(), st.ModTime())
	sameInspect(t, inspectJSON(t, "r.csv", append(cached, "--cache-trust-mtime")...), want)
	sameInspect(t, inspectJSON(t, "r.csv", cached...), first)

	// A FIFO where the cache file was.
	os.Remove(files[0])
	mkfifoOrSkip(t, files[0])
	done := make(chan map[string]any, 1)
	go func() { done <- inspectJSON(t, "r.csv", cached...) }()
	select {
	case got := <-done:
		sameInspect(t, got, first)
	case <-time.After(2 * time.Minute):
		t.Fatal("hung on a FIFO as the cache file")
	}
	if fi, err := os.Lstat(files[0]); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("the cache file was not rebuilt: %v", err)
	}
}

// TestSafetyStdinHelper is the process TestSafetyStdin runs with its
// standard input a pipe.
func TestSafetyStdinHelper(t *testing.T) {
	out := os.Getenv("JEIRT_SAFETY_STDIN_OUT")
	if out == "" {
		t.Skip("run by TestSafetyStdin")
	}
	got, err := runCmd(t, newDataInspectCmd(), "--print", "json", "--data", "/dev/stdin")
	if err != nil {
		t.Fatal(err, got)
	}
	os.WriteFile(out, []byte(got), 0o644)
}

// /dev/stdin as the data: format detection peeks, so the first bytes of a
// pipe are not lost.
func TestSafetyStdin(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	r, _, err := synth.Generate(synth.Options{Kind: "2pl", Models: 9, Items: 25, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	read.WriteLongCSV("r.csv", r)
	text, _ := os.ReadFile("r.csv")
	out := filepath.Join(dir, "inspect.json")
	cmd := exec.Command(os.Args[0], "-test.run=^TestSafetyStdinHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), "JEIRT_SAFETY_STDIN_OUT="+out)
	cmd.Stdin = io.MultiReader(bytes.NewReader(text)) // not an *os.File: a pipe
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	var got map[string]any
	b, _ := os.ReadFile(out)
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	delete(got, "file")
	sameInspect(t, got, inspectJSON(t, "r.csv"))
}
