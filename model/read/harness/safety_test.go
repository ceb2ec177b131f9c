package harness

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/machine"
	"github.com/jeirt/jeirt/model/read/harness/harnesstest"
	"github.com/jeirt/jeirt/model/read/internal/cell"
)

// A log tree is a tree of untrusted names: each case is a tree crafted as
// a red team would (names inside logs that are paths, symlinks, FIFOs,
// lying zips, numbers that are not JSON, two tools' ids) and what reading
// it must give. Every case failed (read the wrong thing, dropped a log
// without a word, hung or named the wrong cause) before the tree was read
// as package logtree reads it.
func TestSafetyLogTrees(t *testing.T) {
	cases := []struct {
		name string
		// tree writes the case under dir and returns what to read.
		tree func(t *testing.T, dir string) string
		// check looks at what Read gave.
		check func(t *testing.T, r *model.Responses, sum *Summary, err error)
	}{
		{"lm-eval task name that is a path", func(t *testing.T, dir string) string {
			tree := filepath.Join(dir, "x", "tree")
			lmEvalRun(t, tree, "m", `"arith": {"metric_list": [{"metric": "acc"}]}, "../../../../private/notes": {"metric_list": [{"metric": "acc"}]}`)
			write(t, filepath.Join(tree, "samples_arith_T.jsonl"), lmSample(0, "What is 2+2?", "1"))
			write(t, filepath.Join(dir, "private", "notes_T.jsonl"), lmSample(7, "SECRET notes", "1"))
			return tree
		}, func(t *testing.T, r *model.Responses, sum *Summary, err error) {
			wantCells(t, r, err, "m arith/0=1")
			wantSkip(t, sum, "results_T.json", `task "../../../../private/notes": a name with a path separator or a NUL byte in it, not a file name, so no samples file is looked for`)
		}},
		{"samples file that is a symlink out of the tree", func(t *testing.T, dir string) string {
			tree := filepath.Join(dir, "tree")
			lmEvalRun(t, tree, "m", `"arith": {"metric_list": [{"metric": "acc"}]}, "quiz": {"metric_list": [{"metric": "acc"}]}`)
			write(t, filepath.Join(tree, "samples_quiz_T.jsonl"), lmSample(0, "Q?", "0"))
			write(t, filepath.Join(dir, "secret.jsonl"), lmSample(0, "SECRET", "1"))
			symlink(t, filepath.Join(dir, "secret.jsonl"), filepath.Join(tree, "samples_arith_T.jsonl"))
			return tree
		}, func(t *testing.T, r *model.Responses, sum *Summary, err error) {
			wantCells(t, r, err, "m quiz/0=0")
			wantSkip(t, sum, "results_T.json", "task arith: "+"%TREE%/samples_arith_T.jsonl leads to %DIR%/secret.jsonl, outside the tree %TREE%: not followed (copy it into the tree, or name it on its own)")
		}},
		{"HELM scenario_state.json that is a symlink out of the tree", func(t *testing.T, dir string) string {
			tree := filepath.Join(dir, "tree")
			run := helmRun(t, tree, "1", "1")
			write(t, filepath.Join(dir, "state.json"), `{"request_states": [{"instance": {"id": "id0", "input": {"text": "SECRET"}}}]}`)
			symlink(t, filepath.Join(dir, "state.json"), filepath.Join(run, "scenario_state.json"))
			return tree
		}, func(t *testing.T, r *model.Responses, sum *Summary, err error) {
			wantCells(t, r, err, "m quiz/id0=1")
			if r.ItemText[0] != "" {
				t.Errorf("text %q read from outside the tree", r.ItemText[0])
			}
			wantSkip(t, sum, "scenario_state.json", "leads to %DIR%/state.json, outside the tree %TREE%: not followed (copy it into the tree, or name it on its own); the run's items have no text")
		}},
		{"log that is a symlink out of the tree", func(t *testing.T, dir string) string {
			tree := filepath.Join(dir, "tree")
			write(t, filepath.Join(tree, "a_samples.jsonl"), eeeLine("a", "arith", "1", "Q1", `"score": 1`))
			write(t, filepath.Join(dir, "b_samples.jsonl"), eeeLine("b", "arith", "1", "Q1", `"score": 0`))
			symlink(t, filepath.Join(dir, "b_samples.jsonl"), filepath.Join(tree, "b_samples.jsonl"))
			return tree
		}, func(t *testing.T, r *model.Responses, sum *Summary, err error) {
			wantCells(t, r, err, "a arith/1=1")
			wantSkip(t, sum, "b_samples.jsonl", "a symlink to %DIR%/b_samples.jsonl, outside the tree %TREE%: not followed (copy it into the tree, or name it on its own)")
		}},
		{"folder symlinked inside the tree is read once", func(t *testing.T, dir string) string {
			tree := filepath.Join(dir, "tree")
			write(t, filepath.Join(tree, "real", "a_samples.jsonl"), eeeLine("a", "arith", "1", "Q1", `"score": 1`))
			symlink(t, "real", filepath.Join(tree, "alias"))
			return tree
		}, func(t *testing.T, r *model.Responses, sum *Summary, err error) {
			wantCells(t, r, err, "a arith/1=1")
			if err == nil && r.TrialsAt(0) != 1 {
				t.Errorf("%d trials: the folder was read twice", r.TrialsAt(0))
			}
			wantSkip(t, sum, "alias", "a symlink to %TREE%/real, inside the tree: read there, once")
		}},
		{"log symlinked inside the tree is read once", func(t *testing.T, dir string) string {
			tree := filepath.Join(dir, "tree")
			write(t, filepath.Join(tree, "a_samples.jsonl"), eeeLine("a", "arith", "1", "Q1", `"score": 1`))
			symlink(t, "a_samples.jsonl", filepath.Join(tree, "b_samples.jsonl"))
			return tree
		}, func(t *testing.T, r *model.Responses, sum *Summary, err error) {
			wantCells(t, r, err, "a arith/1=1")
			if err == nil && r.TrialsAt(0) != 1 {
				t.Errorf("%d trials: the log was read twice", r.TrialsAt(0))
			}
			wantSkip(t, sum, "b_samples.jsonl", "a symlink to %TREE%/a_samples.jsonl, inside the tree: read there, once")
		}},
		{"symlink loop", func(t *testing.T, dir string) string {
			tree := filepath.Join(dir, "tree")
			write(t, filepath.Join(tree, "a_samples.jsonl"), eeeLine("a", "arith", "1", "Q1", `"score": 1`))
			symlink(t, "..", filepath.Join(tree, "sub", "up"))
			return tree
		}, func(t *testing.T, r *model.Responses, sum *Summary, err error) {
			wantCells(t, r, err, "a arith/1=1")
			wantSkip(t, sum, "up", "a symlink to %TREE%, inside the tree: read there, once")
		}},
		{"two symlinks to a hidden folder", func(t *testing.T, dir string) string {
			tree := filepath.Join(dir, "tree")
			write(t, filepath.Join(tree, ".store", "a_samples.jsonl"), eeeLine("a", "arith", "1", "Q1", `"score": 1`))
			symlink(t, ".store", filepath.Join(tree, "one"))
			symlink(t, ".store", filepath.Join(tree, "two"))
			return tree
		}, func(t *testing.T, r *model.Responses, sum *Summary, err error) {
			wantCells(t, r, err, "a arith/1=1")
			if err == nil && r.TrialsAt(0) != 1 {
				t.Errorf("%d trials: the folder was read twice", r.TrialsAt(0))
			}
			wantSkip(t, sum, "two", "the same folder as %TREE%/one (through a symlink): read once")
		}},
		{"tree given as a symlink", func(t *testing.T, dir string) string {
			tree := filepath.Join(dir, "tree")
			write(t, filepath.Join(tree, "a_samples.jsonl"), eeeLine("a", "arith", "1", "Q1", `"score": 1`))
			symlink(t, tree, filepath.Join(dir, "link"))
			return filepath.Join(dir, "link")
		}, func(t *testing.T, r *model.Responses, sum *Summary, err error) {
			wantCells(t, r, err, "a arith/1=1")
		}},
		{"dangling symlink", func(t *testing.T, dir string) string {
			tree := filepath.Join(dir, "tree")
			write(t, filepath.Join(tree, "a_samples.jsonl"), eeeLine("a", "arith", "1", "Q1", `"score": 1`))
			symlink(t, "gone.eval", filepath.Join(tree, "x.eval"))
			return tree
		}, func(t *testing.T, r *model.Responses, sum *Summary, err error) {
			wantCells(t, r, err, "a arith/1=1")
			wantSkip(t, sum, "x.eval", "a symlink that leads nowhere readable (no such file or directory): not followed")
		}},
		{"FIFO in the tree", func(t *testing.T, dir string) string {
			tree := filepath.Join(dir, "tree")
			write(t, filepath.Join(tree, "a_samples.jsonl"), eeeLine("a", "arith", "1", "Q1", `"score": 1`))
			fifo(t, filepath.Join(tree, "b.eval"))
			return tree
		}, func(t *testing.T, r *model.Responses, sum *Summary, err error) {
			wantCells(t, r, err, "a arith/1=1")
			wantSkip(t, sum, "b.eval", "a FIFO (named pipe), not a log file: not opened")
		}},
		{"FIFO named as the log", func(t *testing.T, dir string) string {
			fifo(t, filepath.Join(dir, "b.eval"))
			return filepath.Join(dir, "b.eval")
		}, func(t *testing.T, r *model.Responses, sum *Summary, err error) {
			wantErr(t, err, "%DIR%/b.eval is a FIFO (named pipe), not a log file: logs are read from regular files and folders")
		}},
		{"FIFO at a HELM run's scenario_state.json", func(t *testing.T, dir string) string {
			tree := filepath.Join(dir, "tree")
			run := helmRun(t, tree, "1", "1")
			fifo(t, filepath.Join(run, "scenario_state.json"))
			return tree
		}, func(t *testing.T, r *model.Responses, sum *Summary, err error) {
			wantCells(t, r, err, "m quiz/id0=1")
			wantSkip(t, sum, "scenario_state.json", "scenario_state.json is a FIFO (named pipe): not opened (a log is a regular file); the run's items have no text")
		}},
		{"socket in the tree", func(t *testing.T, dir string) string {
			tree := filepath.Join(dir, "tree")
			write(t, filepath.Join(tree, "a_samples.jsonl"), eeeLine("a", "arith", "1", "Q1", `"score": 1`))
			l, err := net.Listen("unix", filepath.Join(tree, "s.json"))
			if err != nil {
				t.Skip("no Unix sockets here:", err)
			}
			t.Cleanup(func() { l.Close() })
			return tree
		}, func(t *testing.T, r *model.Responses, sum *Summary, err error) {
			wantCells(t, r, err, "a arith/1=1")
			wantSkip(t, sum, "s.json", "a socket, not a log file: not opened")
		}},
		{"HELM run_spec.json that is a symlink out of the tree", func(t *testing.T, dir string) string {
			tree := filepath.Join(dir, "tree")
			write(t, filepath.Join(tree, "a_samples.jsonl"), eeeLine("a", "arith", "1", "Q1", `"score": 1`))
			run := helmRun(t, tree, "1", "1")
			b, _ := os.ReadFile(filepath.Join(run, "run_spec.json"))
			write(t, filepath.Join(dir, "spec.json"), strings.Replace(string(b), `"model": "m"`, `"model": "SECRET"`, 1))
			symlink(t, filepath.Join(dir, "spec.json"), filepath.Join(run, "run_spec.json"))
			return tree
		}, func(t *testing.T, r *model.Responses, sum *Summary, err error) {
			wantCells(t, r, err, "a arith/1=1")
			wantSkip(t, sum, "quiz:model=m", "a HELM run not read: %TREE%/quiz:model=m/run_spec.json leads to %DIR%/spec.json, outside the tree %TREE%: not followed")
		}},
		{"Every Eval Ever aggregate whose samples are a symlink out of the tree", func(t *testing.T, dir string) string {
			tree := filepath.Join(dir, "tree")
			agg := write(t, filepath.Join(tree, "u.json"), `{"schema_version": "0.1", "evaluation_results": []}`)
			write(t, filepath.Join(dir, "secret_samples.jsonl"), eeeLine("SECRET", "arith", "1", "Q1", `"score": 1`))
			symlink(t, filepath.Join(dir, "secret_samples.jsonl"), filepath.Join(tree, "u_samples.jsonl"))
			return agg
		}, func(t *testing.T, r *model.Responses, sum *Summary, err error) {
			wantErr(t, err, "%TREE%/u_samples.jsonl leads to %DIR%/secret_samples.jsonl, outside the tree %TREE%: not followed")
		}},
		{"unreadable log", func(t *testing.T, dir string) string {
			if os.Geteuid() == 0 {
				t.Skip("root reads a file of mode 000")
			}
			tree := filepath.Join(dir, "tree")
			write(t, filepath.Join(tree, "a_samples.jsonl"), eeeLine("a", "arith", "1", "Q1", `"score": 1`))
			write(t, filepath.Join(tree, "b.json"), `{"version": 2, "eval": {"task": "arith", "model": "b"}, "samples": []}`)
			os.Chmod(filepath.Join(tree, "b.json"), 0)
			return tree
		}, func(t *testing.T, r *model.Responses, sum *Summary, err error) {
			wantCells(t, r, err, "a arith/1=1")
			wantSkip(t, sum, "b.json", "cannot be read (permission denied): a log here is not read; make it readable (chmod +r) or move it out of the tree")
		}},
		{".eval whose members claim 1 GiB each", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "bomb.eval")
			f, err := os.Create(p)
			if err != nil {
				t.Fatal(err)
			}
			zw := zip.NewWriter(f)
			h, _ := zw.Create("header.json")
			h.Write([]byte(`{"version": 2, "eval": {"task": "t", "model": "m", "scorers": [{"name": "s"}]}}`))
			var comp bytes.Buffer
			fw, _ := flate.NewWriter(&comp, flate.BestCompression)
			fw.Write([]byte(`{"id": 1, "epoch": 1, "input": "q", "scores": {"s": {"value": "C"}}}`))
			fw.Close()
			for k := range 3 {
				w, err := zw.CreateRaw(&zip.FileHeader{Name: fmt.Sprintf("samples/%d_epoch_1.json", k+1), Method: zip.Deflate,
					CompressedSize64: uint64(comp.Len()), UncompressedSize64: 1 << 30})
				if err != nil {
					t.Fatal(err)
				}
				w.Write(comp.Bytes())
			}
			zw.Close()
			f.Close()
			return p
		}, func(t *testing.T, r *model.Responses, sum *Summary, err error) {
			wantErr(t, err, "%DIR%/bomb.eval!samples/1_epoch_1.json: the zip says it is 1.0 GiB uncompressed, more than 4.0 MiB (64 times the .eval's")
		}},
		{"two tools' tasks of one name", func(t *testing.T, dir string) string {
			one := func(tool, text string, x float64) {
				s := harnesstest.Set{Task: "arith", Models: []string{"m"}, Items: []harnesstest.Item{{ID: "1", Text: text}}, Scores: [][][]float64{{{x}}}}
				if err := harnesstest.Write(filepath.Join(dir, tool), tool, s); err != nil {
					t.Fatal(err)
				}
			}
			one(LMEval, "What is 2+2?", 1)
			one(Inspect, "Name the capital of France.", 0)
			return dir
		}, func(t *testing.T, r *model.Responses, sum *Summary, err error) {
			wantCells(t, r, err, "m inspect:arith/0=0", "m lm-eval:arith/0=1")
		}},
		{"task name ending in another task's id", func(t *testing.T, dir string) string {
			return write(t, filepath.Join(dir, "a_samples.jsonl"), eeeLine("m", "a/b", "c", "Q1", `"score": 1`)+eeeLine("m", "a", "b/c", "Q2", `"score": 0`))
		}, func(t *testing.T, r *model.Responses, sum *Summary, err error) {
			wantErr(t, err, `%DIR%/a_samples.jsonl: two items are named "a/b/c": eee task "a/b" id "c" and eee task "a" id "b/c" (a task's name ending in /ID of another's): rename a task, or read the logs apart`)
		}},
		{"hex float score", func(t *testing.T, dir string) string {
			return write(t, filepath.Join(dir, "a_samples.jsonl"), eeeLine("a", "arith", "1", "Q1", `"score": 0x1p-1`))
		}, func(t *testing.T, r *model.Responses, sum *Summary, err error) {
			wantErr(t, err, `%DIR%/a_samples.jsonl:1: key "evaluation.score": 0x1p-1 is not a JSON number (JSON writes numbers in decimal, e.g. 0.5), so it is not read as one: rewrite the value`)
		}},
		{"score beyond float64", func(t *testing.T, dir string) string {
			return write(t, filepath.Join(dir, "a_samples.jsonl"), eeeLine("a", "arith", "1", "Q1", `"score": 1e999`))
		}, func(t *testing.T, r *model.Responses, sum *Summary, err error) {
			wantErr(t, err, `%DIR%/a_samples.jsonl:1: key "evaluation.score": 1e999 is beyond the range of a 64-bit float`)
		}},
		{"lm-eval score NaN", func(t *testing.T, dir string) string {
			lmEvalRun(t, dir, "m", `"arith": {"metric_list": [{"metric": "acc"}]}`)
			write(t, filepath.Join(dir, "samples_arith_T.jsonl"), lmSample(0, "Q", "NaN"))
			return dir
		}, func(t *testing.T, r *model.Responses, sum *Summary, err error) {
			wantErr(t, err, `%DIR%/samples_arith_T.jsonl:1: key "acc": NaN is not a number (Python's json writes it for a float that is not finite): the score is undefined; choose another metric with --metric, or remove the sample`)
		}},
		{`HELM "mean": NaN beside a sum and count`, func(t *testing.T, dir string) string {
			return helmRun(t, dir, "NaN", "1")
		}, func(t *testing.T, r *model.Responses, sum *Summary, err error) {
			wantErr(t, err, `per_instance_stats.json: element 1 (byte `, `): instance id0: stat "exact_match": key "mean": NaN is not a number (Python's json writes it`)
		}},
		{"NaN in an unused field of a results file", func(t *testing.T, dir string) string {
			lmEvalRun(t, dir, "m", `"arith": {"metric_list": [{"metric": "acc"}]}`)
			b, _ := os.ReadFile(filepath.Join(dir, "results_T.json"))
			write(t, filepath.Join(dir, "results_T.json"), strings.Replace(string(b), `"results": {}`, `"results": {"arith": {"acc,none": 0.5, "acc_stderr,none": NaN, "note": "NaN"}}`, 1))
			write(t, filepath.Join(dir, "samples_arith_T.jsonl"), lmSample(0, "Q", "1"))
			return dir
		}, func(t *testing.T, r *model.Responses, sum *Summary, err error) {
			wantCells(t, r, err, "m arith/0=1")
		}},
		{"byte order mark before a results file", func(t *testing.T, dir string) string {
			lmEvalRun(t, dir, "m", `"arith": {"metric_list": [{"metric": "acc"}]}`)
			b, _ := os.ReadFile(filepath.Join(dir, "results_T.json"))
			write(t, filepath.Join(dir, "results_T.json"), "\ufeff"+string(b))
			write(t, filepath.Join(dir, "samples_arith_T.jsonl"), lmSample(0, "Q", "1"))
			return dir
		}, func(t *testing.T, r *model.Responses, sum *Summary, err error) {
			wantCells(t, r, err, "m arith/0=1")
		}},
		{"byte order mark before an inspect .json log", func(t *testing.T, dir string) string {
			return write(t, filepath.Join(dir, "log.json"), "\ufeff"+`{"version": 2, "status": "success", "eval": {"task": "arith", "model": "m", "scorers": [{"name": "match"}]},
				"samples": [{"id": 1, "epoch": 1, "input": "Q1", "scores": {"match": {"value": "C"}}}]}`)
		}, func(t *testing.T, r *model.Responses, sum *Summary, err error) {
			wantCells(t, r, err, "m arith/1=1")
		}},
		{"cancelled while walking a tree", func(t *testing.T, dir string) string {
			write(t, filepath.Join(dir, "sub", "notes.txt"), "not a log")
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			t.Cleanup(fileio.SetInputContext(ctx))
			return dir
		}, func(t *testing.T, r *model.Responses, sum *Summary, err error) {
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%v, want the run's cancellation", err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			root := c.tree(t, dir)
			type result struct {
				r   *model.Responses
				sum *Summary
				err error
			}
			done := make(chan result, 1)
			go func() {
				r, sum, _, err := Read(root, Options{})
				done <- result{r, sum, err}
			}()
			var res result
			select {
			case res = <-done:
			case <-time.After(20 * time.Second): // a guard against a hang, far above any read here
				t.Fatalf("Read(%s) hangs", root)
			}
			if res.sum != nil {
				res.sum.Skipped = slices.Clone(res.sum.Skipped)
				for k := range res.sum.Skipped {
					res.sum.Skipped[k].Why = strings.ReplaceAll(res.sum.Skipped[k].Why, dir, "%DIR%")
				}
			}
			if res.err != nil {
				res.err = relErr{strings.ReplaceAll(res.err.Error(), dir, "%DIR%"), res.err}
			}
			c.check(t, res.r, res.sum, res.err)
		})
	}
}

