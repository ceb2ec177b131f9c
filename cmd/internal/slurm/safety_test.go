package slurm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jeirt/jeirt/model/fileio"
)

// goodRecord writes an encoding's job folder into dir (its two scripts and
// logs/) and returns the record jeirt writes for it after one submission
// (array job 100, merge 101), as JSON fields to edit.
func goodRecord(t *testing.T, dir string) map[string]any {
	t.Helper()
	real, err := fileio.ResolvePath(dir)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "logs"), 0o755)
	shardArray(dir)
	a := shardArray(real)
	a.Jobs = []Job{{ID: "100", Tasks: []int{0, 1, 2}, Submitted: "2026-12-07T00:00:00Z"}}
	a.After.Jobs = []Job{{ID: "101", Dependency: "afterok:100", Submitted: "2026-12-07T00:00:00Z"}}
	if err := a.write(dir); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, RecordFile))
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func writeRecordJSON(t *testing.T, dir string, m map[string]any) {
	t.Helper()
	b, _ := json.Marshal(m)
	if err := os.WriteFile(filepath.Join(dir, RecordFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// copyTree copies src to dst as cp -a does (modes and times kept).
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v %s", err, out)
	}
}

// TestSafetyJobFolders is the regression corpus of job folders read back:
// a record (slurm.json) edited, forged or copied with its folder is
// refused by name, before anything is submitted, cancelled or allocated.
func TestSafetyJobFolders(t *testing.T) {
	after := func(m map[string]any) map[string]any { return m["after"].(map[string]any) }
	job0 := func(m map[string]any) map[string]any { return m["jobs"].([]any)[0].(map[string]any) }
	for _, c := range []struct {
		name string
		edit func(t *testing.T, dir string, m map[string]any) // nil: the record as written
		want string                                           // the error, %[1]s the record's path, %[2]s the folder
	}{
		{"three billion tasks", func(t *testing.T, dir string, m map[string]any) { m["tasks"] = 3000000000 },
			"%[1]s: field tasks: 3000000000 is not a task count from 1 to 1000000; jeirt writes this record itself: restore it, or emit and submit the folder again"},
		{"an array of two billion", func(t *testing.T, dir string, m map[string]any) { job0(m)["array"] = "0-2000000000" },
			`%[1]s: field jobs[0].array: job 100: array "0-2000000000" is not a list of distinct tasks of this array (0 to 2) such as 0-3,7; jeirt writes this record itself: restore it, or emit and submit the folder again`},
		{"a task outside the array", func(t *testing.T, dir string, m map[string]any) { job0(m)["array"] = "0,3" },
			`%[1]s: field jobs[0].array: job 100: array "0,3" is not a list of distinct tasks of this array (0 to 2) such as 0-3,7; jeirt writes this record itself: restore it, or emit and submit the folder again`},
		{"a task listed twice", func(t *testing.T, dir string, m map[string]any) { job0(m)["array"] = "0-2,1" },
			`%[1]s: field jobs[0].array: job 100: array "0-2,1" is not a list of distinct tasks of this array (0 to 2) such as 0-3,7; jeirt writes this record itself: restore it, or emit and submit the folder again`},
		{"not a task list", func(t *testing.T, dir string, m map[string]any) { job0(m)["array"] = "1-x" },
			`%[1]s: field jobs[0].array: job 100: array "1-x" is not a list of distinct tasks of this array (0 to 2) such as 0-3,7; jeirt writes this record itself: restore it, or emit and submit the folder again`},
		{"more tasks than the script's array", func(t *testing.T, dir string, m map[string]any) { m["tasks"] = 900000; m["width"] = 6 },
			"%[1]s: field tasks: 900000, but %[2]s/encode.sbatch declares --array=0-2 (3 tasks); emit the folder again"},
		{"a script outside the folder", func(t *testing.T, dir string, m map[string]any) { m["script"] = "/tmp/evil.sbatch" },
			`%[1]s: field script: "/tmp/evil.sbatch" is not the name of a script in the folder (NAME.sbatch, no path); jeirt writes this record itself: restore it, or emit and submit the folder again`},
		{"a script up the tree", func(t *testing.T, dir string, m map[string]any) { m["script"] = "../encode.sbatch" },
			`%[1]s: field script: "../encode.sbatch" is not the name of a script in the folder (NAME.sbatch, no path); jeirt writes this record itself: restore it, or emit and submit the folder again`},
		{"a script that links out", func(t *testing.T, dir string, m map[string]any) {
			evil := filepath.Join(t.TempDir(), "evil.sbatch")
			os.WriteFile(evil, []byte("#!/bin/bash\n#SBATCH --array=0-2\ntouch PWNED\n"), 0o755)
			os.Remove(filepath.Join(dir, "encode.sbatch"))
			os.Symlink(evil, filepath.Join(dir, "encode.sbatch"))
		}, "%[1]s: field script: %[2]s/encode.sbatch is not a plain file of the folder (a link or a special file); jeirt submits only the scripts it wrote there"},
		{"a merge script outside", func(t *testing.T, dir string, m map[string]any) { after(m)["script"] = "/home/u/x.sbatch" },
			`%[1]s: field after.script: "/home/u/x.sbatch" is not the name of another script in the folder (NAME.sbatch, no path); jeirt writes this record itself: restore it, or emit and submit the folder again`},
		{"a done path outside", func(t *testing.T, dir string, m map[string]any) { m["done"] = "../../etc/{id}" },
			`%[1]s: field done: "../../etc/{id}" is not a path inside the folder with one {id}; jeirt writes this record itself: restore it, or emit and submit the folder again`},
		{"a merge output outside", func(t *testing.T, dir string, m map[string]any) { after(m)["done"] = "/etc/passwd" },
			`%[1]s: field after.done: "/etc/passwd" is not a path inside the folder; jeirt writes this record itself: restore it, or emit and submit the folder again`},
		{"a log pattern outside", func(t *testing.T, dir string, m map[string]any) { m["output"] = "/etc/%j" },
			`%[1]s: field output: "/etc/%%j" is not inside the record's folder %[2]s; jeirt writes this record itself: restore it, or emit and submit the folder again`},
		{"a job id that is an option", func(t *testing.T, dir string, m map[string]any) { job0(m)["id"] = "--user=alice" },
			`%[1]s: field jobs[0].id: "--user=alice" is not a Slurm job id (digits); jeirt writes this record itself: restore it, or emit and submit the folder again`},
		{"a merge job id with a space", func(t *testing.T, dir string, m map[string]any) {
			after(m)["jobs"].([]any)[0].(map[string]any)["id"] = "101 102"
		},
			`%[1]s: field after.jobs[0].id: "101 102" is not a Slurm job id (digits); jeirt writes this record itself: restore it, or emit and submit the folder again`},
		{"width zero", func(t *testing.T, dir string, m map[string]any) { m["width"] = 0 },
			"%[1]s: field width: 0 cannot number 3 tasks; jeirt writes this record itself: restore it, or emit and submit the folder again"},
		{"a limit above the tasks", func(t *testing.T, dir string, m map[string]any) { m["limit"] = 50 },
			"%[1]s: field limit: 50 is not from 0 to tasks (3); jeirt writes this record itself: restore it, or emit and submit the folder again"},
		{"an unknown version", func(t *testing.T, dir string, m map[string]any) { m["format_version"] = 7 },
			"%[1]s: field format_version: 7, want 1 or 2; jeirt writes this record itself: restore it, or emit and submit the folder again"},
		{"a check that is not one", func(t *testing.T, dir string, m map[string]any) { m["check"] = "exec" },
			`%[1]s: field check: "exec", want file or checkpoint; jeirt writes this record itself: restore it, or emit and submit the folder again`},
		{"a done path with two ids", func(t *testing.T, dir string, m map[string]any) { m["done"] = "{id}/{id}" },
			`%[1]s: field done: "{id}/{id}" is not a path inside the folder with one {id}; jeirt writes this record itself: restore it, or emit and submit the folder again`},
		{"a relative folder", func(t *testing.T, dir string, m map[string]any) { m["folder"] = "../x" },
			`%[1]s: field folder: "../x" is not a clean absolute path; jeirt writes this record itself: restore it, or emit and submit the folder again`},
		{"a merge that is an array", func(t *testing.T, dir string, m map[string]any) {
			after(m)["jobs"].([]any)[0].(map[string]any)["array"] = "0-2"
		}, "%[1]s: field after.jobs[0].array: the merge is one job, not an array; jeirt writes this record itself: restore it, or emit and submit the folder again"},
		{"a second JSON value after the record", func(t *testing.T, dir string, m map[string]any) {
			b, _ := json.Marshal(m)
			os.WriteFile(filepath.Join(dir, RecordFile), append(b, []byte(`{"script": "/tmp/evil.sbatch"}`)...), 0o644)
		}, "%[1]s: more than one JSON value; jeirt writes this record itself: emit and submit the folder again"},
		{"a huge number", func(t *testing.T, dir string, m map[string]any) {
			b, _ := json.Marshal(m)
			os.WriteFile(filepath.Join(dir, RecordFile), bytes.Replace(b, []byte(`"tasks":3`), []byte(`"tasks":1e99`), 1), 0o644)
		}, "%[1]s: json: cannot unmarshal number 1e99 into Go struct field Array.tasks of type int; jeirt writes this record itself: emit and submit the folder again"},
		{"an unknown field", func(t *testing.T, dir string, m map[string]any) { m["command"] = "rm -rf ~" },
			`%[1]s: json: unknown field "command"; jeirt writes this record itself: emit and submit the folder again`},
		{"a record that is a link", func(t *testing.T, dir string, m map[string]any) {
			other := filepath.Join(t.TempDir(), "r.json")
			b, _ := json.Marshal(m)
			os.WriteFile(other, b, 0o644)
			os.Remove(filepath.Join(dir, RecordFile))
			os.Symlink(other, filepath.Join(dir, RecordFile))
		}, "%[1]s is not a regular file (a link or a special file); jeirt writes its record as a plain file: remove it and submit again"},
		{"a record that is a FIFO", func(t *testing.T, dir string, m map[string]any) {
			os.Remove(filepath.Join(dir, RecordFile))
			if err := syscall.Mkfifo(filepath.Join(dir, RecordFile), 0o644); err != nil {
				t.Skip("no FIFOs here:", err)
			}
		}, "%[1]s is not a regular file (a link or a special file); jeirt writes its record as a plain file: remove it and submit again"},
		{"a record of another folder", func(t *testing.T, dir string, m map[string]any) {
			m["folder"] = "/srv/other"
			m["output"] = "/srv/other/logs/shard-%4a-%A_%a.out"
			after(m)["output"] = "/srv/other/logs/merge-%j.out"
		},
			"%[1]s: folder: the record was written for /srv/other, so %[2]s is a copy of that job folder (or it was moved): the jobs it lists ran in /srv/other and write there. " +
				"Follow them with jeirt sweep status /srv/other; to run this copy's tasks, emit it again into a new folder (jeirt sweep --emit slurm --out NEW, or jeirt encode --emit slurm --out NEW)"},
		{"a version 1 record of another folder", func(t *testing.T, dir string, m map[string]any) {
			delete(m, "folder")
			m["format_version"] = 1
			m["output"] = "/srv/other/logs/shard-%4a-%A_%a.out"
			after(m)["output"] = "/srv/other/logs/merge-%j.out"
		}, "%[1]s: folder: the record was written for /srv/other, so %[2]s is a copy of that job folder (or it was moved): the jobs it lists ran in /srv/other and write there. " +
			"Follow them with jeirt sweep status /srv/other; to run this copy's tasks, emit it again into a new folder (jeirt sweep --emit slurm --out NEW, or jeirt encode --emit slurm --out NEW)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, calls := fakeSlurm(t)
			dir, _ := fileio.ResolvePath(t.TempDir())
			m := goodRecord(t, dir)
			written, _ := os.ReadFile(filepath.Join(dir, RecordFile))
			if c.edit != nil {
				c.edit(t, dir, m)
			}
			// The edited record, unless the edit wrote the file itself.
			// (A link or a FIFO put in its place is never read here.)
			if fi, err := os.Lstat(filepath.Join(dir, RecordFile)); err == nil && fi.Mode().IsRegular() {
				if b, _ := os.ReadFile(filepath.Join(dir, RecordFile)); bytes.Equal(b, written) {
					writeRecordJSON(t, dir, m)
				}
			}
			start := time.Now()
			want := fmt.Sprintf(c.want, filepath.Join(dir, RecordFile), dir)
			for _, cmd := range []struct {
				name string
				f    func(context.Context, string, *bytes.Buffer) error
			}{{"status", func(ctx context.Context, d string, w *bytes.Buffer) error { return Status(ctx, d, w) }},
				{"resubmit", func(ctx context.Context, d string, w *bytes.Buffer) error { return Resubmit(ctx, d, w) }}} {
				var out bytes.Buffer
				err := cmd.f(context.Background(), dir, &out)
				if err == nil || err.Error() != want {
					t.Errorf("%s:\n got %v\nwant %s", cmd.name, err, want)
				}
			}
			if got := calls(); got != "" {
				t.Errorf("Slurm was asked to act on a refused record:\n%s", got)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("refusing the record took %v", d) // a hang, not a timing
			}
		})
	}
}

