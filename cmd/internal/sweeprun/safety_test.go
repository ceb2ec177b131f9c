package sweeprun

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/cmd/internal/slurm"
	"github.com/jeirt/jeirt/train/sweep"
)

// oddName is a folder name that breaks an unquoted script: spaces, both
// quotes, a command substitution, a variable, a glob and a percent sign.
const oddName = `x$(touch PWNED) it's "q" $HOME [1]* 50%`

// fakeJeirt puts a jeirt on PATH that writes its arguments, one a line,
// to the file it returns.
func fakeJeirt(t *testing.T) (argsFile string) {
	t.Helper()
	bin := t.TempDir()
	argsFile = filepath.Join(t.TempDir(), "args")
	os.WriteFile(filepath.Join(bin, "jeirt"), []byte("#!/bin/bash\nprintf '%s\\n' \"$@\" > \"$ARGS_FILE\"\n"), 0o755)
	t.Setenv("ARGS_FILE", argsFile)
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	return argsFile
}

// noPwned fails when a file named PWNED appeared under any of dirs.
func noPwned(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		filepath.WalkDir(d, func(p string, e os.DirEntry, err error) error {
			if err == nil && strings.Contains(e.Name(), "PWNED") && !e.IsDir() {
				t.Errorf("the script ran a command from a path: %s", p)
			}
			return nil
		})
	}
}

// The sweep's script quotes its folder: bash parses it, sbatch reads its
// --output whole, and a task run by hand trains its run in the folder
// named x$(touch PWNED)... without running anything from the name.
func TestSafetySweepScriptQuotesItsFolder(t *testing.T) {
	p := sweepFixture(t, "name: tiny\nbase: base.yaml\ngrid: {model.dim: [2, 4]}\nslurm: {gpus: 0, cpus: 1}\n")
	s, err := LoadSweep(p)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	out := filepath.Join(root, oddName)
	if _, err := s.Emit(out, EmitOptions{Slurm: true, Command: "jeirt sweep s.yaml --out 'a\nb'"}); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(out, SweepScriptFile)
	if b, err := exec.Command("bash", "-n", script).CombinedOutput(); err != nil {
		t.Fatalf("bash -n: %v %s", err, b)
	}
	text, _ := os.ReadFile(script)
	var output string
	for _, line := range strings.Split(string(text), "\n") {
		if rest, ok := strings.CutPrefix(line, "#SBATCH "); ok {
			args := slurm.DirectiveArgs(rest)
			if len(args) != 1 {
				t.Errorf("%q reads as %d arguments: %q", line, len(args), args)
			}
			if v, ok := strings.CutPrefix(args[0], "--output="); ok {
				output = v
			}
		}
	}
	if want := strings.ReplaceAll(out, "%", "%%") + "/runs/%3a/slurm-%A_%a.out"; output != want {
		t.Errorf("sbatch reads --output as\n%q, want\n%q", output, want)
	}
	args := fakeJeirt(t)
	work := t.TempDir()
	cmd := exec.Command("bash", script)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "SLURM_ARRAY_TASK_ID=1", "JEIRT=", "SWEEP_DIR=")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("task 1 by hand: %v\n%s", err, b)
	}
	got, _ := os.ReadFile(args)
	if want := "train\n--config\n" + filepath.Join(out, "runs", "001", "config.yaml") + "\n--force\n--no-baselines\n"; string(got) != want {
		t.Errorf("jeirt ran with\n%s\nwant\n%s", got, want)
	}
	noPwned(t, root, work)
}

