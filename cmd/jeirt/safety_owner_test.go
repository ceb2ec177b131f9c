package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model/checkpoint"
)

// The crafted-input corpus of ownership: markers copied (cp -a, a backup)
// or written by hand, lock files and temporary names that are the user's
// or point elsewhere, response cache entries turned into symlinks, and
// checkpoint manifests set back to an older format. Every case runs a real
// command on a project of its own; no case may lose a file it does not
// name, and none may give a wrong answer.

// deadPID is the id of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// moveTo renames dir/from to dir/to (mv on one disk: the inodes, and so a
// marker's claim, are kept).
func moveTo(t *testing.T, dir, from, to string) {
	t.Helper()
	if err := os.Rename(filepath.Join(dir, from), filepath.Join(dir, to)); err != nil {
		t.Fatal(err)
	}
}

// fitAt writes a jeirt fit folder at dir/name.
func fitAt(t *testing.T, dir, name string) {
	t.Helper()
	if out, err := runCmd(t, newIRTCmd(), "fit", "--data", filepath.Join(dir, "dd", "r.csv"), "--out", filepath.Join(dir, name), "--max-iter", "20"); err != nil {
		t.Fatal(err, out)
	}
}

// editManifest applies f to the JSON of the checkpoint ck's manifest.
func editManifest(t *testing.T, dir string, f func(m map[string]any)) {
	t.Helper()
	p := filepath.Join(dir, "ck", checkpoint.ManifestFile)
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	raw, _ = json.MarshalIndent(m, "", "  ")
	writeUserFile(t, p, string(raw))
}

// responseCache reads dd/r.csv once through the response cache and
// returns the cache file.
func responseCache(t *testing.T) string {
	t.Helper()
	if out, err := runCmd(t, newDataInspectCmd(), "--data", "dd/r.csv", "--cache-min", "-1"); err != nil {
		t.Fatal(err, out)
	}
	files, _ := filepath.Glob(filepath.Join(os.Getenv("XDG_CACHE_HOME"), "jeirt", "responses", "*.cells"))
	if len(files) != 1 {
		t.Fatalf("cache files %v", files)
	}
	return files[0]
}

// fitIterations checks that dir/fit/fit.json is a new fit of at most 20
// iterations (the project's own has 50).
func newFit(t *testing.T, dir, _ string) {
	t.Helper()
	var doc struct {
		Iterations int `json:"iterations"`
	}
	readJSONFile(t, filepath.Join(dir, "fit", "fit.json"), &doc)
	if doc.Iterations == 0 || doc.Iterations > 20 {
		t.Errorf("fit.json is not the new fit's: %d iterations", doc.Iterations)
	}
}

