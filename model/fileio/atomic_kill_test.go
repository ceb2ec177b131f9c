package fileio

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// writeVersion writes dir as a folder of three files that all hold version,
// replacing what is there.
func writeVersion(dir, version string) error {
	return WriteDirAtomic(dir, true, func(tmp string) error {
		for _, name := range []string{"a", "b", "c"} {
			if err := os.WriteFile(filepath.Join(tmp, name), []byte(version), 0o644); err != nil {
				return err
			}
		}
		return nil
	})
}

// folderVersion is the version dir holds, or an error when it is absent or
// mixes versions.
func folderVersion(dir string) (string, error) {
	var got []string
	for _, name := range []string{"a", "b", "c"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return "", err
		}
		got = append(got, string(b))
	}
	if got[0] != got[1] || got[1] != got[2] {
		return "", errors.New("mixed versions " + strings.Join(got, ","))
	}
	return got[0], nil
}

// TestWriteDirAtomicHelper is the process the kill test runs and kills.
func TestWriteDirAtomicHelper(t *testing.T) {
	dir := os.Getenv("JEIRT_TEST_ATOMIC_DIR")
	if dir == "" {
		t.Skip("run by TestWriteDirAtomicKilled")
	}
	if err := writeVersion(dir, "new"); err != nil {
		t.Fatal(err)
	}
}

// A --force replace killed at each step of the write (the test binary exits
// at the step, running no cleanup) leaves the old folder or the new one,
// complete, at the path; the next write removes what the killed one left.
func TestWriteDirAtomicKilled(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the atomic exchange is Linux's")
	}
	steps := []struct {
		name, want string
	}{{"filled", "old"}, {"synced", "old"}, {"exchanged", "new"}, {"parent-synced", "new"}, {"", "new"}}
	for _, st := range steps {
		parent := t.TempDir()
		dir := filepath.Join(parent, "ck")
		if err := writeVersion(dir, "old"); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestWriteDirAtomicHelper$", "-test.count=1")
		cmd.Env = append(os.Environ(), "JEIRT_TEST_ATOMIC_DIR="+dir, "JEIRT_TEST_CRASH_AT="+st.name)
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if st.name != "" && !(errors.As(err, &exit) && exit.ExitCode() == 3) {
			t.Fatalf("killed at %s: want exit status 3, got %v\n%s", st.name, err, out)
		}
		if st.name == "" && err != nil {
			t.Fatalf("unkilled run: %v\n%s", err, out)
		}
		got, err := folderVersion(dir)
		if err != nil || got != st.want {
			t.Errorf("killed at %q: folder holds %q (%v), want %q", st.name, got, err, st.want)
		}
		// The next write cleans up and succeeds.
		if err := writeVersion(dir, "next"); err != nil {
			t.Fatal(err)
		}
		if got, err := folderVersion(dir); err != nil || got != "next" {
			t.Errorf("after the kill at %q, the next write gives %q (%v)", st.name, got, err)
		}
		left, _ := filepath.Glob(filepath.Join(parent, ".ck"+tempTag+"*"))
		if len(left) != 0 {
			t.Errorf("killed at %q: the next write left %v", st.name, left)
		}
	}
}

// Concurrent writers of one folder are serialised: each leaves a complete
// folder, and the last one's version wins.
func TestWriteDirAtomicConcurrent(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ck")
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for k := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[k] = writeVersion(dir, strings.Repeat("v", k+1))
		}()
	}
	wg.Wait()
	for k, err := range errs {
		if err != nil {
			t.Errorf("writer %d: %v", k, err)
		}
	}
	if _, err := folderVersion(dir); err != nil {
		t.Error(err)
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), ".ck.*"))
	if len(left) != 0 {
		t.Errorf("left %v", left)
	}
}

// A run that claims an output folder makes a second claim fail at once,
// naming the holder, while its own writes of the folder go ahead; the
// released claim leaves no lock file.
func TestLockOutput(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("output locks use flock")
	}
	dir := filepath.Join(t.TempDir(), "out", "ck")
	release, err := LockOutput(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = LockOutput(dir)
	if err == nil || !strings.Contains(err.Error(), "being written by another run") || !strings.Contains(err.Error(), "process ") {
		t.Errorf("second claim: %v", err)
	}
	if err := writeVersion(dir, "mine"); err != nil {
		t.Fatalf("write under the claim: %v", err)
	}
	release()
	if _, err := os.Stat(lockPath(dir)); !os.IsNotExist(err) {
		t.Errorf("lock file after release: %v", err)
	}
	again, err := LockOutput(dir)
	if err != nil {
		t.Fatalf("claim after release: %v", err)
	}
	again()
	if got, err := folderVersion(dir); err != nil || got != "mine" {
		t.Errorf("folder holds %q (%v)", got, err)
	}
}

