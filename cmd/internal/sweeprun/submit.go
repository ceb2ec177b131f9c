package sweeprun

import (
	"context"
	"fmt"
	"io"

	"github.com/jeirt/jeirt/cmd/internal/slurm"
	"github.com/jeirt/jeirt/train/sweep"
)

// SlurmArray is the job array of the n-run sweep in the folder dir, as
// package slurm submits and follows it: task k trains runs/k/ and is done
// when runs/k/checkpoint holds a finished run.
func (s *Sweep) SlurmArray(dir string, n int) *slurm.Array {
	width := len(RunID(0, n))
	return &slurm.Array{What: "run", Script: SweepScriptFile, Tasks: n, Limit: s.Slurm.MaxParallel,
		Done: "runs/{id}/checkpoint", Width: width, Check: "checkpoint", Output: sweepOutput(dir, width)}
}

// sweepOutput is the --output pattern of the sweep script: each task logs
// into its own run folder (%Na pads the task id to N digits).
func sweepOutput(dir string, width int) string {
	return fmt.Sprintf("%s/runs/%%%da/slurm-%%A_%%a.out", slurm.Pattern(dir), width)
}

// submit submits the emitted sweep in dir (sbatch --parsable) and records
// the job in dir/slurm.json.
func (s *Sweep) submit(ctx context.Context, dir string, n int, w io.Writer) error {
	if err := slurm.Submit(ctx, dir, s.SlurmArray(dir, n), w); err != nil {
		return err
	}
	fmt.Fprintf(w, "follow: jeirt sweep status %s\nthen:   jeirt sweep collect %s\n", slurm.Arg(dir), slurm.Arg(dir))
	return nil
}

// printLeft says, under collect's table of a sweep not finished yet, how
// many runs are left and where to see them.
func printLeft(dir string, tab *sweep.Table, w io.Writer) {
	left := len(tab.Rows) - tab.Finished()
	if left == 0 {
		return
	}
	if _, err := slurm.ReadRecord(dir); err == nil {
		fmt.Fprintf(w, "%d of %d runs left: jeirt sweep status %s says which are queued, running or failed\n", left, len(tab.Rows), slurm.Arg(dir))
		return
	}
	fmt.Fprintf(w, "%d of %d runs left\n", left, len(tab.Rows))
}
