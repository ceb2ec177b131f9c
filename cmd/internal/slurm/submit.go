package slurm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/limits"
)

// Submit submits every task of a, then a.After behind them
// (--dependency=afterok on the array), and records the jobs in dir's
// slurm.json. A folder whose earlier jobs still have tasks queued or
// running is refused: resubmit the failed ones instead.
func Submit(ctx context.Context, dir string, a *Array, w io.Writer) error {
	if err := CheckIdle(ctx, dir); err != nil {
		return err
	}
	if old, err := ReadRecord(dir); err == nil && len(old.Jobs) > 0 {
		// Earlier submissions stay in the record.
		a.Jobs = old.Jobs
		if a.After != nil && old.After != nil {
			a.After.Jobs = old.After.Jobs
		}
	}
	all := make([]int, a.Tasks)
	for k := range all {
		all[k] = k
	}
	return submit(ctx, dir, a, all, nil, w)
}

// CheckIdle refuses the job folder dir when jeirt submitted jobs from it
// that still have a task queued or running (nil when dir has no record):
// a new submission, or a folder written over it, would run beside them.
func CheckIdle(ctx context.Context, dir string) error {
	if _, err := os.Lstat(filepath.Join(dir, RecordFile)); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	old, err := ReadRecord(dir)
	var copied *CopyError
	if errors.As(err, &copied) {
		return nil // a copy's jobs are its original's
	}
	if err != nil {
		return fmt.Errorf("%w. The folder's jobs cannot be checked, so it is not replaced: once none of them is queued or running (squeue --me), remove %s and emit again", err, RecordFile)
	}
	if len(old.Jobs) == 0 {
		return nil
	}
	_, tasks, err := States(ctx, dir)
	if err != nil {
		return err
	}
	for _, t := range tasks {
		if t.State == Pending || t.State == Running {
			return fmt.Errorf("%s: %s %s of job %s is still %s; see jeirt sweep status %s, and resubmit the failed tasks with jeirt sweep resubmit %s",
				dir, old.What, t.Name, t.Job, t.State, Arg(dir), Arg(dir))
		}
	}
	return nil
}

// submit submits tasks of a as one array (all of them: the script's own
// --array) and, when a.After is set and after is not nil or tasks is the
// whole array, the After job depending on it.
func submit(ctx context.Context, dir string, a *Array, tasks []int, waitAlso []string, w io.Writer) error {
	var args []string
	if len(tasks) < a.Tasks {
		list := FormatTasks(tasks)
		if a.Limit > 0 {
			list += fmt.Sprintf("%%%d", a.Limit)
		}
		args = append(args, "--array="+list)
	}
	id, err := sbatch(ctx, dir, a.Script, args...)
	if err != nil {
		return err
	}
	a.Jobs = append(a.Jobs, Job{ID: id, Tasks: tasks, Submitted: now()})
	if err := a.write(dir); err != nil {
		return fmt.Errorf("job %s was submitted, but its record could not be written: %w", id, err)
	}
	fmt.Fprintf(w, "submitted job %s: %s %s of %s\n", id, plural(a.What, len(tasks)), FormatTasks(tasks), a.Script)
	if a.After == nil {
		return nil
	}
	dep := "afterok:" + id
	if len(waitAlso) > 0 {
		dep += ",afterany:" + strings.Join(waitAlso, ":")
	}
	return submitAfter(ctx, dir, a, dep, w)
}

func submitAfter(ctx context.Context, dir string, a *Array, dep string, w io.Writer) error {
	var args []string
	if dep != "" {
		args = append(args, "--dependency="+dep)
	}
	id, err := sbatch(ctx, dir, a.After.Script, args...)
	if err != nil {
		return err
	}
	a.After.Jobs = append(a.After.Jobs, Job{ID: id, Dependency: dep, Submitted: now()})
	if err := a.write(dir); err != nil {
		return fmt.Errorf("job %s was submitted, but its record could not be written: %w", id, err)
	}
	if dep == "" {
		fmt.Fprintf(w, "submitted job %s: the %s (%s)\n", id, a.After.What, a.After.Script)
	} else {
		fmt.Fprintf(w, "submitted job %s: the %s (%s), after %s\n", id, a.After.What, a.After.Script, dep)
	}
	return nil
}