func TestSafetyOwnership(t *testing.T) {
	project := safetyProject(t)
	dead := deadPID(t)
	tmpName := func(base string, pid int, rest string) string {
		return fmt.Sprintf(".%s.jeirt-tmp-%d-0badc0de-%s", base, pid, rest)
	}
	refit := []string{"fit", "--data", "dd/r.csv", "--out", "fit", "--force", "--max-iter", "20"}
	inspectCached := []string{"--print", "json", "--data", "dd/r.csv", "--cache-min", "-1"}
	sameAsUncached := func(t *testing.T, dir, out string) {
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		delete(m, "file")
		sameInspect(t, m, inspectJSON(t, "dd/r.csv", "--no-cache"))
	}
	cases := []safetyCase{
		// Lock files: jeirt's is .NAME.jeirt-lock, made exclusively, never
		// followed, removed only by the run that made it.
		{name: "a user's .res.lock holding notes is never touched", cmd: irtCmd, setup: existing(".res.lock"),
			args: []string{"fit", "--data", "dd/r.csv", "--out", "res", "--max-iter", "20"}, changed: []string{"res/"}},
		{name: "a user's .res.lock that is a symlink to precious.txt", cmd: irtCmd,
			setup: func(t *testing.T, dir string) {
				existing("precious.txt")(t, dir)
				symlinkOrSkip(t, "precious.txt", filepath.Join(dir, ".res.lock"))
			},
			args: []string{"fit", "--data", "dd/r.csv", "--out", "res", "--max-iter", "20"}, changed: []string{"res/"}},
		{name: "the lock's own name a symlink to precious.txt", cmd: irtCmd,
			setup: func(t *testing.T, dir string) {
				existing("precious.txt")(t, dir)
				symlinkOrSkip(t, "precious.txt", filepath.Join(dir, ".res.jeirt-lock"))
			},
			args: []string{"fit", "--data", "dd/r.csv", "--out", "res"}, want: ".res.jeirt-lock is a symbolic link"},
		{name: "the lock's name a dangling symlink: nothing is created at its target", cmd: irtCmd,
			setup: func(t *testing.T, dir string) {
				symlinkOrSkip(t, "made-through-link.txt", filepath.Join(dir, ".res.jeirt-lock"))
			},
			args: []string{"fit", "--data", "dd/r.csv", "--out", "res"}, want: "is a symbolic link"},
		{name: "the lock's name a file of the user's", cmd: irtCmd, setup: existing(".fit.jeirt-lock"),
			args: refit, want: "not jeirt's lock file"},
		{name: "the lock's name a FIFO: refused, not waited on", cmd: irtCmd,
			setup: func(t *testing.T, dir string) { mkfifoOrSkip(t, filepath.Join(dir, ".fit.jeirt-lock")) },
			args:  refit, want: "not a regular file, so it is not jeirt's lock file"},
		{name: "the lock's name a folder of the user's", cmd: irtCmd, setup: existing(".fit.jeirt-lock/notes.txt"),
			args: refit, want: "locking"},
		{name: "a lock a killed run left is taken over and kept", cmd: irtCmd,
			setup: func(t *testing.T, dir string) {
				writeUserFile(t, filepath.Join(dir, ".fit.jeirt-lock"), fmt.Sprintf("jeirt lock: process %d: jeirt irt fit, since 2026-12-01T00:00:00Z\n", dead))
			},
			args: refit, changed: []string{"fit/", ".fit.jeirt-lock"}, check: func(t *testing.T, dir, out string) {
				newFit(t, dir, out)
				if _, err := os.Lstat(filepath.Join(dir, ".fit.jeirt-lock")); err != nil {
					t.Errorf("a lock this run did not make was removed: %v", err)
				}
			}},
		{name: "a user's .abilities.csv.lock inside jeirt's folder", cmd: irtCmd, setup: existing("fit/.abilities.csv.lock"),
			args: refit, want: "fit holds files jeirt did not write (.abilities.csv.lock)"},
		{name: "a user's .fit.lock inside a sweep's run folder", cmd: newSweepCmd,
			setup: func(t *testing.T, dir string) {
				emitSweep(t, dir)
				os.Remove(filepath.Join(dir, "sw", "notes.md"))
				existing("sw/runs/.000.lock")(t, dir)
			},
			args: []string{"--config", "cfgs/sweep.yaml", "--emit", "slurm", "--out", "sw", "--gpus", "0", "--force"}, want: "holds files jeirt did not write (runs/.000.lock)"},

		// Temporary names: only a gone process's, only with the folder's own marker.
		{name: "cp -a fit .fit.jeirt-tmp-backup, with notes, survives --force", cmd: irtCmd,
			setup: func(t *testing.T, dir string) {
				copyTree(t, filepath.Join(dir, "fit"), filepath.Join(dir, ".fit.jeirt-tmp-backup"))
				existing(".fit.jeirt-tmp-backup/notes.txt")(t, dir)
			},
			args: refit, changed: []string{"fit/"}, check: newFit},
		{name: "a copy under a dead run's temporary name survives", cmd: irtCmd,
			setup: func(t *testing.T, dir string) {
				copyTree(t, filepath.Join(dir, "fit"), filepath.Join(dir, tmpName("fit", dead, "copy")))
			},
			args: refit, changed: []string{"fit/"}, check: newFit},
		{name: "jeirt's folder moved to a dead run's temporary name, holding notes, survives", cmd: irtCmd,
			setup: func(t *testing.T, dir string) {
				fitAt(t, dir, "other")
				existing("other/notes.txt")(t, dir)
				moveTo(t, dir, "other", tmpName("fit", dead, "notes"))
			},
			args: refit, changed: []string{"fit/"}, check: newFit},
		{name: "a live run's temporary folder (process 1) survives", cmd: irtCmd,
			setup: func(t *testing.T, dir string) {
				fitAt(t, dir, "other")
				moveTo(t, dir, "other", tmpName("fit", 1, "live"))
			},
			args: refit, changed: []string{"fit/"}, check: newFit},
		{name: "a dead run's temporary folder with its own marker is cleaned up", cmd: irtCmd,
			setup: func(t *testing.T, dir string) {
				fitAt(t, dir, "other")
				moveTo(t, dir, "other", tmpName("fit", dead, "left"))
			},
			args: refit, changed: []string{"fit/", tmpName("fit", dead, "left") + "/"}, check: func(t *testing.T, dir, out string) {
				newFit(t, dir, out)
				if _, err := os.Lstat(filepath.Join(dir, tmpName("fit", dead, "left"))); !os.IsNotExist(err) {
					t.Errorf("the killed run's folder is still there: %v", err)
				}
			}},
		{name: "a user's file named like a temp file inside jeirt's folder", cmd: irtCmd, setup: existing("fit/.fit.json.jeirt-tmp-mine"),
			args: refit, want: "fit holds files jeirt did not write (.fit.json.jeirt-tmp-mine)"},
		{name: "a live run's temp file inside jeirt's folder", cmd: irtCmd, setup: existing("fit/" + tmpName("fit.json", 1, "x")),
			args: refit, want: "fit holds files jeirt did not write (" + tmpName("fit.json", 1, "x") + ")"},
		{name: "a killed run's temp file inside jeirt's folder is jeirt's", cmd: irtCmd, setup: existing("fit/" + tmpName("fit.json", dead, "x")),
			args: refit, changed: []string{"fit/"}, check: newFit},
		{name: "data parquet's leftover of a killed run is removed; a user's look-alike is not", cmd: newDataParquetCmd,
			setup: existing(tmpName("r.parquet", dead, "123"), ".r.parquet.jeirt-tmp-123", ".r.parquet.jeirt-tmp-mine"),
			args:  []string{"dd/r.csv", "r.parquet"}, changed: []string{"r.parquet", tmpName("r.parquet", dead, "123")},
			check: func(t *testing.T, dir, out string) {
				if _, err := os.Lstat(filepath.Join(dir, tmpName("r.parquet", dead, "123"))); !os.IsNotExist(err) {
					t.Errorf("the killed run's temp file is still there: %v", err)
				}
				got, want := inspectJSON(t, "r.parquet"), inspectJSON(t, "dd/r.csv")
				delete(got, "decided")
				delete(want, "decided")
				sameInspect(t, got, want)
			}},
		{name: "a user's temp-looking file beside a file output", cmd: irtCmd, setup: existing("sel.csv", ".sel.csv.jeirt-tmp-backup"),
			args: []string{"select", "--fit", "fit", "--out", "sel.csv", "--keep", "0.5", "--force"}, changed: []string{"sel.csv"}},

		// Markers copied or written by hand.
		{name: "a hand-written marker listing thesis.tex", cmd: newSynthCmd,
			setup: func(t *testing.T, dir string) {
				writeUserFile(t, filepath.Join(dir, "proj", ".jeirt-output.json"), `{"jeirt":"0.1.0","command":"jeirt synth","files":["thesis.tex"]}`)
			},
			args: []string{"--out", "proj", "--force"}, want: "proj was not written by this jeirt (its .jeirt-output.json has no id and no folder: it was written by hand or by an older jeirt; it holds .jeirt-output.json, thesis.tex); refusing to replace it even with --force"},
		{name: "a hand-written marker with an id and the right folder", cmd: newSynthCmd,
			setup: func(t *testing.T, dir string) {
				abs, _ := filepath.Abs(filepath.Join(dir, "proj"))
				writeUserFile(t, filepath.Join(dir, "proj", ".jeirt-output.json"),
					fmt.Sprintf(`{"jeirt":"0.1.0","command":"jeirt synth","files":["thesis.tex"],"id":"0123","folder":%q}`, abs))
			},
			args: []string{"--out", "proj", "--force"}, want: "has been copied here"},
		{name: "jeirt's marker copied into a user's folder, thesis.tex added", cmd: newSynthCmd,
			setup: func(t *testing.T, dir string) {
				var m map[string]any
				readJSONFile(t, filepath.Join(dir, "fit", ".jeirt-output.json"), &m)
				m["files"] = []string{"thesis.tex"}
				b, _ := json.Marshal(m)
				writeUserFile(t, filepath.Join(dir, "proj", ".jeirt-output.json"), string(b))
			},
			args: []string{"--out", "proj", "--force"}, want: "has been copied here"},
		{name: "cp -a of jeirt's folder is not jeirt's", cmd: irtCmd,
			setup: func(t *testing.T, dir string) { copyTree(t, filepath.Join(dir, "fit"), filepath.Join(dir, "fit2")) },
			args:  []string{"fit", "--data", "dd/r.csv", "--out", "fit2", "--force"}, want: "fit2 was not written by this jeirt (its .jeirt-output.json was written for"},
		{name: "a copied checkpoint is not jeirt's", cmd: addCmd,
			setup: func(t *testing.T, dir string) { copyTree(t, filepath.Join(dir, "ck"), filepath.Join(dir, "ck2")) },
			args:  []string{"--checkpoint", "ck", "--data", "dd/r.csv", "--out", "ck2", "--force"}, want: "has been copied here"},
		{name: "jeirt's folder moved with mv stays jeirt's", cmd: irtCmd,
			setup: func(t *testing.T, dir string) { moveTo(t, dir, "fit", "moved") },
			args:  []string{"fit", "--data", "dd/r.csv", "--out", "moved", "--force", "--max-iter", "20"}, changed: []string{"moved/"}},
		{name: "a forged marker in a sub-folder of jeirt's folder", cmd: irtCmd,
			setup: func(t *testing.T, dir string) {
				writeUserFile(t, filepath.Join(dir, "fit", "sub", ".jeirt-output.json"), `{"files":["notes.txt"],"in_progress":true}`)
				existing("fit/sub/notes.txt")(t, dir)
			},
			args: refit, want: "fit holds files jeirt did not write (sub/)"},
		{name: "jeirt's marker replaced by a symlink to another folder's", cmd: irtCmd,
			setup: func(t *testing.T, dir string) {
				fitAt(t, dir, "other")
				os.Remove(filepath.Join(dir, "fit", ".jeirt-output.json"))
				symlinkOrSkip(t, "../other/.jeirt-output.json", filepath.Join(dir, "fit", ".jeirt-output.json"))
			},
			args: refit, want: "refusing to replace it even with --force"},
		{name: "sweep collect U: no marker, a copied sweep.json", cmd: newSweepCmd,
			setup: func(t *testing.T, dir string) {
				emitSweep(t, dir)
				writeUserFile(t, filepath.Join(dir, "U", "sweep.json"), string(must(os.ReadFile(filepath.Join(dir, "sw", "sweep.json")))))
				existing("U/sweep.csv")(t, dir)
			},
			args: []string{"collect", "U"}, want: "U was not written by jeirt (it has no .jeirt-output.json); refusing to write sweep.csv into it"},
		{name: "sweep collect of a copied sweep folder", cmd: newSweepCmd,
			setup: func(t *testing.T, dir string) {
				emitSweep(t, dir)
				copyTree(t, filepath.Join(dir, "sw"), filepath.Join(dir, "U"))
				existing("U/sweep.csv")(t, dir)
			},
			args: []string{"collect", "U"}, want: "has been copied here (a copy or a restored backup is not jeirt's output); refusing to write sweep.csv"},
		{name: "sweep collect when sweep.csv is a symlink to precious.txt", cmd: newSweepCmd,
			setup: func(t *testing.T, dir string) {
				emitSweep(t, dir)
				existing("precious.txt")(t, dir)
				symlinkOrSkip(t, "../precious.txt", filepath.Join(dir, "sw", "sweep.csv"))
			},
			args: []string{"collect", "sw"}, want: "sw/sweep.csv is not a regular file"},
		{name: "sweep collect U --out elsewhere still reads it", cmd: newSweepCmd,
			setup: func(t *testing.T, dir string) {
				emitSweep(t, dir)
				copyTree(t, filepath.Join(dir, "sw"), filepath.Join(dir, "U"))
			},
			args: []string{"collect", "U", "--out", "table.csv"}, changed: []string{"table.csv"}},

		// The response cache: its entries are never followed.
		{name: "a cache file replaced by a symlink to a user's file", cmd: newDataInspectCmd,
			setup: func(t *testing.T, dir string) {
				c := responseCache(t)
				existing("precious.txt")(t, dir)
				os.Remove(c)
				symlinkOrSkip(t, filepath.Join(dir, "precious.txt"), c)
			},
			args: inspectCached, check: sameAsUncached},
		{name: "a cache file replaced by a symlink to the data itself", cmd: newDataInspectCmd,
			setup: func(t *testing.T, dir string) {
				c := responseCache(t)
				os.Remove(c)
				symlinkOrSkip(t, filepath.Join(dir, "dd", "r.csv"), c)
			},
			args: inspectCached, check: sameAsUncached},
		// A FIFO of the project's, not /dev/zero: a build that wrote
		// through the link would replace the device on a machine run as root.
		{name: "a cache file a symlink to a FIFO", cmd: newDataInspectCmd,
			setup: func(t *testing.T, dir string) {
				c := responseCache(t)
				os.Remove(c)
				mkfifoOrSkip(t, filepath.Join(dir, "p.fifo"))
				symlinkOrSkip(t, filepath.Join(dir, "p.fifo"), c)
			},
			args: inspectCached, check: sameAsUncached},
		{name: "the cache folder a symlink to a user's folder", cmd: newDataInspectCmd,
			setup: func(t *testing.T, dir string) {
				existing("mine/notes.txt")(t, dir)
				os.MkdirAll(filepath.Join(os.Getenv("XDG_CACHE_HOME"), "jeirt"), 0o755)
				symlinkOrSkip(t, filepath.Join(dir, "mine"), filepath.Join(os.Getenv("XDG_CACHE_HOME"), "jeirt", "responses"))
			},
			args: inspectCached, check: sameAsUncached},

		// Checkpoint manifests set back to an older format.
		{name: "format_version 1 in a v2 manifest", cmd: newEvalCmd,
			setup: func(t *testing.T, dir string) {
				editManifest(t, dir, func(m map[string]any) { m["format_version"] = 1 })
			},
			args: []string{"--checkpoint", "ck", "--data", "dd/r.csv"}, want: "the weights were written as format_version 2, the manifest says 1"},
		{name: "format_version 1 without hashes", cmd: routeCmd,
			setup: func(t *testing.T, dir string) {
				editManifest(t, dir, func(m map[string]any) { m["format_version"] = 1; delete(m, "sha256") })
			},
			args: []string{"eval", "--checkpoint", "ck", "--data", "dd/r.csv", "--out", "curve.csv"}, want: "the manifest says 1"},
		{name: "format_version 1, no hashes, another run's model names", cmd: addCmd,
			setup: func(t *testing.T, dir string) {
				editManifest(t, dir, func(m map[string]any) {
					m["format_version"] = 1
					delete(m, "sha256")
					m["models"] = []string{"small", "mid", "big"}
				})
			},
			args: []string{"suggest", "3", "--checkpoint", "ck", "--out", "ask.csv"}, want: "format_version 2, the manifest says 1"},
		{name: "format_version 0", cmd: newEvalCmd,
			setup: func(t *testing.T, dir string) {
				editManifest(t, dir, func(m map[string]any) { m["format_version"] = 0 })
			},
			args: []string{"--checkpoint", "ck", "--data", "dd/r.csv"}, want: "format_version 0 is not supported"},
		{name: "format_version as a string", cmd: newEvalCmd,
			setup: func(t *testing.T, dir string) {
				editManifest(t, dir, func(m map[string]any) { m["format_version"] = "1" })
			},
			args: []string{"--checkpoint", "ck", "--data", "dd/r.csv"}, want: "format_version"},
		{name: "the weights' recorded version edited to 1", cmd: addCmd,
			setup: func(t *testing.T, dir string) {
				p := filepath.Join(dir, "ck", checkpoint.WeightsFile)
				b := must(os.ReadFile(p))
				writeUserFile(t, p, strings.Replace(string(b), `"format_version":"2"`, `"format_version":"1"`, 1))
				editManifest(t, dir, func(m map[string]any) { m["format_version"] = 1; delete(m, "sha256") })
			},
			// Now both say 1: a version-1 folder, loaded with its warning.
			args: []string{"suggest", "1", "--checkpoint", "ck", "--out", "ask.csv"}, changed: []string{"ask.csv"}, check: func(t *testing.T, dir, out string) {
				if !strings.Contains(out, "before checkpoints recorded hashes") {
					t.Errorf("a version-1 checkpoint loaded without its warning:\n%s", out)
				}
			}},
	}
	if len(cases) < 28 {
		t.Fatalf("the corpus has %d cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { runSafety(t, project, c) })
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
