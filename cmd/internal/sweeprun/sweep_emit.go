package sweeprun

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jeirt/jeirt/cmd/internal/slurm"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/train/sweep"
)

// Files written into a sweep folder.
const (
	SweepManifestFile = sweep.ManifestFile
	SweepScriptFile   = "sweep.sbatch"
	SweepTableFile    = "sweep.csv"
)

// SweepLaterFiles are the files jeirt adds to a sweep folder after Emit
// (path.Match patterns): the runs' checkpoints and logs, the table and a
// re-emitted manifest or script. A --force replace counts them as jeirt's.
var SweepLaterFiles = []string{SweepManifestFile, SweepScriptFile, SweepTableFile, slurm.RecordFile,
	"runs/*/checkpoint", "runs/*/train.log", "runs/*/slurm-*.out"}

// EmitOptions control Emit.
type EmitOptions struct {
	Slurm   bool   // also write the Slurm job-array script sweep.sbatch
	Replace bool   // replace a sweep folder that holds a different sweep
	Command string // the command line that produced the folder, for comments
}

// Emit writes the sweep folder dir: sweep.json, runs/NNN/config.yaml for
// every run and, with opt.Slurm, sweep.sbatch. A new folder appears whole
// (built aside and renamed). When dir already holds the same runs (every
// config.yaml identical), their results are kept and only sweep.json and the
// script are rewritten, so an interrupted sweep resumes; when it holds a
// different sweep, Emit fails unless opt.Replace.
func (s *Sweep) Emit(dir string, opt EmitOptions) ([]SweepRun, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if opt.Slurm {
		if err := slurm.CheckScriptPath("Out", abs); err != nil {
			return nil, err
		}
	}
	runs, err := s.Runs(abs)
	if err != nil {
		return nil, err
	}
	if opt.Slurm && s.Slurm.MaxParallel > len(runs) {
		return nil, fmt.Errorf("%s: slurm.max_parallel %d is more than the sweep's %d runs; set it (or --max-parallel) to at most %d, or to 0 for no limit", s.Source, s.Slurm.MaxParallel, len(runs), len(runs))
	}
	files := map[string][]byte{}
	for _, r := range runs {
		b, err := RunConfigYAML(r, s.Source)
		if err != nil {
			return nil, err
		}
		files[filepath.Join("runs", r.ID, "config.yaml")] = b
	}
	top := map[string][]byte{}
	man, err := json.MarshalIndent(s.Manifest(runs), "", "  ")
	if err != nil {
		return nil, err
	}
	top[sweep.ManifestFile] = append(man, '\n')
	if opt.Slurm {
		top[SweepScriptFile] = []byte(s.SlurmScript(abs, len(runs), opt.Command))
	}

	replace := opt.Replace
	if entries, err := os.ReadDir(abs); err == nil && len(entries) == 0 {
		replace = true // an empty folder made beforehand
	}
	if _, err := os.Stat(abs); err == nil && !replace {
		for _, name := range slices.Sorted(maps.Keys(files)) {
			old, err := os.ReadFile(filepath.Join(abs, name))
			if err != nil {
				return nil, model.FieldErrorf("Out", "%s exists and is not this sweep's folder (no %s); choose another {Out} or pass {Force} to replace it", dir, name)
			}
			if !bytes.Equal(old, files[name]) {
				return nil, model.FieldErrorf("Out", "%s already holds a different sweep (%s differs); choose another {Out} or pass {Force} to replace it", dir, name)
			}
		}
		for _, name := range slices.Sorted(maps.Keys(top)) {
			if err := checkRewrite(dir, abs, name, top[name]); err != nil {
				return nil, err
			}
		}
		for _, name := range slices.Sorted(maps.Keys(top)) {
			if err := writeBytesAtomic(filepath.Join(abs, name), top[name]); err != nil {
				return nil, err
			}
		}
		return runs, nil
	}
	if replace {
		if err := checkReplace(dir, abs); err != nil {
			return nil, err
		}
	}
	err = fileio.WriteDirAtomicLater(abs, replace, SweepLaterFiles, func(tmp string) error {
		for name, b := range files {
			if err := os.MkdirAll(filepath.Join(tmp, filepath.Dir(name)), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(tmp, name), b, 0o644); err != nil {
				return err
			}
		}
		for name, b := range top {
			mode := os.FileMode(0o644)
			if name == SweepScriptFile {
				mode = 0o755
			}
			if err := os.WriteFile(filepath.Join(tmp, name), b, mode); err != nil {
				return err
			}
		}
		return nil
	})
	return runs, err
}

