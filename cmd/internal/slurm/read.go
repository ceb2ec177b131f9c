package slurm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/limits"
)

// A job folder's record is read back as untrusted input: it may have been
// edited, copied with the folder (cp -a) or written by hand, and what it
// names is what sbatch submits and scancel cancels. ReadRecord is its one
// reader; every field is checked against the bounds below and the folder it
// lies in before any of it is used.

// MaxTasks is the most tasks a record's array may have: Slurm's own
// ceiling on an array's size (MaxArraySize is at most 4,000,001) is above
// it, and no jeirt command emits more (a shard or a run per task).
const MaxTasks = 1_000_000

// maxRecordBytes bounds slurm.json: a record of MaxTasks tasks resubmitted
// one by one stays well under it.
const maxRecordBytes = 16 << 20

// maxSubmissions bounds the submissions a record lists (the array's and the
// After job's each).
const maxSubmissions = 10_000

// maxScriptBytes bounds a job script read for its #SBATCH --array line.
const maxScriptBytes = 1 << 20

var (
	jobIDRE  = regexp.MustCompile(`^[0-9]{1,19}$`)
	whatRE   = regexp.MustCompile(`^[a-z][a-z -]{0,31}$`)
	scriptRE = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}\.sbatch$`)
	arrayRE  = regexp.MustCompile(`(?m)^#SBATCH[ \t]+--array=0-([0-9]{1,9})(%[0-9]+)?[ \t]*$`)
)

// CopyError is a record read in a folder it was not written for: a copy
// of the job folder (cp -a) or the folder moved. Its jobs ran in, and
// write into, Folder.
type CopyError struct {
	Record, Dir, Folder string
}

func (e *CopyError) Error() string {
	return fmt.Sprintf("%s: folder: the record was written for %s, so %s is a copy of that job folder (or it was moved): the jobs it lists ran in %s and write there. "+
		"Follow them with jeirt sweep status %s; to run this copy's tasks, emit it again into a new folder (jeirt sweep --emit slurm --out NEW, or jeirt encode --emit slurm --out NEW)",
		e.Record, e.Folder, e.Dir, e.Folder, Arg(e.Folder))
}

// ReadRecord reads DIR/slurm.json and checks it against the folder: a
// record of another folder (a copy) is a *CopyError, any other field out
// of bounds an error naming the file and the field.
func ReadRecord(dir string) (*Array, error) {
	a, err := readRecord(dir)
	if err != nil {
		return nil, err
	}
	if err := a.checkFolder(dir); err != nil {
		return nil, err
	}
	return a, nil
}

// readRecord reads and checks DIR/slurm.json, whichever folder it was
// written for.
func readRecord(dir string) (*Array, error) {
	p := filepath.Join(dir, RecordFile)
	if fi, err := os.Lstat(p); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (a link or a special file); jeirt writes its record as a plain file: remove it and submit again", p)
	}
	raw, err := fileio.ReadInputFile(p, maxRecordBytes, "a Slurm record")
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, model.FieldErrorf("Submit", "%s was not submitted to Slurm by jeirt (no %s; submit with {Submit})", dir, RecordFile)
		}
		return nil, err
	}
	var a Array
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err = dec.Decode(&a)
	if err == nil && dec.More() {
		err = errors.New("more than one JSON value")
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %v; jeirt writes this record itself: emit and submit the folder again", p, err)
	}
	if a.Format != recordFormat {
		return nil, fmt.Errorf("%s: format %q, want %q", p, limits.Clip(a.Format), recordFormat)
	}
	if err := a.check(); err != nil {
		return nil, fmt.Errorf("%s: %w; jeirt writes this record itself: restore it, or emit and submit the folder again", p, err)
	}
	if err := a.checkScript(dir); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return &a, nil
}

