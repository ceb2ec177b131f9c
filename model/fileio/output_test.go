package fileio

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
)

func mustWrite(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ResolvePath takes ".." after a symlink the way the system does: the
// parent of the link's target, not the folder holding the link.
func TestResolvePath(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "far", "deep"), 0o755)
	os.MkdirAll(filepath.Join(dir, "out", "sub"), 0o755)
	if err := os.Symlink(filepath.Join(dir, "far", "deep"), filepath.Join(dir, "out", "link")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	os.Symlink("out/link/../../far", filepath.Join(dir, "rel"))
	for _, c := range []struct{ in, want string }{
		{"out/sub/..", "out"},
		{"out/link", "far/deep"},
		{"out/link/..", "far"},
		{"out/link/../new/x", "far/new/x"},
		{"rel/deep", "far/deep"},
		{"out/missing/../y", "out/y"},
		{"./out//sub/.", "out/sub"},
	} {
		got, err := ResolvePath(filepath.Join(dir, "x", "..") + "/" + c.in)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if want := filepath.Join(dir, c.want); got != want {
			t.Errorf("%s: %s, want %s", c.in, got, want)
		}
	}
	os.Symlink("loop", filepath.Join(dir, "loop"))
	if _, err := ResolvePath(filepath.Join(dir, "loop", "x")); err == nil {
		t.Error("a symlink loop resolved")
	}
}

