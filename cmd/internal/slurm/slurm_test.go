package slurm

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestFormatAndParseTasks(t *testing.T) {
	for _, c := range []struct {
		tasks []int
		want  string
	}{{[]int{0, 1, 2, 5, 7, 8}, "0-2,5,7-8"}, {[]int{3}, "3"}, {[]int{3, 7}, "3,7"}, {nil, ""}} {
		if got := FormatTasks(c.tasks); got != c.want {
			t.Errorf("FormatTasks(%v) = %q, want %q", c.tasks, got, c.want)
		}
		if c.want == "" {
			continue
		}
		if back, ok := parseTasks(c.want, 9); !ok || !reflect.DeepEqual(back, c.tasks) {
			t.Errorf("parseTasks(%q) = %v %v, want %v", c.want, back, ok, c.tasks)
		}
	}
	if got, ok := parseTasks("2-5%2", 6); !ok || !reflect.DeepEqual(got, []int{2, 3, 4, 5}) {
		t.Errorf("parseTasks(2-5%%2) = %v %v", got, ok)
	}
	for _, bad := range []string{"", "x", "5-2", "4294967294x", "0-9", "9", "-1", "1,1", "0-2000000000", "3000000000"} {
		if got, ok := parseTasks(bad, 9); ok {
			t.Errorf("parseTasks(%q) = %v, want not ok", bad, got)
		}
	}
}

func TestExpandFindsTheNewestLog(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "runs", "003"), 0o755)
	old := filepath.Join(dir, "runs", "003", "slurm-12_3.out")
	newer := filepath.Join(dir, "runs", "003", "slurm-13_3.out")
	os.WriteFile(old, []byte("a\n"), 0o644)
	pattern := filepath.Join(dir, "runs", "%3a", "slurm-%A_%a.out")
	if got := expand(pattern, "12", "3", "*"); got != old {
		t.Errorf("expand = %q, want %q", got, old)
	}
	if got := expand(pattern, "13", "3", "*"); got != "" {
		t.Errorf("expand of another job = %q, want none", got)
	}
	// %j unknown: a glob, the newest match.
	os.WriteFile(newer, nil, 0o644)
	os.Chtimes(old, time.Now().Add(-time.Hour), time.Now().Add(-time.Hour))
	if got := expand(filepath.Join(dir, "runs", "003", "slurm-%j.out"), "12", "3", ""); got != newer {
		t.Errorf("expand with %%j = %q, want %q", got, newer)
	}
	if got := expand(dir+"/100%%-%x.out", "1", "0", "2"); got != "" {
		t.Errorf("expand of a missing file = %q", got)
	}
	// A folder whose name has glob characters matches only itself.
	odd := filepath.Join(dir, "a[1]*")
	os.MkdirAll(odd, 0o755)
	os.WriteFile(filepath.Join(odd, "50%-7.out"), nil, 0o644)
	os.MkdirAll(filepath.Join(dir, "a1x"), 0o755)
	os.WriteFile(filepath.Join(dir, "a1x", "50%-7.out"), nil, 0o644)
	if got := expand(Pattern(odd)+"/50%%-%j.out", "7", "", "7"); got != filepath.Join(odd, "50%-7.out") {
		t.Errorf("expand in a folder named a[1]* = %q", got)
	}
}

func TestLastErrorLine(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "log")
	os.WriteFile(p, []byte(`sweep: run 001 (job 14, attempt 1) on vm
epoch   3/20  train loss 0.51
slurmstepd-vm: error: *** JOB 14 ON vm CANCELLED AT 2026-12-01T21:39:07 ***
stopped: interrupted after epoch 3, best epoch 3
interrupted: keeping epoch 3 (best validation loss); baselines skipped
geometry: Spearman(|q|, item error rate) = 0.3 over 30 items
`), 0o644)
	if got := lastError(p); got != "interrupted: keeping epoch 3 (best validation loss); baselines skipped" {
		t.Errorf("lastError = %q", got)
	}
	os.WriteFile(p, []byte("encode: shard 1 of 3\njeirt: items.csv:4: no text\n\n"), 0o644)
	if got := lastError(p); got != "jeirt: items.csv:4: no text" {
		t.Errorf("lastError = %q", got)
	}
	os.WriteFile(p, []byte("one\ntwo\n"), 0o644)
	if got := lastError(p); got != "two" {
		t.Errorf("lastError without an error line = %q", got)
	}
	if got := lastError(filepath.Join(dir, "none")); got != "" {
		t.Errorf("lastError of a missing file = %q", got)
	}
}

