package fileio

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// WriteFileAtomic writes path by calling write on a temporary file in the same
// folder and renaming it into place only when write and the flush succeed, so a
// failed or interrupted run never leaves a half-written file.
//
// A symlink at path is written through: its target is replaced. The
// temporary files an earlier, killed run left beside path (named for its
// process, which is gone) are removed.
func WriteFileAtomic(path string, write func(w io.Writer) error) (err error) {
	if real, rerr := ResolvePath(path); rerr == nil {
		path = real
	}
	return writeFileAtomic(path, write)
}

// WriteCacheFile is WriteFileAtomic for a file in jeirt's own cache: the
// path is never followed. A symlink at path (or anything else that is not a
// regular file) is replaced by the new file, never written through, and a
// cache folder that is a symlink is refused.
func WriteCacheFile(path string, write func(w io.Writer) error) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if fi, err := os.Lstat(dir); err != nil {
		return err
	} else if !fi.IsDir() {
		return fmt.Errorf("cache folder %s is a symbolic link or not a folder; jeirt writes its cache only into a folder of its own", dir)
	}
	return writeFileAtomic(path, write)
}

// writeFileAtomic writes path (not resolved: a link there is replaced) by
// a temporary file and a rename.
func writeFileAtomic(path string, write func(w io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	removeOrphanFiles(path)
	f, err := os.CreateTemp(dir, tempPrefix(filepath.Base(path))+"*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	if err = write(bw); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = bw.Flush(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	// CreateTemp makes the file private (0600); outputs are ordinary files.
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	crashPoint("file-written")
	if err = os.Rename(f.Name(), path); err != nil {
		return err
	}
	syncDir(dir)
	return nil
}

// WriteDirAtomic builds a folder by calling fill on a temporary sibling folder
// and moving it to dir when fill succeeds. An existing dir is replaced only
// when replace is true, and then only when it is a folder jeirt wrote (the
// output rule, CheckOutput); otherwise it is an error. The folder gets a
// marker (OutputMarker) listing what fill wrote. dir is resolved
// (ResolvePath) first: a symlink to a folder writes the folder.
//
// Whatever step a run is killed at, dir holds either the old folder or the
// new one, complete: the files are flushed to disk before the move, and on
// Linux the replace is one atomic exchange of the two folders
// (renameat2 RENAME_EXCHANGE); where the exchange is not available, the old
// folder is renamed aside first and a killed run can leave dir briefly
// absent, with the old folder kept as a ".old" sibling. Writers of the same
// dir are serialised by a lock file beside it (".NAME.jeirt-lock"), and the lock
// holder removes the temporary siblings a killed run left behind (only
// those named for a process that is gone and holding their own marker).
func WriteDirAtomic(dir string, replace bool, fill func(tmp string) error) error {
	return WriteDirAtomicLater(dir, replace, nil, fill)
}

// WriteDirAtomicLater is WriteDirAtomic for a folder that jeirt adds files
// to after it is written (a sweep's run logs): later are the path.Match
// patterns of those files, relative to dir, which the marker records so
// that a --force replace counts them as jeirt's.
func WriteDirAtomicLater(dir string, replace bool, later []string, fill func(tmp string) error) (err error) {
	given := dir
	if dir, err = ResolvePath(dir); err != nil {
		return fmt.Errorf("output %s: %w", given, err)
	}
	parent := filepath.Dir(dir)
	if err := checkExisting(given, dir, true, replace); err != nil {
		return err
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	unlock, locked, err := claimDir(dir, true)
	if err != nil {
		return err
	}
	defer unlock()
	if locked {
		removeOrphans(dir)
	}
	// Again under the lock: another writer may have been first.
	if err := checkExisting(given, dir, true, replace); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, tempPrefix(filepath.Base(dir))+"*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	// MkdirTemp makes the folder private (0700); outputs are ordinary folders.
	if err = os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	// Marked from the start, so that the clean-up after a killed run knows
	// the folder is jeirt's.
	id := newMarkerID()
	if err = writeMarker(tmp, dir, id, true, later); err != nil {
		return err
	}
	if err = fill(tmp); err != nil {
		return err
	}
	if err = writeMarker(tmp, dir, id, false, later); err != nil {
		return err
	}
	crashPoint("filled")
	if err = syncTree(tmp); err != nil {
		return fmt.Errorf("flushing %s: %w", dir, err)
	}
	crashPoint("synced")
	if _, statErr := os.Stat(dir); statErr == nil {
		swapped, xerr := exchange(tmp, dir)
		if xerr != nil {
			return xerr
		}
		if swapped {
			// tmp now holds the old folder.
			crashPoint("exchanged")
			syncDir(parent)
			crashPoint("parent-synced")
			os.RemoveAll(tmp)
			return nil
		}
		old := tmp + ".old"
		if err = os.Rename(dir, old); err != nil {
			return err
		}
		crashPoint("moved-aside")
		defer os.RemoveAll(old)
	}
	if err = os.Rename(tmp, dir); err != nil {
		return err
	}
	crashPoint("renamed")
	syncDir(parent)
	return nil
}

// crashPoint is a test hook: a test binary run with JEIRT_CRASH_AT=NAME
// exits at once (as a kill would: no deferred cleanup) when the write
// reaches the step NAME.
func crashPoint(name string) {
	if crashAt != "" && crashAt == name {
		os.Exit(3)
	}
}

var crashAt = os.Getenv("JEIRT_TEST_CRASH_AT")

// syncTree flushes every file of the folder tree root and the folders
// themselves.
func syncTree(root string) error {
	return filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && !d.Type().IsRegular() {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		serr := f.Sync()
		cerr := f.Close()
		if serr != nil && !d.IsDir() {
			return serr
		}
		return cerr
	})
}

// syncDir flushes a folder's entries (best effort: some file systems refuse
// to sync a folder).
func syncDir(dir string) {
	if f, err := os.Open(dir); err == nil {
		f.Sync()
		f.Close()
	}
}

// removeOrphans deletes the temporary siblings of dir that a killed run
// left: ".NAME.jeirt-tmp-PID-NONCE-*" folders and their ".old" copies whose
// process is gone, and only those holding their own marker (checkOwn):
// in progress, or complete (an old folder swapped out) with nothing in it
// that the marker does not list. A user's folder of a similar name, a copy
// of a jeirt folder under such a name, or a folder a live run is filling
// is left alone. Only the holder of dir's lock calls it.
func removeOrphans(dir string) {
	matches, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), "."+globEscape(filepath.Base(dir))+tempTag+"*"))
	for _, p := range matches {
		base, pid, nonce, ok := tempOwner(filepath.Base(p))
		if !ok || base != filepath.Base(dir) || !tempOwnerGone(pid, nonce) {
			continue
		}
		if fi, err := os.Lstat(p); err != nil || !fi.IsDir() {
			continue
		}
		m, err := readOwnMarker(p)
		if err != nil {
			continue
		}
		if !m.InProgress {
			if foreign, _, marked, err := foreignFiles(p); err != nil || !marked || len(foreign) > 0 {
				continue
			}
		}
		os.RemoveAll(p)
	}
}

