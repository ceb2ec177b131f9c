package slurm

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/limits"
)

// The states of a task.
const (
	Pending = "pending" // queued (Reason says why it waits)
	Running = "running"
	Done    = "done"    // its output is complete
	Failed  = "failed"  // it ended without its output (Reason says how)
	Missing = "missing" // never submitted, or Slurm forgot it and it left nothing
)

// Task is the state of one array task, or of the After job (Task -1).
type Task struct {
	Task   int
	Name   string // the task's id ("003"), or After.What
	State  string
	Job    string // the Slurm job of its last submission, 12_3
	Slurm  string // Slurm's state of that job, e.g. FAILED; "" when Slurm no longer knows it
	Reason string
}

// States reads dir's record and says where every task is: what Slurm says
// of its last submission (scontrol, or sacct where accounting runs), then
// the task's output and log. The After job comes last.
func States(ctx context.Context, dir string) (*Array, []Task, error) {
	a, err := ReadRecord(dir)
	if err != nil {
		return nil, nil, err
	}
	known := map[string][]jobInfo{}
	ask := func(id string) ([]jobInfo, error) {
		if j, ok := known[id]; ok {
			return j, nil
		}
		j, err := query(ctx, id)
		known[id] = j
		return j, err
	}
	last := make([]string, a.Tasks) // the job that last ran each task
	for _, j := range a.Jobs {
		for _, k := range j.Tasks {
			last[k] = j.ID
		}
	}
	tasks := make([]Task, 0, a.Tasks+1)
	real, err := fileio.ResolvePath(dir)
	if err != nil {
		return nil, nil, err
	}
	for k := 0; k < a.Tasks; k++ {
		if k%1024 == 0 && ctx.Err() != nil {
			return nil, nil, ctx.Err() // a large array stops at Ctrl-C
		}
		t := Task{Task: k, Name: a.ID(k)}
		var info *jobInfo
		if last[k] != "" {
			t.Job = last[k] + "_" + strconv.Itoa(k)
			jobs, err := ask(last[k])
			if err != nil {
				return nil, nil, err
			}
			info = findTask(jobs, k)
		}
		done := a.done(dir, real, k)
		t.State, t.Reason = judge(info, done, inside(real, a.logOf(info, last[k], k)))
		if info != nil {
			t.Slurm = info.State
		}
		tasks = append(tasks, t)
	}
	if a.After != nil {
		t := Task{Task: -1, Name: a.After.What}
		var info *jobInfo
		if n := len(a.After.Jobs); n > 0 {
			t.Job = a.After.Jobs[n-1].ID
			jobs, err := ask(t.Job)
			if err != nil {
				return nil, nil, err
			}
			if len(jobs) > 0 {
				info = &jobs[0]
				t.Slurm = info.State
			}
		}
		fi, err := os.Lstat(filepath.Join(dir, a.After.Done))
		if err == nil && !fi.Mode().IsRegular() {
			err = os.ErrNotExist
		}
		logPath := ""
		if info != nil && info.StdOut != "" {
			logPath = expand(info.StdOut, t.Job, "", t.Job)
		} else if t.Job != "" {
			logPath = expand(a.After.Output, t.Job, "", t.Job)
		}
		t.State, t.Reason = judge(info, err == nil, inside(real, logPath))
		if t.State == Pending && info != nil && info.Reason == "DependencyNeverSatisfied" {
			t.Reason = "waits on a task that failed: resubmit the failed tasks"
		}
		tasks = append(tasks, t)
	}
	return a, tasks, nil
}

// inside is the log p when it lies in the job folder real (its links
// resolved), else "": a log is read only from the folder's own files,
// whatever scontrol says of a job.
func inside(real, p string) string {
	if p == "" {
		return ""
	}
	r, err := fileio.ResolvePath(p)
	if err != nil || !strings.HasPrefix(r, real+string(filepath.Separator)) {
		return ""
	}
	return p
}

func findTask(jobs []jobInfo, k int) *jobInfo {
	for i := range jobs {
		for _, t := range jobs[i].Tasks {
			if t == k {
				return &jobs[i]
			}
		}
	}
	return nil
}