// A .eval whose members claim 1 GiB each is refused before anything of that
// size is allocated.
func TestEvalBombAllocatesLittle(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "bomb.eval")
	f, _ := os.Create(p)
	zw := zip.NewWriter(f)
	h, _ := zw.Create("header.json")
	h.Write([]byte(`{"version": 2, "eval": {"task": "t", "model": "m", "scorers": [{"name": "s"}]}}`))
	w, _ := zw.CreateRaw(&zip.FileHeader{Name: "samples/1_epoch_1.json", Method: zip.Store, CompressedSize64: 2, UncompressedSize64: 60 << 20})
	w.Write([]byte("{}"))
	zw.Close()
	f.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, _, err := Read(p, Options{})
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "bomb.eval!samples/1_epoch_1.json: the zip says it is 60.0 MiB uncompressed, more than 4.0 MiB") {
		t.Errorf("%v", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 8<<20 {
		t.Errorf("%s allocated to refuse it", machine.Bytes(int64(got)))
	}
}

// relErr is an error with the case's folder written %DIR%.
type relErr struct {
	msg string
	err error
}

func (e relErr) Error() string { return e.msg }
func (e relErr) Unwrap() error { return e.err }

// %TREE% and %DIR% in a wanted message stand for the case's tree and folder.
func expand(s string) string { return strings.ReplaceAll(s, "%TREE%", "%DIR%/tree") }

func wantCells(t *testing.T, r *model.Responses, err error, want ...string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%v", err)
	}
	var got []string
	for c := range r.Label {
		got = append(got, fmt.Sprintf("%s %s=%g", r.Models[r.Model[c]], r.Items[r.Item[c]], r.SuccessesAt(c)/float64(r.TrialsAt(c))))
	}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("cells %q, want %q", got, want)
	}
}