// A folder no script can name (a newline) is refused before anything is
// written.
func TestSafetySweepRefusesANewlineFolder(t *testing.T) {
	s, err := LoadSweep(sweepFixture(t, "name: tiny\nbase: base.yaml\ngrid: {model.dim: [2, 4]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "a\nb")
	_, err = s.Emit(out, EmitOptions{Slurm: true})
	if want := `{Out} "` + strings.ReplaceAll(out, "\n", `\n`) + `" holds '\n', which a Slurm job script cannot name; choose a path without control characters or backslashes`; err == nil || err.Error() != strings.ReplaceAll(want, "{Out}", "out") {
		t.Errorf("got %v\nwant %s", err, want)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("the folder was written")
	}
}

// The Slurm numbers of a sweep file or its flags are bounded.
func TestSafetySweepNumbers(t *testing.T) {
	for _, c := range []struct{ slurm, want string }{
		{"{gpus: 1000000000}", "slurm.gpus: must be from 0 to 64 (a node's), got 1000000000"},
		{"{cpus: 1000000000}", "slurm.cpus: must be from 1 to 4096 (a node's), got 1000000000"},
		{"{max_parallel: 2000000000}", "slurm.max_parallel: must be from 0 (no limit) to the number of runs, got 2000000000"},
		{"{partition: 'gpu#x'}", `slurm.partition: must not contain spaces, quotes or shell characters, got "gpu#x"`},
	} {
		p := sweepFixture(t, "name: tiny\nbase: base.yaml\ngrid: {model.dim: [2, 4]}\nslurm: "+c.slurm+"\n")
		if _, err := LoadSweep(p); err == nil || err.Error() != p+": "+c.want {
			t.Errorf("%s:\n got %v\nwant %s: %s", c.slurm, err, p, c.want)
		}
	}
	p := sweepFixture(t, "name: tiny\nbase: base.yaml\ngrid: {model.dim: [2, 4]}\nslurm: {max_parallel: 3}\n")
	s, err := LoadSweep(p)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "sw")
	_, err = s.Emit(out, EmitOptions{Slurm: true})
	if want := p + ": slurm.max_parallel 3 is more than the sweep's 2 runs; set it (or --max-parallel) to at most 2, or to 0 for no limit"; err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

// sweep --emit slurm --force replaces the sweep folder only when every
// file that looks like jeirt's is (a table with the table's header, a
// train.log that starts as runOne starts it, a Slurm log of the folder's
// jobs), and collect does not write over a user's sweep.csv.
func TestSafetySweepForceKeepsLookalikes(t *testing.T) {
	s, err := LoadSweep(sweepFixture(t, "name: tiny\nbase: base.yaml\ngrid: {model.dim: [2, 4]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "sw")
	if _, err := s.Emit(out, EmitOptions{Slurm: true}); err != nil {
		t.Fatal(err)
	}
	jeirts := map[string]string{
		"runs/000/slurm-100_0.out": "sweep: run 000 (job 100, attempt 1) on n1: # run 000\n",
		"runs/001/train.log":       trainLogBanner("001") + " (jeirt test)\n",
	}
	users := map[string]string{
		SweepTableFile:             "my notes\n",
		"runs/000/train.log":       "my notes\n",
		"runs/001/slurm-7_1.out":   "my notes\n",
		"runs/001/slurm-100_0.out": "sweep: run 000 (job 100)\n", // run 000's banner in run 001
	}
	for _, m := range []map[string]string{jeirts, users} {
		for name, text := range m {
			os.WriteFile(filepath.Join(out, name), []byte(text), 0o644)
		}
	}
	var buf strings.Builder
	err = Collect(out, "", &buf)
	if want := filepath.Join(out, SweepTableFile) + " is not a table jeirt wrote (its first line is not a sweep table's header), and jeirt replaces only what it wrote; move it aside, or write the table elsewhere with --out FILE"; err == nil || err.Error() != want {
		t.Errorf("collect over a user's sweep.csv:\n got %v\nwant %s", err, want)
	}
	_, err = s.Emit(out, EmitOptions{Slurm: true, Replace: true})
	want := out + " holds files jeirt did not write (sweep.csv, runs/000/train.log, runs/001/slurm-100_0.out, runs/001/slurm-7_1.out), though their names look like jeirt's; force replaces only what jeirt wrote: move them out of the folder or choose another out"
	if err == nil || err.Error() != want {
		t.Errorf("--force:\n got %v\nwant %s", err, want)
	}
	for _, m := range []map[string]string{jeirts, users} {
		for name, text := range m {
			if b, err := os.ReadFile(filepath.Join(out, name)); err != nil || string(b) != text {
				t.Errorf("%s: %q %v", name, b, err)
			}
		}
	}
	for name := range users {
		os.Remove(filepath.Join(out, name))
	}
	if _, err := s.Emit(out, EmitOptions{Slurm: true, Replace: true}); err != nil {
		t.Fatal(err)
	}
	for name := range jeirts {
		if _, err := os.Stat(filepath.Join(out, name)); err == nil {
			t.Errorf("%s was kept by --force", name)
		}
	}
}

// Re-emitting into a copy of a sweep folder (cp -a) does not write over
// the user's edited sweep.sbatch there.
func TestSafetySweepReemitIntoACopy(t *testing.T) {
	s, err := LoadSweep(sweepFixture(t, "name: tiny\nbase: base.yaml\ngrid: {model.dim: [2, 4]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	orig, cp := filepath.Join(root, "a"), filepath.Join(root, "b")
	if _, err := s.Emit(orig, EmitOptions{Slurm: true}); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command("cp", "-a", orig, cp).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v %s", err, b)
	}
	script := filepath.Join(cp, SweepScriptFile)
	edited := []byte("#!/bin/bash\n# my own script\n")
	os.WriteFile(script, edited, 0o755)
	_, err = s.Emit(cp, EmitOptions{Slurm: true})
	if err == nil || !strings.HasPrefix(err.Error(), script+" differs from what jeirt writes there, and jeirt replaces only what it wrote: "+cp+": its .jeirt-output.json was written for "+orig+" and has been copied here") {
		t.Errorf("re-emit into a copy: %v", err)
	}
	if b, _ := os.ReadFile(script); string(b) != string(edited) {
		t.Errorf("the copy's edited script was rewritten:\n%s", b)
	}
}

// sweep.json read back by collect names only runs/NUMBER folders, each
// once.
func TestSafetySweepManifest(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, sweep.ManifestFile)
	for _, c := range []struct{ runs, want string }{
		{`[{"id":"000","dir":"runs/000"},{"id":"000","dir":"runs/000"}]`, `field runs[1]: id "000", dir "runs/000": want a run number, once, in runs/NUMBER; emit the sweep again`},
		{`[{"id":"000","dir":"runs/001"}]`, `field runs[0]: id "000", dir "runs/001": want a run number, once, in runs/NUMBER; emit the sweep again`},
		{`[{"id":"x\n1","dir":"runs/x\n1"}]`, `field runs[0]: id "x\n1", dir "runs/x\n1": want a run number, once, in runs/NUMBER; emit the sweep again`},
		{`[{"id":"000","dir":"../../etc"}]`, `run 1's dir "../../etc" is not a folder inside the sweep folder`},
	} {
		os.WriteFile(p, []byte(`{"format":"jeirt-sweep","format_version":1,"keys":[],"runs":`+c.runs+`}`), 0o644)
		if _, err := sweep.ReadManifest(dir); err == nil || err.Error() != p+": "+c.want {
			t.Errorf("%s:\n got %v\nwant %s: %s", c.runs, err, p, c.want)
		}
	}
	var b strings.Builder
	b.WriteString(`{"format":"jeirt-sweep","format_version":1,"runs":[`)
	for k := range sweep.MaxRuns + 1 {
		if k > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{}`)
	}
	b.WriteString("]}")
	os.WriteFile(p, []byte(b.String()), 0o644)
	if _, err := sweep.ReadManifest(dir); err == nil || err.Error() != p+": field runs: 100001 runs, more than a sweep may have (100000); emit the sweep again" {
		t.Errorf("a manifest of 100001 runs: %v", err)
	}
}