// writeMarked writes dir as a jeirt output folder holding files.
func writeMarked(t *testing.T, dir string, files ...string) {
	t.Helper()
	if err := WriteDirAtomic(dir, false, func(tmp string) error {
		for _, f := range files {
			mustWrite(t, filepath.Join(tmp, f), f)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func TestCheckOutput(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "dd", "r.csv")
	mustWrite(t, data, "model,item,correct\n")
	mustWrite(t, filepath.Join(dir, "proj", "thesis.tex"), "\\begin")
	writeMarked(t, filepath.Join(dir, "fit"), "fit.json", "items.csv")
	writeMarked(t, filepath.Join(dir, "mixed"), "fit.json")
	mustWrite(t, filepath.Join(dir, "mixed", "notes.md"), "mine")
	os.MkdirAll(filepath.Join(dir, "empty"), 0o755)
	mustWrite(t, filepath.Join(dir, "sel.csv"), "old")
	linked := filepath.Join(dir, "data-link")
	os.Symlink(data, linked)
	for _, c := range []struct {
		name   string
		o      Output
		want   string // "" for no error
		exists bool   // the error is ErrOutputExists
	}{
		{"new folder", Output{Path: filepath.Join(dir, "new"), Folder: true}, "", false},
		{"empty folder", Output{Path: filepath.Join(dir, "empty"), Folder: true}, "", false},
		{"existing without --force", Output{Path: filepath.Join(dir, "fit"), Folder: true}, "already exists; pass force", true},
		{"jeirt's folder with --force", Output{Path: filepath.Join(dir, "fit"), Folder: true, Force: true}, "", false},
		{"a user's folder with --force", Output{Path: filepath.Join(dir, "proj"), Folder: true, Force: true}, "was not written by this jeirt (it has no .jeirt-output.json; it holds thesis.tex)", false},
		{"a foreign file with --force", Output{Path: filepath.Join(dir, "mixed"), Folder: true, Force: true}, "holds files jeirt did not write (notes.md)", false},
		{"contains the input", Output{Path: filepath.Join(dir, "dd"), Folder: true, Force: true, Inputs: []string{data}}, "contains an input of this run", false},
		{"is the input", Output{Path: filepath.Join(dir, "fit"), Folder: true, Force: true, Inputs: []string{filepath.Join(dir, "fit")}}, "is an input of this run", false},
		{"inside the input", Output{Path: filepath.Join(dir, "fit", "report"), Folder: true, Inputs: []string{filepath.Join(dir, "fit")}}, "lies inside an input of this run", false},
		{"the input through ..", Output{Path: filepath.Join(dir, "dd", "x", ".."), Folder: true, Force: true, Inputs: []string{data}}, "contains an input", false},
		{"the input through a link", Output{Path: linked, Force: true, Inputs: []string{data}}, "is an input of this run", false},
		{"a file without --force", Output{Path: filepath.Join(dir, "sel.csv")}, "already exists; pass force", true},
		{"a file with --force", Output{Path: filepath.Join(dir, "sel.csv"), Force: true}, "", false},
		{"a file output that is a folder", Output{Path: filepath.Join(dir, "fit"), Force: true}, "is a folder", false},
		{"a folder output that is a file", Output{Path: filepath.Join(dir, "sel.csv"), Folder: true, Force: true}, "exists and is not a folder", false},
		{"a device", Output{Path: "/dev/null", Force: true}, "is not a regular file", false},
	} {
		_, err := CheckOutput(c.o)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		case err != nil && errors.Is(err, ErrOutputExists) != c.exists:
			t.Errorf("%s: errors.Is(ErrOutputExists) = %v", c.name, !c.exists)
		}
		// The messages that name the force setting are field errors on it
		// (the command line shows --force).
		var fe *model.FieldError
		if err != nil && strings.Contains(err.Error(), "force") != (errors.As(err, &fe) && fe.Field == "Force") {
			t.Errorf("%s: %v: a field error on Force is %v", c.name, err, fe)
		}
	}
	// Refusals touch nothing.
	for _, f := range []string{"dd/r.csv", "proj/thesis.tex", "mixed/notes.md", "fit/fit.json", "sel.csv"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
}

// WriteDirAtomic applies the rule at write time too, and its marker lists
// what it wrote, nested outputs standing for themselves.
func TestWriteDirAtomicMarker(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	mustWrite(t, filepath.Join(out, "notes.md"), "mine")
	err := WriteDirAtomic(out, true, func(string) error { t.Fatal("filled a folder it may not replace"); return nil })
	if err == nil || !strings.Contains(err.Error(), "it holds notes.md") {
		t.Errorf("replacing a user's folder: %v", err)
	}
	os.Remove(filepath.Join(out, "notes.md"))
	writeMarked(t, out, "a.csv", "sub/b.csv")
	m, err := readMarker(out)
	if err != nil || strings.Join(m.Files, " ") != "a.csv sub/b.csv" || m.InProgress {
		t.Errorf("marker %+v, %v", m, err)
	}
	// A nested output with its own marker, and a user's file beside it.
	writeMarked(t, filepath.Join(out, "sub", "ck"), "w.safetensors")
	if foreign, _, marked, err := foreignFiles(out); err != nil || !marked || len(foreign) != 0 {
		t.Errorf("nested output: foreign %v, marked %v, %v", foreign, marked, err)
	}
	mustWrite(t, filepath.Join(out, "sub", "ck", "mine.txt"), "x")
	if foreign, _, _, _ := foreignFiles(out); strings.Join(foreign, " ") != "sub/ck/mine.txt" {
		t.Errorf("a user's file in a nested output: %v", foreign)
	}
}

// unixOnly skips a test of what needs inodes and process ids (a moved
// folder stays jeirt's; a dead run's leftovers are cleaned up).
func unixOnly(t *testing.T) {
	if fileID(mustStat(t, t.TempDir())) == 0 {
		t.Skip("no inodes here: markers are checked by path, and no leftover is removed")
	}
}

func mustStat(t *testing.T, p string) os.FileInfo {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

// deadPid is the id of a process that has exited.
func deadPid(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// copyDir copies the files of folder src to dst, as cp -a does (new inodes).
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, _ := os.ReadFile(p)
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
}

// The clean-up after a killed run removes the temporary folders jeirt
// marked whose process is gone, never a user's folder named like one, a
// copy of a jeirt folder under such a name, or a live run's folder.
func TestOrphanCleanupKeepsUserFolders(t *testing.T) {
	unixOnly(t)
	parent := t.TempDir()
	res := filepath.Join(parent, "res")
	dead := deadPid(t)
	keep := []string{".res.tmp-mybackup", ".res.jeirt-tmp-mine", ".res.jeirt-tmp-x.old",
		fmt.Sprintf(".res.jeirt-tmp-%d-0badc0de-hand", dead)}
	for _, k := range keep {
		mustWrite(t, filepath.Join(parent, k, "precious.txt"), k)
	}
	// A copy of jeirt's folder (cp -a res .res.jeirt-tmp-backup) holding
	// notes, under a temporary name of a dead process too.
	writeMarked(t, filepath.Join(parent, "other"), "a.csv")
	for _, name := range []string{".res.jeirt-tmp-backup", fmt.Sprintf(".res.jeirt-tmp-%d-0badc0de-copy", dead)} {
		copyDir(t, filepath.Join(parent, "other"), filepath.Join(parent, name))
		mustWrite(t, filepath.Join(parent, name, "precious.txt"), name)
		keep = append(keep, name)
	}
	// A live run's folder (this process's own name) and a dead run's folder
	// whose marker is its own.
	live := filepath.Join(parent, tempPrefix("res")+"live")
	orphan := filepath.Join(parent, fmt.Sprintf(".res.jeirt-tmp-%d-0badc0de-123", dead))
	oldCopy := filepath.Join(parent, fmt.Sprintf(".res.jeirt-tmp-%d-0badc0de-456.old", dead))
	for _, p := range []string{live, orphan, oldCopy} {
		os.MkdirAll(p, 0o755)
		if err := writeMarker(p, res, newMarkerID(), p != oldCopy, nil); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite(t, filepath.Join(live, "precious.txt"), filepath.Base(live))
	keep = append(keep, filepath.Base(live))
	writeMarked(t, res, "a.csv")
	for _, gone := range []string{orphan, oldCopy} {
		if _, err := os.Stat(gone); !os.IsNotExist(err) {
			t.Errorf("a killed run's marked folder %s survived: %v", filepath.Base(gone), err)
		}
	}
	for _, k := range keep {
		if b, err := os.ReadFile(filepath.Join(parent, k, "precious.txt")); err != nil || string(b) != k {
			t.Errorf("%s: %v", k, err)
		}
	}
}

// A marker counts only in the folder it was written in: a copy (cp -a), a
// hand-written marker or one copied from another folder lets --force touch
// nothing; a folder moved with mv stays jeirt's.
func TestMarkerCannotBeCopiedOrForged(t *testing.T) {
	unixOnly(t)
	dir := t.TempDir()
	writeMarked(t, filepath.Join(dir, "res"), "fit.json")
	copyDir(t, filepath.Join(dir, "res"), filepath.Join(dir, "copy"))
	mustWrite(t, filepath.Join(dir, "proj", "thesis.tex"), "x")
	mustWrite(t, filepath.Join(dir, "proj", OutputMarker), `{"jeirt":"0.1.0","command":"jeirt irt fit","files":["thesis.tex"]}`)
	mustWrite(t, filepath.Join(dir, "proj2", "thesis.tex"), "x")
	m, _ := readMarker(filepath.Join(dir, "res"))
	m.Files = append(m.Files, "thesis.tex")
	b, _ := json.Marshal(m)
	mustWrite(t, filepath.Join(dir, "proj2", OutputMarker), string(b))
	if err := os.Rename(filepath.Join(dir, "res"), filepath.Join(dir, "moved")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, want string }{
		{"copy", "has been copied here"},
		{"proj", "was not written by this jeirt (its .jeirt-output.json has no id and no folder: it was written by hand or by an older jeirt; it holds .jeirt-output.json, thesis.tex)"},
		{"proj2", "has been copied here"},
		{"moved", ""},
	} {
		_, err := CheckOutput(Output{Path: filepath.Join(dir, c.name), Folder: true, Force: true})
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if err := CheckOwned(filepath.Join(dir, "copy"), "fit.json"); err == nil || !strings.Contains(err.Error(), "copied here") {
		t.Errorf("CheckOwned of a copy: %v", err)
	}
	if err := CheckOwned(filepath.Join(dir, "moved"), "fit.json"); err != nil {
		t.Errorf("CheckOwned of a moved folder: %v", err)
	}
	if err := CheckOwned(filepath.Join(dir, "moved"), "sweep.csv"); err == nil {
		t.Error("CheckOwned of a file the marker does not list")
	}
}

// A temporary file a killed run left beside a file output (data parquet
// killed mid-write) is removed by the next write of that file; a user's
// file of a similar name, and a live run's, are not.
func TestOrphanTempFiles(t *testing.T) {
	unixOnly(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "r.parquet")
	dead := deadPid(t)
	orphan := filepath.Join(dir, fmt.Sprintf(".r.parquet.jeirt-tmp-%d-0badc0de-777", dead))
	keep := []string{".r.parquet.jeirt-tmp-123", ".r.parquet.jeirt-tmp-mine", tempPrefix("r.parquet") + "live"}
	mustWrite(t, orphan, "half")
	for _, k := range keep {
		mustWrite(t, filepath.Join(dir, k), k)
	}
	if err := WriteFileAtomic(out, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(orphan); !os.IsNotExist(err) {
		t.Errorf("the killed run's temp file survived: %v", err)
	}
	for _, k := range keep {
		if b, err := os.ReadFile(filepath.Join(dir, k)); err != nil || string(b) != k {
			t.Errorf("%s: %q %v", k, b, err)
		}
	}
}

// A cache file replaced by a symlink to a user's file is replaced, never
// written through; a cache folder that is a symlink is refused.
func TestWriteCacheFileNoFollow(t *testing.T) {
	dir := t.TempDir()
	precious := filepath.Join(dir, "precious.txt")
	mustWrite(t, precious, "mine")
	cache := filepath.Join(dir, "cache")
	os.MkdirAll(cache, 0o755)
	entry := filepath.Join(cache, "x.cells")
	if err := os.Symlink(precious, entry); err != nil {
		t.Skip("no symlinks:", err)
	}
	write := func(w io.Writer) error { _, err := io.WriteString(w, "cache"); return err }
	if err := WriteCacheFile(entry, write); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(precious); string(b) != "mine" {
		t.Errorf("written through the link: %q", b)
	}
	if fi, err := os.Lstat(entry); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("the cache entry is not a regular file: %v", err)
	}
	os.Symlink(dir, filepath.Join(dir, "cachelink"))
	if err := WriteCacheFile(filepath.Join(dir, "cachelink", "precious.txt"), write); err == nil {
		t.Error("wrote into a cache folder that is a link")
	}
	if b, _ := os.ReadFile(precious); string(b) != "mine" {
		t.Errorf("written through the folder link: %q", b)
	}
}
