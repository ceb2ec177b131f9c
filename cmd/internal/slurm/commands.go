package slurm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
)

// run runs one of Slurm's client commands in dir and returns its standard
// output; a missing command or a failure is an error quoting its stderr.
func run(ctx context.Context, dir, name string, args ...string) (string, error) {
	if _, err := exec.LookPath(name); err != nil {
		return "", fmt.Errorf("%s not found on PATH: submitting and following jobs needs a Slurm cluster's client commands (sbatch, scontrol, scancel)", name)
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return stdout.String(), &commandError{cmd: name + " " + strings.Join(args, " "), msg: msg}
	}
	return stdout.String(), nil
}

type commandError struct{ cmd, msg string }

func (e *commandError) Error() string { return e.cmd + ": " + e.msg }

// sbatch submits script (relative to dir) with args and returns the job id
// (--parsable prints "id" or "id;cluster").
func sbatch(ctx context.Context, dir, script string, args ...string) (string, error) {
	out, err := run(ctx, dir, "sbatch", append(append([]string{"--parsable"}, args...), script)...)
	if err != nil {
		return "", err
	}
	id, _, _ := strings.Cut(strings.TrimSpace(out), ";")
	if id == "" || strings.ContainsAny(id, " \n") {
		return "", fmt.Errorf("sbatch %s: unexpected reply %q (want the job id)", script, strings.TrimSpace(out))
	}
	return id, nil
}

// jobInfo is what Slurm says of one job or array task.
type jobInfo struct {
	JobID, ArrayJobID string
	Tasks             []int // the array tasks this record stands for (pending ones may share one)
	State, Reason     string
	ExitCode          string
	StdOut            string
	Command, WorkDir  string // the job's script, as submitted, and its working folder
}

// fieldRE finds the start of each Key=value field of scontrol -o's line; a
// value runs to the next field, so that a path with spaces stays whole.
var fieldRE = regexp.MustCompile(`(?:^| )([A-Za-z][A-Za-z0-9_:/]*)=`)

// scontrolFields splits one line of scontrol -o into its fields (the first
// of a repeated key wins).
func scontrolFields(line string) map[string]string {
	f := map[string]string{}
	ms := fieldRE.FindAllStringSubmatchIndex(line, -1)
	for i, m := range ms {
		end := len(line)
		if i+1 < len(ms) {
			end = ms[i+1][0]
		}
		key := line[m[2]:m[3]]
		if _, seen := f[key]; !seen {
			f[key] = line[m[1]:end]
		}
	}
	return f
}

// scontrolJobs asks scontrol about job id (an array: every task). It
// returns nil when Slurm no longer knows the job (finished longer than
// MinJobAge ago).
func scontrolJobs(ctx context.Context, id string) ([]jobInfo, error) {
	out, err := run(ctx, "", "scontrol", "-o", "show", "job", id)
	if err != nil {
		var ce *commandError
		if errors.As(err, &ce) && strings.Contains(ce.msg, "Invalid job id") {
			return nil, nil
		}
		return nil, err
	}
	var jobs []jobInfo
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := scontrolFields(line)
		if f["JobId"] == "" {
			continue
		}
		j := jobInfo{JobID: f["JobId"], ArrayJobID: f["ArrayJobId"], State: f["JobState"], Reason: f["Reason"], ExitCode: f["ExitCode"], StdOut: f["StdOut"], Command: f["Command"], WorkDir: f["WorkDir"]}
		if t, ok := parseTasks(f["ArrayTaskId"], MaxTasks); ok {
			j.Tasks = t
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// sacctJobs asks the accounting database about job id, where there is one;
// nil where accounting is off.
func sacctJobs(ctx context.Context, id string) []jobInfo {
	out, err := run(ctx, "", "sacct", "-n", "-P", "-X", "-j", id, "-o", "JobID,State,ExitCode")
	if err != nil {
		return nil
	}
	var jobs []jobInfo
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		parts := strings.Split(line, "|")
		if len(parts) != 3 {
			continue
		}
		j := jobInfo{JobID: parts[0], ArrayJobID: id, State: strings.Fields(parts[1] + " ")[0], ExitCode: parts[2]}
		if _, task, ok := strings.Cut(parts[0], "_"); ok {
			if t, ok := parseTasks(strings.Trim(task, "[]"), MaxTasks); ok {
				j.Tasks = t
			}
		}
		jobs = append(jobs, j)
	}
	return jobs
}

// query is what Slurm knows of job id, from scontrol, else sacct.
func query(ctx context.Context, id string) ([]jobInfo, error) {
	jobs, err := scontrolJobs(ctx, id)
	if err != nil || jobs != nil {
		return jobs, err
	}
	return sacctJobs(ctx, id), nil
}
