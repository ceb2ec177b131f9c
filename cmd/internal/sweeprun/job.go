package sweeprun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/jeirt/jeirt/cmd/internal/slurm"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/interrupt"
	"github.com/jeirt/jeirt/model/progress"
	"github.com/jeirt/jeirt/train/sweep"
)

// Job is jeirt sweep: the sweep file Config emitted into the folder Out as a
// Slurm job array (Slurm), or run here one run after another and tabled.
type Job struct {
	Config, Out string
	Slurm       bool
	Submit      bool // with Slurm, submit the array (sbatch) and record its job id
	Force       bool // replace Out when it holds a different sweep
	Retrain     bool // run here: train finished runs again
	// Flags are the Slurm settings given on the command line, Changed
	// whether each was given (they override the file's).
	Flags   SlurmSettings
	Changed func(flag string) bool
	Command string // the command line, written into the script
	Version string
	Log     progress.Logf // progress lines (stderr)
}

// Run emits the sweep and, run here, trains it and writes its table; what
// the user acts on next is printed on w.
func (j Job) Run(ctx context.Context, w io.Writer) error {
	if j.Submit && !j.Slurm {
		return model.FieldErrorf("Submit", "sweep: {Submit} goes with {Emit} slurm")
	}
	s, err := LoadSweep(j.Config)
	if err != nil {
		return err
	}
	s.Slurm.Override(j.Flags, j.Changed)
	if err := s.Slurm.Validate("flags"); err != nil {
		return err
	}
	if j.Force && j.Slurm {
		// A sweep replaced while its jobs run would lose their record.
		if err := slurm.CheckIdle(ctx, j.Out); err != nil {
			return err
		}
	}
	runs, err := s.Emit(j.Out, EmitOptions{Slurm: j.Slurm, Replace: j.Force, Command: j.Command})
	if err != nil {
		return err
	}
	abs, _ := filepath.Abs(j.Out)
	j.Log.Printf("sweep: %d runs (%s) in %s", len(runs), strings.Join(s.Keys(), " x "), abs)
	if j.Slurm {
		script := filepath.Join(abs, SweepScriptFile)
		if j.Submit {
			fmt.Fprintf(w, "wrote %s (array 0-%d) and %d configs\n", script, len(runs)-1, len(runs))
			return s.submit(ctx, abs, len(runs), w)
		}
		fmt.Fprintf(w, "wrote %s (array 0-%d) and %d configs\nsubmit: sbatch %s\nthen:   jeirt sweep collect %s\n",
			script, len(runs)-1, len(runs), slurm.Arg(script), slurm.Arg(abs))
		return nil
	}
	runErr := s.RunLocal(ctx, abs, runs, SweepLocalOptions{Log: j.Log, Version: j.Version, Force: j.Retrain})
	var stopped *StoppedError
	if !errors.As(runErr, &stopped) {
		if err := Collect(abs, "", w); err != nil {
			return err
		}
		return runErr
	}
	// Interrupted: the runs kept are tabled (reads are cancelled with the
	// run, so the table's own are not), and the exit says what was kept.
	defer fileio.SetInputContext(context.WithoutCancel(ctx))()
	tab, err := collect(abs, "", w, stopped.ID)
	if err != nil {
		return err
	}
	return &interrupt.Error{Err: runErr, Kept: fmt.Sprintf("%s; %d of %d runs are finished in %s (the table above); the same command resumes the sweep",
		stopped.what(tab), tab.Finished(), len(tab.Rows), abs)}
}

// StoppedError is the error of a sweep run here that was interrupted
// during run ID, or before it started. It unwraps to context.Canceled.
type StoppedError struct {
	ID     string
	During bool // during run ID (else before it)
}

func (e *StoppedError) Error() string {
	if e.During {
		return "sweep: stopped during run " + e.ID
	}
	return "sweep: stopped before run " + e.ID
}

func (e *StoppedError) Unwrap() error { return context.Canceled }

// what says what became of the stopped run, as the table has it.
func (e *StoppedError) what(tab *sweep.Table) string {
	if !e.During {
		return "stopped before run " + e.ID
	}
	for _, r := range tab.Rows {
		if r.ID != e.ID {
			continue
		}
		switch r.Status {
		case "interrupted":
			return "run " + e.ID + " was interrupted; its best epoch is kept, marked interrupted"
		case "ok":
			return "run " + e.ID + " was interrupted after its training; its checkpoint is kept"
		}
	}
	return "run " + e.ID + " was interrupted before its first epoch finished; nothing of it is kept"
}

// Collect tables the runs of the sweep in dir into out (default
// dir/sweep.csv, the sweep's own table) and prints the table on w
// (jeirt sweep collect).
func Collect(dir, out string, w io.Writer) error {
	_, err := collect(dir, out, w, "")
	return err
}

// collect is Collect; the run stopped (an interrupted sweep's), when it has
// no checkpoint, is listed as "stopped", not "missing".
func collect(dir, out string, w io.Writer, stopped string) (*sweep.Table, error) {
	tab, err := sweep.Collect(dir)
	if err != nil {
		return nil, err
	}
	for k := range tab.Rows {
		if tab.Rows[k].ID == stopped && tab.Rows[k].Status == "missing" {
			tab.Rows[k].Status = "stopped"
		}
	}
	if out == "" {
		// Only into a sweep folder jeirt wrote: a folder holding a copied
		// sweep.json is not one.
		if err := fileio.CheckOwned(dir, SweepTableFile); err != nil {
			return nil, fmt.Errorf("%w; write the table elsewhere with --out FILE", err)
		}
		out = filepath.Join(dir, SweepTableFile)
		if _, err := os.Lstat(out); err == nil && !isSweepTable(out) {
			return nil, fmt.Errorf("%s is not a table jeirt wrote (its first line is not a sweep table's header), and jeirt replaces only what it wrote; move it aside, or write the table elsewhere with --out FILE", out)
		}
	}
	if err := tab.WriteCSVFile(out); err != nil {
		return nil, err
	}
	tab.Print(w)
	fmt.Fprintf(w, "wrote %s\n", out)
	printLeft(dir, tab, w)
	return tab, nil
}
