package slurm

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jeirt/jeirt/model/fileio"
)

// RecordFile is the record of a job folder's submissions.
const RecordFile = "slurm.json"

// Array is what a job folder submits: Tasks array tasks 0..Tasks-1 of
// Script, and optionally a job After that runs once every task succeeded.
// It is written to DIR/slurm.json with the jobs submitted so far.
type Array struct {
	Format  string `json:"format"` // "jeirt-slurm"
	Version int    `json:"format_version"`
	// Folder is the job folder the record was written for (absolute,
	// symlinks resolved): in a copy of the folder it names the original.
	Folder string `json:"folder,omitempty"`
	What   string `json:"what"`   // what a task is, for messages: "run", "shard"
	Script string `json:"script"` // the array's sbatch script, relative to the folder
	Tasks  int    `json:"tasks"`
	Limit  int    `json:"limit,omitempty"` // at most this many tasks at once (--array=...%Limit)
	// Done is the file (relative to the folder) whose presence says task
	// {id} finished, {id} being the task's number padded to Width digits;
	// Check is how it is read: "file" (it exists) or "checkpoint" (a
	// checkpoint folder whose metrics.json does not say interrupted).
	Done  string `json:"done"`
	Width int    `json:"width"`
	Check string `json:"check"`
	// Output is the script's --output pattern (Slurm's %A, %a, %j, %x),
	// absolute, where a task's log is read from when scontrol no longer
	// knows the job.
	Output string `json:"output"`
	After  *After `json:"after,omitempty"`
	Jobs   []Job  `json:"jobs"` // the array's submissions, oldest first
}

// After is a job that depends on the array (sbatch --dependency=afterok).
type After struct {
	What   string `json:"what"` // "merge"
	Script string `json:"script"`
	Done   string `json:"done"`   // its output, relative to the folder
	Output string `json:"output"` // its --output pattern
	Jobs   []Job  `json:"jobs"`
}

// Job is one sbatch submission.
type Job struct {
	ID         string `json:"id"`
	Tasks      []int  `json:"-"`               // the array tasks it ran (nil for After)
	Array      string `json:"array,omitempty"` // Tasks as sbatch's --array list, 0-3,7, in the file
	Dependency string `json:"dependency,omitempty"`
	Submitted  string `json:"submitted"`
}

const (
	recordFormat  = "jeirt-slurm"
	recordVersion = 2 // 2 adds folder
)

// ID is task k's name: its number padded to a.Width digits.
func (a *Array) ID(k int) string { return fmt.Sprintf("%0*d", a.Width, k) }

// DonePath is the file that says task k finished, under dir.
func (a *Array) DonePath(dir string, k int) string {
	return filepath.Join(dir, strings.ReplaceAll(a.Done, "{id}", a.ID(k)))
}

func (a *Array) write(dir string) error {
	a.Format, a.Version = recordFormat, recordVersion
	if real, err := fileio.ResolvePath(dir); err == nil {
		a.Folder = real
	}
	for i := range a.Jobs {
		a.Jobs[i].Array = FormatTasks(a.Jobs[i].Tasks)
	}
	b, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		return err
	}
	return fileio.WriteFileAtomic(filepath.Join(dir, RecordFile), func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}

// FormatTasks writes task numbers as Slurm's --array list: 0-3,7.
func FormatTasks(tasks []int) string {
	var parts []string
	for i := 0; i < len(tasks); {
		j := i
		for j+1 < len(tasks) && tasks[j+1] == tasks[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(tasks[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", tasks[i], tasks[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// parseTasks reads an --array list as scontrol prints it (0-3,7 or 2-5%2):
// task numbers below n, each at most once, at most n of them.
func parseTasks(s string, n int) ([]int, bool) {
	s, _, _ = strings.Cut(s, "%")
	var out []int
	seen := map[int]bool{}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 || a >= n {
			return nil, false
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a || b >= n {
				return nil, false
			}
		}
		if len(out)+(b-a+1) > n {
			return nil, false
		}
		for k := a; k <= b; k++ {
			if seen[k] {
				return nil, false
			}
			seen[k] = true
			out = append(out, k)
		}
	}
	return out, true
}

func now() string { return time.Now().UTC().Format(time.RFC3339) }