func wantSkip(t *testing.T, sum *Summary, base, why string) {
	t.Helper()
	why = expand(why)
	for _, s := range sum.Skipped {
		if filepath.Base(s.Path) == base && strings.Contains(s.Why, why) {
			return
		}
	}
	t.Errorf("skipped %+v, want %s: %s", sum.Skipped, base, why)
}

func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), expand(p)) {
			t.Errorf("%v\nwant %q", err, expand(p))
		}
	}
}

func write(t *testing.T, p, body string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func symlink(t *testing.T, target, p string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.Remove(p)
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

func fifo(t *testing.T, p string) {
	t.Helper()
	os.Remove(p)
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
}

// lmEvalRun writes an lm-eval results_T.json of model m with the given configs.
func lmEvalRun(t *testing.T, dir, m, configs string) {
	write(t, filepath.Join(dir, "results_T.json"), fmt.Sprintf(`{"model_name": %q, "results": {}, "configs": {%s}}`, m, configs))
}

func lmSample(doc int, text, acc string) string {
	return fmt.Sprintf(`{"doc_id": %d, "doc": {"question": %q}, "arguments": {"gen_args_0": {"arg_0": %q}}, "filter": "none", "metrics": ["acc"], "acc": %s}`+"\n", doc, text, text, acc)
}

func eeeLine(m, task, id, text, eval string) string {
	return fmt.Sprintf(`{"model_id": %q, "evaluation_name": %q, "sample_id": %q, "input": {"raw": %q}, "evaluation": {%s}}`+"\n", m, task, id, text, eval)
}

// helmRun writes a HELM run of model m on task quiz, instance id0 with the
// given mean and sum (count 1), and its scenario_state.json.
func helmRun(t *testing.T, dir, mean, sum string) string {
	run := filepath.Join(dir, "quiz:model=m")
	write(t, filepath.Join(run, "run_spec.json"), `{"name": "quiz:model=m", "adapter_spec": {"model": "m"}, "metric_specs": [{"args": {"names": ["exact_match"]}}]}`)
	write(t, filepath.Join(run, "per_instance_stats.json"), fmt.Sprintf(`[{"instance_id": "id0", "train_trial_index": 0, "stats": [{"name": {"name": "exact_match", "split": "test"}, "count": 1, "sum": %s, "mean": %s}]}]`, sum, mean))
	write(t, filepath.Join(run, "scenario_state.json"), `{"request_states": [{"instance": {"id": "id0", "input": {"text": "Q0"}}}]}`)
	return run
}

// Items of two tools joined at the end (the same task, id and text) are
// one cell of their trials however often the sink resolved its cells
// while reading: every few cells here, or never.
func TestJoinedItemsAfterCompaction(t *testing.T) {
	dir := t.TempDir()
	s := smallSet("m0", "m1", "m2")
	for _, tool := range []string{LMEval, EEE, Inspect} {
		if err := harnesstest.Write(filepath.Join(dir, tool), tool, s); err != nil {
			t.Fatal(err)
		}
	}
	r1, _, _, err := Read(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func(n int) { cell.CompactMin = n }(cell.CompactMin)
	cell.CompactMin = 2
	r2, _, _, err := Read(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r1.Items) != 6 || r1.Len() != 18 || r2.Len() != 18 {
		t.Fatalf("%d items, %d then %d cells", len(r1.Items), r1.Len(), r2.Len())
	}
	for c := range r1.Label {
		// Three tools' logs of each cell; item 0 has a second trial in each.
		want := 3
		if r1.Items[r1.Item[c]] == "quiz/0" {
			want = 6
		}
		if r1.TrialsAt(c) != want || r2.TrialsAt(c) != want || r1.SuccessesAt(c) != r2.SuccessesAt(c) || r1.Item[c] != r2.Item[c] || r1.Model[c] != r2.Model[c] {
			t.Errorf("cell %d: %v of %d, then %v of %d (want %d trials)", c, r1.SuccessesAt(c), r1.TrialsAt(c), r2.SuccessesAt(c), r2.TrialsAt(c), want)
		}
	}
}