// A copy of a submitted folder (cp -a) is refused by status and resubmit,
// with the original named; resubmit there submits nothing, so the
// original's scripts do not run again and its outputs stay as they are.
func TestSafetyCopiedFolder(t *testing.T) {
	fake, calls := fakeSlurm(t)
	root, _ := fileio.ResolvePath(t.TempDir())
	orig := filepath.Join(root, "enc")
	os.MkdirAll(filepath.Join(orig, "logs"), 0o755)
	if err := Submit(context.Background(), orig, shardArray(orig), &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	calls()
	// Every task failed.
	os.WriteFile(filepath.Join(fake, "jobs", "100"), []byte("JobId=100 ArrayJobId=100 ArrayTaskId=0-2 JobState=FAILED Reason=NonZeroExitCode ExitCode=1:0\n"), 0o644)
	cp := filepath.Join(root, "enc copy")
	copyTree(t, orig, cp)
	want := fmt.Sprintf("%s: folder: the record was written for %s, so %s is a copy of that job folder (or it was moved)", filepath.Join(cp, RecordFile), orig, cp)
	for name, f := range map[string]func(context.Context, string, io.Writer) error{"status": Status, "resubmit": Resubmit} {
		err := f(context.Background(), cp, &bytes.Buffer{})
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s in a copy: %v", name, err)
		}
	}
	if got := calls(); got != "" {
		t.Errorf("resubmit in a copy called Slurm:\n%s", got)
	}
	// The copy holds no jobs of its own: a new submission there starts a
	// record of its own, and the original's still works.
	if err := CheckIdle(context.Background(), cp); err != nil {
		t.Errorf("CheckIdle of a copy: %v", err)
	}
	var out bytes.Buffer
	if err := Resubmit(context.Background(), orig, &out); err != nil {
		t.Fatal(err)
	}
	if got := calls(); got != "sbatch --parsable encode.sbatch\nsbatch --parsable --dependency=afterok:102 merge.sbatch\n" {
		t.Errorf("resubmit in the original: %q", got)
	}
}