func TestJudge(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "task.out")
	os.WriteFile(log, []byte("jeirt: d.csv:5: bad label\n"), 0o644)
	for _, c := range []struct {
		name         string
		info         *jobInfo
		done         bool
		log          string
		state, start string
	}{
		{"queued", &jobInfo{State: "PENDING", Reason: "Resources"}, false, "", Pending, "Resources"},
		{"queued, no reason", &jobInfo{State: "PENDING", Reason: "None"}, false, "", Pending, ""},
		{"requeued", &jobInfo{State: "REQUEUED"}, true, "", Pending, ""},
		{"running over an old output", &jobInfo{State: "RUNNING"}, true, "", Running, ""},
		{"finished", &jobInfo{State: "COMPLETED", ExitCode: "0:0"}, true, log, Done, ""},
		{"exit 0, no output", &jobInfo{State: "COMPLETED", ExitCode: "0:0"}, false, "", Failed, "the job ended without error but its output"},
		{"failed", &jobInfo{State: "FAILED", ExitCode: "1:0"}, false, log, Failed, "FAILED (exit 1:0): jeirt: d.csv:5: bad label"},
		{"time limit", &jobInfo{State: "TIMEOUT", ExitCode: "0:15"}, false, "", Failed, "TIMEOUT (exit 0:15)"},
		{"forgotten, with a log", nil, false, log, Failed, "no longer known to Slurm: jeirt: d.csv:5"},
		{"forgotten, done", nil, true, log, Done, ""},
		{"never ran", nil, false, "", Missing, "not submitted yet"},
	} {
		state, reason := judge(c.info, c.done, c.log)
		if state != c.state || !strings.HasPrefix(reason, c.start) || (c.start == "" && reason != "") {
			t.Errorf("%s: %s %q, want %s %q...", c.name, state, reason, c.state, c.start)
		}
	}
}

// fakeSlurm puts stand-ins for sbatch, scontrol, scancel and sacct on PATH:
// sbatch prints ids from 100 up and logs its arguments; scontrol prints
// $FAKE/jobs/ID (lines as scontrol -o prints them) or says the id is
// invalid; sacct fails as it does without accounting.
func fakeSlurm(t *testing.T) (fake string, calls func() string) {
	t.Helper()
	fake = t.TempDir()
	bin := filepath.Join(fake, "bin")
	os.MkdirAll(filepath.Join(fake, "jobs"), 0o755)
	os.MkdirAll(bin, 0o755)
	scripts := map[string]string{
		"sbatch": `n=$(cat "$FAKE/next" 2>/dev/null || echo 100); echo $((n + 1)) > "$FAKE/next"
echo "sbatch $*" >> "$FAKE/calls"; echo "$n;cluster"`,
		"scontrol": `id="$4"; if [[ -f "$FAKE/jobs/$id" ]]; then cat "$FAKE/jobs/$id"; else echo "slurm_load_jobs error: Invalid job id specified" >&2; exit 1; fi`,
		"scancel":  `echo "scancel $*" >> "$FAKE/calls"`,
		"sacct":    `echo "sacct: error: Slurm accounting storage is disabled" >&2; exit 1`,
	}
	for name, body := range scripts {
		os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/bash\n"+body+"\n"), 0o755)
	}
	t.Setenv("FAKE", fake)
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	return fake, func() string {
		b, _ := os.ReadFile(filepath.Join(fake, "calls"))
		os.Remove(filepath.Join(fake, "calls"))
		return string(b)
	}
}

// shardArray is an encoding's array of 3 shards in dir, with its two
// scripts written there.
func shardArray(dir string) *Array {
	os.WriteFile(filepath.Join(dir, "encode.sbatch"), []byte("#!/bin/bash\n#SBATCH --array=0-2\n"), 0o755)
	os.WriteFile(filepath.Join(dir, "merge.sbatch"), []byte("#!/bin/bash\n"), 0o755)
	return &Array{What: "shard", Script: "encode.sbatch", Tasks: 3, Done: "shard-{id}.out", Width: 4, Check: "file",
		Output: filepath.Join(dir, "logs", "shard-%4a-%A_%a.out"),
		After:  &After{What: "merge", Script: "merge.sbatch", Done: "merged.out", Output: filepath.Join(dir, "logs", "merge-%j.out")}}
}

