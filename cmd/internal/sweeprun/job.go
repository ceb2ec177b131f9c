package sweeprun

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/jeirt/jeirt/cmd/internal/slurm"
	"github.com/jeirt/jeirt/model"
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
	Log     model.Logf // progress lines (stderr)
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
			script, len(runs)-1, len(runs), script, abs)
		return nil
	}
	runErr := s.RunLocal(ctx, abs, runs, SweepLocalOptions{Log: j.Log, Version: j.Version, Force: j.Retrain})
	if err := Collect(abs, "", w); err != nil {
		return err
	}
	return runErr
}

// Collect tables the runs of the sweep in dir into out (default
// dir/sweep.csv, the sweep's own table) and prints the table on w
// (jeirt sweep collect).
func Collect(dir, out string, w io.Writer) error {
	tab, err := CollectSweep(dir)
	if err != nil {
		return err
	}
	if out == "" {
		out = filepath.Join(dir, SweepTableFile)
	}
	if err := tab.WriteCSVFile(out); err != nil {
		return err
	}
	tab.Print(w)
	fmt.Fprintf(w, "wrote %s\n", out)
	printLeft(dir, tab, w)
	return nil
}