// check applies the record's bounds, field by field.
func (a *Array) check() error {
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("field %s: %s", field, fmt.Sprintf(format, args...))
	}
	switch {
	case a.Version != 1 && a.Version != recordVersion:
		return bad("format_version", "%d, want 1 or %d", a.Version, recordVersion)
	case a.Version >= 2 && (!filepath.IsAbs(a.Folder) || filepath.Clean(a.Folder) != a.Folder):
		return bad("folder", "%q is not a clean absolute path", limits.Clip(a.Folder))
	case !whatRE.MatchString(a.What):
		return bad("what", "%q is not a name such as run or shard", limits.Clip(a.What))
	case !scriptRE.MatchString(a.Script):
		return bad("script", "%q is not the name of a script in the folder (NAME.sbatch, no path)", limits.Clip(a.Script))
	case a.Tasks < 1 || a.Tasks > MaxTasks:
		return bad("tasks", "%d is not a task count from 1 to %d", a.Tasks, MaxTasks)
	case a.Limit < 0 || a.Limit > a.Tasks:
		return bad("limit", "%d is not from 0 to tasks (%d)", a.Limit, a.Tasks)
	case a.Width < 1 || a.Width > 9 || a.Width < len(strconv.Itoa(a.Tasks-1)):
		return bad("width", "%d cannot number %d tasks", a.Width, a.Tasks)
	case a.Check != "file" && a.Check != "checkpoint":
		return bad("check", "%q, want file or checkpoint", limits.Clip(a.Check))
	case strings.Count(a.Done, "{id}") != 1 || !filepath.IsLocal(a.Done):
		return bad("done", "%q is not a path inside the folder with one {id}", limits.Clip(a.Done))
	case len(a.Jobs) > maxSubmissions:
		return bad("jobs", "%d submissions, more than %d", len(a.Jobs), maxSubmissions)
	}
	if err := checkPattern("output", a.Output, a.Folder); err != nil {
		return err
	}
	listed := 0
	for i := range a.Jobs {
		j := &a.Jobs[i]
		if !jobIDRE.MatchString(j.ID) {
			return bad(fmt.Sprintf("jobs[%d].id", i), "%q is not a Slurm job id (digits)", limits.Clip(j.ID))
		}
		var ok bool
		if j.Tasks, ok = parseTasks(j.Array, a.Tasks); !ok {
			return bad(fmt.Sprintf("jobs[%d].array", i), "job %s: array %q is not a list of distinct tasks of this array (0 to %d) such as 0-3,7", j.ID, limits.Clip(j.Array), a.Tasks-1)
		}
		if listed += len(j.Tasks); listed > 64*a.Tasks {
			return bad("jobs", "the submissions list more than 64 times the %d tasks", a.Tasks)
		}
	}
	if a.After == nil {
		return nil
	}
	f := a.After
	switch {
	case !whatRE.MatchString(f.What):
		return bad("after.what", "%q is not a name such as merge", limits.Clip(f.What))
	case !scriptRE.MatchString(f.Script) || f.Script == a.Script:
		return bad("after.script", "%q is not the name of another script in the folder (NAME.sbatch, no path)", limits.Clip(f.Script))
	case !filepath.IsLocal(f.Done):
		return bad("after.done", "%q is not a path inside the folder", limits.Clip(f.Done))
	case len(f.Jobs) > maxSubmissions:
		return bad("after.jobs", "%d submissions, more than %d", len(f.Jobs), maxSubmissions)
	}
	if err := checkPattern("after.output", f.Output, a.Folder); err != nil {
		return err
	}
	for i, j := range f.Jobs {
		if !jobIDRE.MatchString(j.ID) {
			return bad(fmt.Sprintf("after.jobs[%d].id", i), "%q is not a Slurm job id (digits)", limits.Clip(j.ID))
		}
		if j.Array != "" {
			return bad(fmt.Sprintf("after.jobs[%d].array", i), "the %s is one job, not an array", f.What)
		}
	}
	return nil
}

// checkPattern checks a log's --output pattern: absolute, clean, and under
// the record's folder where the record names one.
func checkPattern(field, p, folder string) error {
	if !filepath.IsAbs(p) || filepath.Clean(p) != p || strings.ContainsAny(p, "\n\r") {
		return fmt.Errorf("field %s: %q is not an absolute path pattern", field, limits.Clip(p))
	}
	if folder != "" && !strings.HasPrefix(p, Pattern(folder)+string(filepath.Separator)) {
		return fmt.Errorf("field %s: %q is not inside the record's folder %s", field, limits.Clip(p), limits.Clip(folder))
	}
	return nil
}

// checkScript checks that the array's script is a plain file of the folder
// (never a link out of it) whose own #SBATCH --array line declares the
// record's tasks: a record cannot ask for more tasks than its folder holds.
func (a *Array) checkScript(dir string) error {
	p := filepath.Join(dir, a.Script)
	fi, err := os.Lstat(p)
	if err != nil {
		return fmt.Errorf("field script: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("field script: %s is not a plain file of the folder (a link or a special file); jeirt submits only the scripts it wrote there", p)
	}
	b, err := fileio.ReadInputFile(p, maxScriptBytes, "a job script")
	if err != nil {
		return fmt.Errorf("field script: %w", err)
	}
	m := arrayRE.FindSubmatch(b)
	if m == nil {
		return fmt.Errorf("field script: %s has no #SBATCH --array=0-N line; it is not the script jeirt wrote: emit the folder again", p)
	}
	if last, _ := strconv.Atoi(string(m[1])); last != a.Tasks-1 {
		return fmt.Errorf("field tasks: %d, but %s declares --array=0-%d (%d tasks); emit the folder again", a.Tasks, p, last, last+1)
	}
	if a.After != nil {
		q := filepath.Join(dir, a.After.Script)
		if fi, err := os.Lstat(q); err != nil || !fi.Mode().IsRegular() {
			return fmt.Errorf("field after.script: %s is not a plain file of the folder; jeirt submits only the scripts it wrote there", q)
		}
	}
	return nil
}

// checkFolder refuses a record read in another folder than its own (a
// *CopyError). A record of format version 1 names no folder: its log
// pattern, which lies in its folder, stands for it.
func (a *Array) checkFolder(dir string) error {
	real, err := fileio.ResolvePath(dir)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	p := filepath.Join(dir, RecordFile)
	if a.Folder != "" {
		if a.Folder != real {
			return &CopyError{Record: p, Dir: dir, Folder: a.Folder}
		}
		return nil
	}
	if !strings.HasPrefix(a.Output, Pattern(real)+string(filepath.Separator)) {
		// The pattern lies one folder down (logs/ or runs/).
		prefix, _, _ := strings.Cut(a.Output, "%")
		return &CopyError{Record: p, Dir: dir, Folder: filepath.Dir(filepath.Dir(prefix))}
	}
	return nil
}