// removeOrphanFiles deletes the temporary files a killed run left beside
// the file path: regular files named ".NAME.jeirt-tmp-PID-NONCE-*" whose
// process is gone.
func removeOrphanFiles(path string) {
	matches, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "."+globEscape(filepath.Base(path))+tempTag+"*"))
	for _, p := range matches {
		base, pid, nonce, ok := tempOwner(filepath.Base(p))
		if !ok || base != filepath.Base(path) || !tempOwnerGone(pid, nonce) {
			continue
		}
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
			os.Remove(p)
		}
	}
}

// globEscape quotes the metacharacters of filepath.Match in s.
func globEscape(s string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', '\\':
			b = append(b, '\\')
		}
		b = append(b, s[i])
	}
	return string(b)
}

// LockOutput claims the output folder dir for this run, before the run does
// its work: a second run that claims the same folder fails at once, naming
// the holder, instead of finding out when it writes. WriteDirAtomic of dir
// in this process goes ahead while the claim is held. Release the claim
// when the run ends: the folders the claim made to hold its lock are
// removed again when they are still empty (a run that fails leaves none).
func LockOutput(dir string) (release func(), err error) {
	if dir, err = ResolvePath(dir); err != nil {
		return nil, err
	}
	var made []string
	for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); err == nil || filepath.Dir(p) == p {
			break
		}
		made = append(made, p)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, err
	}
	unlock, _, err := lockDir(dir, false)
	if err != nil {
		return nil, err
	}
	unlock = func(u func()) func() {
		return func() {
			u()
			for _, p := range made {
				os.Remove(p) // only when empty
			}
		}
	}(unlock)
	key := dirKey(dir)
	locks.Lock()
	locks.claims[key]++
	locks.Unlock()
	return func() {
		locks.Lock()
		locks.claims[key]--
		locks.Unlock()
		unlock()
	}, nil
}

// locks holds, per output folder of this process, the LockOutput claims and
// a mutex that serialises this process's writers (the file lock serialises
// processes).
var locks = struct {
	sync.Mutex
	claims map[string]int
	mu     map[string]*sync.Mutex
}{claims: map[string]int{}, mu: map[string]*sync.Mutex{}}

func dirKey(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}

// claimDir serialises the writers of dir: this process's through a mutex,
// other processes' through the lock file, unless a LockOutput claim of this
// process already holds it. locked reports whether the file lock is held.
func claimDir(dir string, wait bool) (unlock func(), locked bool, err error) {
	key := dirKey(dir)
	locks.Lock()
	mu := locks.mu[key]
	if mu == nil {
		mu = &sync.Mutex{}
		locks.mu[key] = mu
	}
	locks.Unlock()
	mu.Lock()
	locks.Lock()
	claimedHere := locks.claims[key] > 0
	locks.Unlock()
	if claimedHere {
		return mu.Unlock, true, nil
	}
	release, locked, err := lockDir(dir, wait)
	if err != nil {
		mu.Unlock()
		return nil, false, err
	}
	return func() { release(); mu.Unlock() }, locked, nil
}

// lockSuffix ends the name of the lock file beside an output folder,
// ".NAME.jeirt-lock": a name only jeirt uses, so a user's ".NAME.lock" is
// never taken for one.
const lockSuffix = ".jeirt-lock"

// lockPath is the lock file of output folder dir.
func lockPath(dir string) string {
	return filepath.Join(filepath.Dir(dir), "."+filepath.Base(dir)+lockSuffix)
}

// holderPrefix starts the text of every lock file jeirt writes.
const holderPrefix = "jeirt lock: "

// holderText names this process in a lock file.
func holderText() string {
	return fmt.Sprintf("%sprocess %d: %s, since %s\n", holderPrefix, os.Getpid(), clipArgs(os.Args), time.Now().UTC().Format(time.RFC3339))
}

// clipArgs is the command line, shortened for a message.
func clipArgs(args []string) string {
	s := strings.Join(args, " ")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}