// Lock files are jeirt's own: a user's ".ck.lock" is never opened, a
// symlink at the lock's name is never followed, a file there holding
// anything but a jeirt holder line is refused, and a lock a killed run
// left (no flock on it) is taken over but not deleted.
func TestLockFilesAreJeirtsOwn(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("output locks use flock")
	}
	parent := t.TempDir()
	dir := filepath.Join(parent, "ck")
	precious := filepath.Join(parent, "precious.txt")
	mustWrite(t, precious, "mine")
	mustWrite(t, filepath.Join(parent, ".ck.lock"), "my notes")
	release, err := LockOutput(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeVersion(dir, "one"); err != nil {
		t.Fatal(err)
	}
	release()
	if b, err := os.ReadFile(filepath.Join(parent, ".ck.lock")); err != nil || string(b) != "my notes" {
		t.Errorf("the user's .ck.lock: %q %v", b, err)
	}
	lock := lockPath(dir)
	os.Symlink(precious, lock)
	if err := writeVersion(dir, "two"); err == nil || !strings.Contains(err.Error(), "is a symbolic link") {
		t.Errorf("a symlink as the lock: %v", err)
	}
	if b, _ := os.ReadFile(precious); string(b) != "mine" {
		t.Errorf("written through the lock link: %q", b)
	}
	if fi, err := os.Lstat(lock); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was removed: %v", err)
	}
	os.Remove(lock)
	mustWrite(t, lock, "my own file")
	if _, err := LockOutput(dir); err == nil || !strings.Contains(err.Error(), "not jeirt's lock file") {
		t.Errorf("a user's file as the lock: %v", err)
	}
	if b, _ := os.ReadFile(lock); string(b) != "my own file" {
		t.Errorf("the user's file at the lock's name: %q", b)
	}
	mustWrite(t, lock, holderPrefix+"process 1: jeirt train, since 2026-01-01T00:00:00Z\n")
	if err := writeVersion(dir, "three"); err != nil {
		t.Fatalf("a stale lock was not taken over: %v", err)
	}
	if got, _ := folderVersion(dir); got != "three" {
		t.Errorf("folder holds %q", got)
	}
	if _, err := os.Lstat(lock); err != nil {
		t.Errorf("a lock this process did not create was removed: %v", err)
	}
}

// TestWriteFileAtomicHelper is the process TestWriteFileAtomicKilled runs
// and kills.
func TestWriteFileAtomicHelper(t *testing.T) {
	path := os.Getenv("JEIRT_TEST_ATOMIC_FILE")
	if path == "" {
		t.Skip("run by TestWriteFileAtomicKilled")
	}
	WriteFileAtomic(path, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err })
}

// A single-file write killed before its rename (data parquet killed
// mid-write) leaves the old file and a temporary file named for the killed
// process; the next write of the file removes it.
func TestWriteFileAtomicKilled(t *testing.T) {
	unixOnly(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "r.parquet")
	mustWrite(t, path, "old")
	cmd := exec.Command(os.Args[0], "-test.run=^TestWriteFileAtomicHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), "JEIRT_TEST_ATOMIC_FILE="+path, "JEIRT_TEST_CRASH_AT=file-written")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("want exit status 3, got %v\n%s", err, out)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".r.parquet"+tempTag+"*"))
	if b, _ := os.ReadFile(path); string(b) != "old" || len(left) != 1 {
		t.Fatalf("after the kill: %q, leftovers %v", b, left)
	}
	if _, pid, _, ok := tempOwner(filepath.Base(left[0])); !ok || pid != cmd.Process.Pid {
		t.Errorf("the leftover %s is not named for the killed process %d", left[0], cmd.Process.Pid)
	}
	if err := WriteFileAtomic(path, func(w io.Writer) error { _, err := io.WriteString(w, "next"); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "next" {
		t.Errorf("the next write gave %q", b)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".r.parquet"+tempTag+"*")); len(left) != 0 {
		t.Errorf("the killed run's temporary file survived the next write: %v", left)
	}
}