func TestSubmitStatusResubmitWithStandIns(t *testing.T) {
	fake, calls := fakeSlurm(t)
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "logs"), 0o755)
	ctx := context.Background()
	var out bytes.Buffer
	if err := Submit(ctx, dir, shardArray(dir), &out); err != nil {
		t.Fatal(err)
	}
	if got, want := calls(), "sbatch --parsable encode.sbatch\nsbatch --parsable --dependency=afterok:100 merge.sbatch\n"; got != want {
		t.Errorf("sbatch calls:\n%swant\n%s", got, want)
	}
	if !strings.Contains(out.String(), "submitted job 100: shards 0-2 of encode.sbatch") || !strings.Contains(out.String(), "submitted job 101: the merge (merge.sbatch), after afterok:100") {
		t.Errorf("submit printed:\n%s", out.String())
	}
	job := func(id, text string) { os.WriteFile(filepath.Join(fake, "jobs", id), []byte(text), 0o644) }
	job("100", "JobId=100 ArrayJobId=100 ArrayTaskId=1-2 JobState=PENDING Reason=Resources ExitCode=0:0\n"+
		"JobId=102 ArrayJobId=100 ArrayTaskId=0 JobState=RUNNING Reason=None ExitCode=0:0 StdOut="+dir+"/logs/shard-%4a-%A_%a.out\n")
	job("101", "JobId=101 JobState=PENDING Reason=Dependency Dependency=afterok:100_*(unfulfilled) ExitCode=0:0\n")
	if err := Submit(ctx, dir, shardArray(dir), &out); err == nil || !strings.Contains(err.Error(), "shard 0000 of job 100_0 is still running") {
		t.Errorf("a second submit while tasks run: %v", err)
	}
	calls()

	// Task 0 finished, 1 failed with a log, 2 was never started and Slurm
	// forgot it; the merge waits for ever.
	os.WriteFile(filepath.Join(dir, "shard-0000.out"), []byte("v"), 0o644)
	os.WriteFile(filepath.Join(dir, "logs", "shard-0001-100_1.out"), []byte("encode: shard 1\njeirt: out of memory\n"), 0o644)
	job("100", "JobId=102 ArrayJobId=100 ArrayTaskId=0 JobState=COMPLETED Reason=None ExitCode=0:0\n"+
		"JobId=103 ArrayJobId=100 ArrayTaskId=1 JobState=OUT_OF_MEMORY Reason=OutOfMemory ExitCode=0:125 StdOut="+dir+"/logs/shard-%4a-%A_%a.out\n")
	job("101", "JobId=101 JobState=PENDING Reason=DependencyNeverSatisfied ExitCode=0:0 Command="+dir+"/merge.sbatch WorkDir="+dir+"\n")
	_, tasks, err := States(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []Task{
		{0, "0000", Done, "100_0", "COMPLETED", ""},
		{1, "0001", Failed, "100_1", "OUT_OF_MEMORY", "OUT_OF_MEMORY (exit 0:125): jeirt: out of memory"},
		{2, "0002", Missing, "100_2", "", "not submitted yet, or Slurm no longer knows it and it left no log"},
		{-1, "merge", Pending, "101", "PENDING", "waits on a task that failed: resubmit the failed tasks"},
	}
	if !reflect.DeepEqual(tasks, want) {
		t.Errorf("states:\n%+v\nwant\n%+v", tasks, want)
	}
	out.Reset()
	if err := Status(ctx, dir, &out); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"shard  state    job    reason", "0001   failed   100_1  OUT_OF_MEMORY", "3 shards: 1 done, 1 failed, 1 missing", "jeirt sweep resubmit " + dir} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("status lacks %q:\n%s", line, out.String())
		}
	}

	out.Reset()
	if err := Resubmit(ctx, dir, &out); err != nil {
		t.Fatal(err)
	}
	if got, want := calls(), "scancel 101\nsbatch --parsable --array=1-2 encode.sbatch\nsbatch --parsable --dependency=afterok:102 merge.sbatch\n"; got != want {
		t.Errorf("resubmit calls:\n%swant\n%s", got, want)
	}
	rec, err := ReadRecord(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Jobs) != 2 || rec.Jobs[1].ID != "102" || !reflect.DeepEqual(rec.Jobs[1].Tasks, []int{1, 2}) ||
		len(rec.After.Jobs) != 2 || rec.After.Jobs[1].Dependency != "afterok:102" {
		t.Errorf("record: %+v %+v", rec.Jobs, rec.After.Jobs)
	}

	// Every shard done, the merge failed: the merge alone goes again.
	os.WriteFile(filepath.Join(dir, "shard-0001.out"), []byte("v"), 0o644)
	os.WriteFile(filepath.Join(dir, "shard-0002.out"), []byte("v"), 0o644)
	job("102", "JobId=104 ArrayJobId=102 ArrayTaskId=1 JobState=COMPLETED ExitCode=0:0\nJobId=102 ArrayJobId=102 ArrayTaskId=2 JobState=COMPLETED ExitCode=0:0\n")
	job("103", "JobId=103 JobState=FAILED Reason=NonZeroExitCode ExitCode=1:0\n")
	if err := Resubmit(ctx, dir, &out); err != nil {
		t.Fatal(err)
	}
	if got := calls(); got != "sbatch --parsable merge.sbatch\n" {
		t.Errorf("resubmit of the merge alone: %q", got)
	}
	job("104", "JobId=104 JobState=COMPLETED ExitCode=0:0\n")
	os.WriteFile(filepath.Join(dir, "merged.out"), []byte("v"), 0o644)
	out.Reset()
	if err := Resubmit(ctx, dir, &out); err != nil || !strings.Contains(out.String(), "nothing to resubmit") || calls() != "" {
		t.Errorf("resubmit with everything done: %v %s", err, out.String())
	}
}

func TestSubmitErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadRecord(dir); err == nil || !strings.Contains(err.Error(), "was not submitted to Slurm by jeirt (no slurm.json") {
		t.Errorf("ReadRecord of a folder without a record: %v", err)
	}
	// Bad records: TestSafetyJobFolders.
	t.Setenv("PATH", t.TempDir())
	err := Submit(context.Background(), t.TempDir(), shardArray(dir), &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "sbatch not found on PATH") {
		t.Errorf("Submit without sbatch: %v", err)
	}
}