func plural(what string, n int) string {
	if n == 1 {
		return what
	}
	return what + "s"
}

// toResubmit lists the tasks that failed or are missing.
func toResubmit(a *Array, tasks []Task) []int {
	var redo []int
	for _, t := range tasks {
		if t.Task >= 0 && (t.State == Failed || t.State == Missing) {
			redo = append(redo, t.Task)
		}
	}
	return redo
}

// afterToResubmit reports whether the After job should be submitted alone:
// every task is done and the After job failed or never ran.
func afterToResubmit(a *Array, tasks []Task) bool {
	if a.After == nil {
		return false
	}
	for _, t := range tasks {
		if t.Task >= 0 && t.State != Done {
			return false
		}
		if t.Task < 0 {
			return t.State == Failed || t.State == Missing
		}
	}
	return false
}

// Resubmit submits the failed and missing tasks of the job folder dir as
// a new array (--array=3,7), and queues the After job again behind it,
// cancelling its earlier submission that waits on the failed tasks
// (jeirt sweep resubmit).
func Resubmit(ctx context.Context, dir string, w io.Writer) error {
	a, tasks, err := States(ctx, dir)
	if err != nil {
		return err
	}
	redo := toResubmit(a, tasks)
	if len(redo) == 0 {
		if afterToResubmit(a, tasks) {
			return submitAfter(ctx, dir, a, "", w)
		}
		fmt.Fprintf(w, "nothing to resubmit: no %s of %s failed or is missing\n", a.What, dir)
		return nil
	}
	// Earlier jobs with tasks still queued or running: the After job waits
	// for them too.
	var active []string
	for _, t := range tasks {
		if t.Task >= 0 && (t.State == Pending || t.State == Running) {
			id, _, _ := strings.Cut(t.Job, "_")
			if !slices.Contains(active, id) {
				active = append(active, id)
			}
		}
	}
	if a.After != nil {
		if t := tasks[len(tasks)-1]; t.State == Pending && t.Job != "" {
			// It waits on the failed tasks' job, which can never succeed.
			if err := a.checkOwnJob(ctx, dir, t.Job); err != nil {
				return err
			}
			if _, err := run(ctx, dir, "scancel", t.Job); err != nil {
				return err
			}
			fmt.Fprintf(w, "cancelled job %s: the %s waiting on the failed %s\n", t.Job, a.After.What, plural(a.What, len(redo)))
		}
	}
	return submit(ctx, dir, a, redo, active, w)
}

// checkOwnJob makes sure that job id, which the record says is the After
// job, is one this folder submitted: Slurm must say that it runs the
// folder's After script. A record edited to name another job is refused
// rather than that job cancelled.
func (a *Array) checkOwnJob(ctx context.Context, dir, id string) error {
	jobs, err := scontrolJobs(ctx, id)
	if err != nil {
		return err
	}
	want, err := fileio.ResolvePath(filepath.Join(dir, a.After.Script))
	if err != nil {
		return err
	}
	got := ""
	if len(jobs) > 0 && jobs[0].Command != "" {
		c := jobs[0].Command
		if !filepath.IsAbs(c) && jobs[0].WorkDir != "" {
			c = filepath.Join(jobs[0].WorkDir, c) // as submitted from its folder
		}
		if filepath.IsAbs(c) {
			got, _ = fileio.ResolvePath(c)
		}
	}
	if got != want {
		return fmt.Errorf("%s: field after.jobs: job %s is not this folder's %s (Slurm says it runs %q, not %s); jeirt cancels only the jobs this folder submitted: cancel it by hand if it is yours (scancel %s), then resubmit",
			filepath.Join(dir, RecordFile), id, a.After.What, limits.Clip(jobs0Command(jobs)), want, id)
	}
	return nil
}

func jobs0Command(jobs []jobInfo) string {
	if len(jobs) == 0 {
		return ""
	}
	return jobs[0].Command
}