func writeBytesAtomic(path string, b []byte) error {
	return fileio.WriteFileAtomic(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// SlurmScript is the job-array script of an n-run sweep whose folder is the
// absolute path dir. Array task k trains runs/NNN/config.yaml (NNN = k,
// zero-padded) and writes only runs/NNN/. Setting SLURM_ARRAY_TASK_ID runs
// one task by hand; SWEEP_DIR and JEIRT override the folder and binary.
func (s *Sweep) SlurmScript(dir string, n int, command string) string {
	sl := s.Slurm
	width := len(RunID(0, n))
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("#!/bin/bash\n")
	w("# jeirt sweep %s: %d runs of jeirt train, one per array task.\n", s.Name, n)
	if command != "" {
		w("# Written by: %s\n", slurm.Comment(command))
	}
	w("# Submit:           sbatch %s\n", slurm.Quote(filepath.Join(dir, SweepScriptFile)))
	w("# Table of results: jeirt sweep collect %s\n", slurm.Quote(dir))
	w("# One task by hand: SLURM_ARRAY_TASK_ID=0 bash %s\n", slurm.Quote(filepath.Join(dir, SweepScriptFile)))
	w("#SBATCH --job-name=%s\n", s.Name)
	if sl.MaxParallel > 0 {
		w("#SBATCH --array=0-%d%%%d\n", n-1, sl.MaxParallel)
	} else {
		w("#SBATCH --array=0-%d\n", n-1)
	}
	for _, o := range []struct{ flag, v string }{{"partition", sl.Partition}, {"account", sl.Account}, {"qos", sl.QOS}, {"constraint", sl.Constraint}} {
		if o.v != "" {
			w("#SBATCH --%s=%s\n", o.flag, o.v)
		}
	}
	if sl.GPUs > 0 {
		w("#SBATCH --gres=gpu:%d\n", sl.GPUs)
	}
	w("#SBATCH --nodes=1\n#SBATCH --ntasks=1\n")
	w("#SBATCH --cpus-per-task=%d\n", sl.CPUs)
	if sl.Mem != "" {
		w("#SBATCH --mem=%s\n", sl.Mem)
	}
	if sl.Time != "" {
		w("#SBATCH --time=%s\n", sl.Time)
	}
	// A preempted task is queued again, and its log keeps both attempts.
	w("#SBATCH --output=%s\n#SBATCH --requeue\n#SBATCH --open-mode=append\n", slurm.Directive(sweepOutput(dir, width)))
	w("set -euo pipefail\n\n")
	w("# The Go runtime uses the CPUs Slurm gave the task, not the whole node's.\n")
	w("if [[ -n \"${SLURM_CPUS_PER_TASK:-}\" ]]; then export GOMAXPROCS=\"$SLURM_CPUS_PER_TASK\"; fi\n")
	// Quoted words, never expanded: a folder named x$(cmd) runs nothing.
	w("SWEEP_DIR=\"${SWEEP_DIR:-}\"\nif [[ -z \"$SWEEP_DIR\" ]]; then SWEEP_DIR=%s; fi\n", slurm.Quote(dir))
	w("JEIRT=\"${JEIRT:-}\"\nif [[ -z \"$JEIRT\" ]]; then JEIRT=%s; fi\n", slurm.Quote(sl.Jeirt))
	w("N_RUNS=%d\n", n)
	w("task=\"${SLURM_ARRAY_TASK_ID:?is not set: submit with sbatch, or set it to run one task by hand}\"\n")
	w("if ! [[ \"$task\" =~ ^[0-9]+$ ]] || (( 10#$task >= N_RUNS )); then\n")
	w("  echo \"sweep: SLURM_ARRAY_TASK_ID=$task is not a run of this sweep (0 to $((N_RUNS - 1)))\" >&2\n  exit 2\nfi\n")
	w("run=$(printf '%%0%dd' \"$((10#$task))\")\n", width)
	w("run_dir=\"$SWEEP_DIR/runs/$run\"\n")
	w("metrics=\"$run_dir/checkpoint/metrics.json\"\n")
	w("if [[ -f \"$metrics\" && -z \"${JEIRT_SWEEP_FORCE:-}\" ]] && ! grep -q '\"interrupted\": true' \"$metrics\"; then\n")
	w("  echo \"sweep: run $run is already done (set JEIRT_SWEEP_FORCE=1 to train it again)\" >&2\n  exit 0\nfi\n")
	if len(sl.Setup) > 0 {
		w("\n# setup (slurm.setup in the sweep file)\n")
		for _, line := range sl.Setup {
			w("%s\n", line)
		}
		w("\n")
	}
	w("echo \"sweep: run $run (job ${SLURM_JOB_ID:-none}, attempt $((${SLURM_RESTART_COUNT:-0} + 1))) on $(hostname): $(sed -n 1p \"$run_dir/config.yaml\")\" >&2\n")
	w("cd \"$run_dir\"\n")
	var extra string
	if !s.Baselines {
		extra = " --no-baselines"
	}
	w("exec \"$JEIRT\" train --config \"$run_dir/config.yaml\" --force%s\n", extra)
	return b.String()
}