// done reports whether task k's output is complete: a file or folder of
// the job folder itself (a link out of it does not count); real is the
// folder with its links resolved.
func (a *Array) done(dir, real string, k int) bool {
	p := a.DonePath(dir, k)
	if fi, err := os.Lstat(p); err != nil || fi.Mode()&os.ModeSymlink != 0 {
		return false
	}
	// Nor through a linked folder on the way (runs/003 -> elsewhere).
	if r, err := fileio.ResolvePath(p); err != nil || !strings.HasPrefix(r, real+string(filepath.Separator)) {
		return false
	}
	if a.Check == "checkpoint" {
		m, err := checkpoint.ReadRunMetrics(p)
		return err == nil && !m.Interrupted
	}
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// logOf is the log file of task k of array job id: the one Slurm names,
// else the script's --output pattern expanded (the newest match).
func (a *Array) logOf(info *jobInfo, id string, k int) string {
	if id == "" {
		return ""
	}
	// scontrol expands %A and %a but not their padded forms (%3a).
	pattern, jobID := a.Output, "*"
	if info != nil && info.StdOut != "" && len(info.Tasks) == 1 {
		pattern, jobID = info.StdOut, info.JobID
	}
	return expand(pattern, id, strconv.Itoa(k), jobID)
}

// expand fills in Slurm's filename pattern: %A the array's job id, %a the
// task (%3a padded), %j the job id, %x the job name (any), %% a percent.
// What is not known becomes a glob, and the newest match is returned.
func expand(pattern, arrayID, task, jobID string) string {
	var b strings.Builder
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if c != '%' || i+1 == len(pattern) {
			b.WriteString(globEscape(string(c)))
			continue
		}
		j := i + 1
		for j < len(pattern) && pattern[j] >= '0' && pattern[j] <= '9' {
			j++
		}
		if j == len(pattern) {
			b.WriteString(globEscape(pattern[i:]))
			break
		}
		width, _ := strconv.Atoi(pattern[i+1 : j])
		v := "*"
		switch pattern[j] {
		case 'A':
			v = arrayID
		case 'a':
			v = task
		case 'j':
			v = jobID
		case '%':
			v = "%"
		}
		if n, err := strconv.Atoi(v); err == nil && width > 0 {
			v = fmt.Sprintf("%0*d", width, n)
		}
		if v == "" || v == "*" {
			b.WriteString("*")
		} else {
			b.WriteString(globEscape(v))
		}
		i = j
	}
	p := b.String()
	matches, _ := filepath.Glob(p)
	var newest string
	var at int64
	for _, m := range matches {
		if st, err := os.Stat(m); err == nil && (newest == "" || st.ModTime().UnixNano() > at) {
			newest, at = m, st.ModTime().UnixNano()
		}
	}
	return newest
}

// judge gives a task's state and reason from what Slurm says (nil: it does
// not know the job), whether its output is complete, and its log.
func judge(info *jobInfo, done bool, logPath string) (state, reason string) {
	slurm := ""
	if info != nil {
		slurm = info.State
	}
	switch slurm {
	case "PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD", "SUSPENDED":
		if info.Reason == "None" {
			return Pending, ""
		}
		return Pending, info.Reason
	case "RUNNING", "COMPLETING", "STAGE_OUT", "SIGNALING", "RESIZING":
		return Running, ""
	}
	if done {
		return Done, ""
	}
	line := lastError(logPath)
	switch {
	case slurm == "COMPLETED":
		reason = "the job ended without error but its output is missing or incomplete"
	case slurm != "":
		reason = slurm
		if info.ExitCode != "" && info.ExitCode != "0:0" {
			reason += " (exit " + info.ExitCode + ")"
		}
	case logPath != "":
		reason = "no longer known to Slurm"
	default:
		return Missing, "not submitted yet, or Slurm no longer knows it and it left no log"
	}
	if line != "" {
		reason += ": " + line
	}
	return Failed, reason
}

// lastError is the line of a task's log that says why it stopped: the last
// line with "error:" (Slurm's own, "slurmstepd: error: *** JOB 12 ON node
// CANCELLED ***", among them) or starting "jeirt:" or "interrupted:" (jeirt's
// errors and a stopped training's), else the last line.
func lastError(path string) string {
	if path == "" {
		return ""
	}
	// Only a plain file is read: a FIFO or a device would block or never end.
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return ""
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return ""
	}
	defer f.Close()
	var last, lastErr string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		last = line
		l := strings.ToLower(line)
		if strings.Contains(l, "error:") || strings.HasPrefix(l, "jeirt:") || strings.HasPrefix(l, "interrupted:") {
			lastErr = line
		}
	}
	if lastErr != "" {
		last = lastErr
	}
	return limits.Clip(last)
}

// Status prints the state of every task of the job folder dir on w
// (jeirt sweep status).
func Status(ctx context.Context, dir string, w io.Writer) error {
	a, tasks, err := States(ctx, dir)
	if err != nil {
		return err
	}
	rows := [][]string{{a.What, "state", "job", "reason"}}
	count := map[string]int{}
	for _, t := range tasks {
		rows = append(rows, []string{t.Name, t.State, t.Job, t.Reason})
		if t.Task >= 0 {
			count[t.State]++
		}
	}
	printAligned(w, rows)
	var parts []string
	for _, s := range []string{Done, Running, Pending, Failed, Missing} {
		if count[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", count[s], s))
		}
	}
	fmt.Fprintf(w, "%d %ss: %s\n", a.Tasks, a.What, strings.Join(parts, ", "))
	if redo := toResubmit(a, tasks); len(redo) > 0 || afterToResubmit(a, tasks) {
		fmt.Fprintf(w, "resubmit the failed and missing ones: jeirt sweep resubmit %s\n", Arg(dir))
	}
	return nil
}

// printAligned writes rows as columns two spaces apart.
func printAligned(w io.Writer, rows [][]string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
}