// Resubmit cancels the merge job waiting on failed tasks only when Slurm
// says it runs this folder's merge script: a record edited to name another
// job cancels nothing.
func TestSafetyCancelsOnlyItsOwnJob(t *testing.T) {
	fake, calls := fakeSlurm(t)
	dir, _ := fileio.ResolvePath(t.TempDir())
	writeRecordJSON(t, dir, goodRecord(t, dir))
	job := func(id, text string) { os.WriteFile(filepath.Join(fake, "jobs", id), []byte(text), 0o644) }
	job("100", "JobId=100 ArrayJobId=100 ArrayTaskId=0-2 JobState=FAILED Reason=NonZeroExitCode ExitCode=1:0\n")
	job("101", "JobId=101 JobState=PENDING Reason=DependencyNeverSatisfied ExitCode=0:0 Command=/home/alice/train.sbatch WorkDir=/home/alice\n")
	err := Resubmit(context.Background(), dir, &bytes.Buffer{})
	want := fmt.Sprintf(`%s: field after.jobs: job 101 is not this folder's merge (Slurm says it runs "/home/alice/train.sbatch", not %s/merge.sbatch); jeirt cancels only the jobs this folder submitted: cancel it by hand if it is yours (scancel 101), then resubmit`,
		filepath.Join(dir, RecordFile), dir)
	if err == nil || err.Error() != want {
		t.Errorf("resubmit over another's job:\n got %v\nwant %s", err, want)
	}
	if got := calls(); got != "" {
		t.Errorf("Slurm calls: %q", got)
	}
	// The folder's own merge (a path with spaces, as scontrol prints it) is
	// cancelled.
	job("101", "JobId=101 JobState=PENDING Reason=DependencyNeverSatisfied ExitCode=0:0 Command="+dir+"/merge.sbatch WorkDir="+dir+"\n")
	if err := Resubmit(context.Background(), dir, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if got := calls(); !strings.HasPrefix(got, "scancel 101\n") {
		t.Errorf("Slurm calls: %q", got)
	}
}

// A task's log that is a FIFO, and a done file that links out of the
// folder, are neither read nor counted: status answers at once.
func TestSafetyStatusReadsOnlyPlainFiles(t *testing.T) {
	fake, _ := fakeSlurm(t)
	dir, _ := fileio.ResolvePath(t.TempDir())
	writeRecordJSON(t, dir, goodRecord(t, dir))
	os.WriteFile(filepath.Join(fake, "jobs", "100"), []byte("JobId=100 ArrayJobId=100 ArrayTaskId=0-2 JobState=FAILED Reason=NonZeroExitCode ExitCode=1:0\n"), 0o644)
	if err := syscall.Mkfifo(filepath.Join(dir, "logs", "shard-0001-100_1.out"), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	outside := filepath.Join(t.TempDir(), "x")
	os.WriteFile(outside, []byte("v"), 0o644)
	os.Symlink(outside, filepath.Join(dir, "shard-0002.out"))
	_, tasks, err := States(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{1, 2} {
		if tasks[k].State != Failed || tasks[k].Reason != "FAILED (exit 1:0)" {
			t.Errorf("task %d: %+v", k, tasks[k])
		}
	}
}

// A folder whose name has spaces, quotes, $, glob characters and % is
// submitted, followed and its logs found like any other.
func TestSafetyOddFolderName(t *testing.T) {
	fake, calls := fakeSlurm(t)
	root, _ := fileio.ResolvePath(t.TempDir())
	dir := filepath.Join(root, `x$(touch PWNED) it's "q" [1]* 50%`)
	os.MkdirAll(filepath.Join(dir, "logs"), 0o755)
	a := shardArray(dir)
	a.Output = filepath.Join(Pattern(dir), "logs", "shard-%4a-%A_%a.out")
	a.After.Output = filepath.Join(Pattern(dir), "logs", "merge-%j.out")
	if err := Submit(context.Background(), dir, a, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	calls()
	os.WriteFile(filepath.Join(fake, "jobs", "100"), []byte("JobId=100 ArrayJobId=100 ArrayTaskId=0-2 JobState=FAILED Reason=NonZeroExitCode ExitCode=1:0\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "logs", "shard-0001-100_1.out"), []byte("jeirt: items.csv:3: no text\n"), 0o644)
	_, tasks, err := States(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if tasks[1].Reason != "FAILED (exit 1:0): jeirt: items.csv:3: no text" || tasks[0].Reason != "FAILED (exit 1:0)" {
		t.Errorf("states: %+v", tasks)
	}
	if _, err := os.Stat(filepath.Join(root, "PWNED")); err == nil {
		t.Error("PWNED")
	}
}

// A done file reached through a folder that links out of the job folder
// does not count either.
func TestSafetyDoneThroughALinkedFolder(t *testing.T) {
	fake, _ := fakeSlurm(t)
	dir, _ := fileio.ResolvePath(t.TempDir())
	m := goodRecord(t, dir)
	m["done"] = "runs/{id}/out"
	writeRecordJSON(t, dir, m)
	os.WriteFile(filepath.Join(fake, "jobs", "100"), []byte("JobId=100 ArrayJobId=100 ArrayTaskId=0-2 JobState=FAILED Reason=NonZeroExitCode ExitCode=1:0\n"), 0o644)
	elsewhere := t.TempDir()
	os.WriteFile(filepath.Join(elsewhere, "out"), []byte("v"), 0o644)
	os.MkdirAll(filepath.Join(dir, "runs", "0001"), 0o755)
	os.WriteFile(filepath.Join(dir, "runs", "0001", "out"), []byte("v"), 0o644)
	os.Symlink(elsewhere, filepath.Join(dir, "runs", "0000"))
	_, tasks, err := States(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if tasks[0].State != Failed || tasks[1].State != Done {
		t.Errorf("states: %+v", tasks[:2])
	}
}

// Status stops at Ctrl-C (its context cancelled) however large the array.
func TestSafetyStatusStopsWhenCancelled(t *testing.T) {
	fakeSlurm(t)
	dir, _ := fileio.ResolvePath(t.TempDir())
	writeRecordJSON(t, dir, goodRecord(t, dir))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Status(ctx, dir, &bytes.Buffer{}); err != context.Canceled {
		t.Errorf("status with its context cancelled: %v", err)
	}
}

// scontrol -o prints one line of Key=value fields; a value with spaces (a
// folder's path) stays whole.
func TestScontrolFieldsKeepPathsWhole(t *testing.T) {
	f := scontrolFields("JobId=5 JobName=jeirt-encode-merge JobState=PENDING Reason=Dependency Dependency=afterok:4_*(unfulfilled) TRES=cpu=1,mem=8G Command=merge.sbatch WorkDir=/s/my job StdOut=/s/my job/logs/merge-5.out Power=")
	for k, want := range map[string]string{"JobId": "5", "JobState": "PENDING", "Dependency": "afterok:4_*(unfulfilled)", "TRES": "cpu=1,mem=8G",
		"Command": "merge.sbatch", "WorkDir": "/s/my job", "StdOut": "/s/my job/logs/merge-5.out", "Power": ""} {
		if f[k] != want {
			t.Errorf("%s = %q, want %q", k, f[k], want)
		}
	}
}

// The commands jeirt suggests name the folder as one shell word, which a
// shell reads back as the folder itself.
func TestSafetyArgIsOneShellWord(t *testing.T) {
	for _, p := range []string{"/scratch/u/sweep-1", `/s/x$(touch PWNED) it's "q" [1]* 50%`, "/s/a b", "/s/`id`"} {
		got := Arg(p)
		if (got == p) != !strings.ContainsAny(p, " $'\"[*`") {
			t.Errorf("Arg(%q) = %q", p, got)
		}
		out, err := exec.Command("bash", "-c", "printf %s "+got).Output()
		if err != nil || string(out) != p {
			t.Errorf("bash reads Arg(%q) = %s as %q (%v)", p, got, out, err)
		}
	}
}

// A log that scontrol places outside the job folder is not read: status
// quotes only the folder's own files.
func TestSafetyStatusReadsLogsOnlyInTheFolder(t *testing.T) {
	fake, _ := fakeSlurm(t)
	dir, _ := fileio.ResolvePath(t.TempDir())
	writeRecordJSON(t, dir, goodRecord(t, dir))
	secret := filepath.Join(t.TempDir(), "notes.out")
	os.WriteFile(secret, []byte("error: my private line\n"), 0o644)
	os.WriteFile(filepath.Join(fake, "jobs", "100"), []byte("JobId=100 ArrayJobId=100 ArrayTaskId=0 JobState=FAILED Reason=NonZeroExitCode ExitCode=1:0 StdOut="+secret+"\n"), 0o644)
	_, tasks, err := States(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if tasks[0].Reason != "FAILED (exit 1:0)" {
		t.Errorf("task 0: %+v", tasks[0])
	}
}
