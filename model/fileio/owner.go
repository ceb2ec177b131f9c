package fileio

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// What makes a file or folder jeirt's, beyond its name:
//
//   - an output folder's marker records the folder's absolute path, a random
//     id, and the identity (inode) of the folder and of the marker file
//     itself when it was written; a marker counts only in the folder it was
//     written in: a copy (cp -a, a restored backup, a folder moved to another
//     disk) has new inodes, and a hand-written marker has none, so neither
//     lets --force or the clean-up touch anything. A folder moved with mv on
//     the same disk keeps its inodes and stays jeirt's. Where the system has
//     no inodes, the recorded path must match instead.
//   - a temporary name carries the process that made it,
//     ".NAME.jeirt-tmp-PID-NONCE-RANDOM" (NONCE is random per process, so a
//     process id reused, as in a container where every run is process 1,
//     still tells two runs apart); the clean-up removes only those whose
//     process is gone.

// processNonce tells this process's temporary names from those of an
// earlier process with the same id.
var processNonce = func() string {
	b := make([]byte, 4)
	rand.Read(b)
	return hex.EncodeToString(b)
}()

// tempPrefix is the start of the temporary names this process makes beside
// base: ".base.jeirt-tmp-PID-NONCE-" (the caller adds the random part).
func tempPrefix(base string) string {
	return "." + base + tempTag + strconv.Itoa(os.Getpid()) + "-" + processNonce + "-"
}

// tempOwner parses a temporary name ".BASE.jeirt-tmp-PID-NONCE-RANDOM[.old]"
// into BASE and the process that made it; ok is false for any other name
// (a user's ".res.jeirt-tmp-backup" among them).
func tempOwner(name string) (base string, pid int, nonce string, ok bool) {
	if !strings.HasPrefix(name, ".") {
		return "", 0, "", false
	}
	i := strings.Index(name, tempTag)
	if i <= 1 {
		return "", 0, "", false
	}
	parts := strings.SplitN(name[i+len(tempTag):], "-", 3)
	if len(parts) != 3 || parts[2] == "" || len(parts[1]) != 8 {
		return "", 0, "", false
	}
	pid, err := strconv.Atoi(parts[0])
	if err != nil || pid <= 0 || strconv.Itoa(pid) != parts[0] {
		return "", 0, "", false
	}
	if _, err := hex.DecodeString(parts[1]); err != nil {
		return "", 0, "", false
	}
	return name[1:i], pid, parts[1], true
}

// tempOwnerGone reports whether the process that made the temporary name
// is gone (so what it left may be removed). Where that cannot be told, it
// reports false: a live writer's files are never removed.
func tempOwnerGone(pid int, nonce string) bool {
	if pid == os.Getpid() {
		return nonce != processNonce
	}
	return processGone(pid)
}

// newMarkerID is a random id for a marker.
func newMarkerID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// errNotOwn is what a marker that does not belong to its folder gives.
type errNotOwn struct{ why string }

func (e *errNotOwn) Error() string { return e.why }

// checkOwn reports, as an *errNotOwn, why the marker m read from folder
// dir does not count there (nil when it does).
func checkOwn(dir string, m *outputMarker) error {
	if m.ID == "" || m.Folder == "" {
		return &errNotOwn{"its " + OutputMarker + " has no id and no folder: it was written by hand or by an older jeirt"}
	}
	dfi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	mfi, err := os.Lstat(filepath.Join(dir, OutputMarker))
	if err != nil {
		return err
	}
	if !mfi.Mode().IsRegular() {
		return &errNotOwn{"its " + OutputMarker + " is not a regular file"}
	}
	din, min := fileID(dfi), fileID(mfi)
	if din != 0 && min != 0 {
		if m.Inode != din || m.MarkerInode != min {
			return &errNotOwn{fmt.Sprintf("its %s was written for %s and has been copied here (a copy or a restored backup is not jeirt's output)", OutputMarker, m.Folder)}
		}
		return nil
	}
	if real, err := ResolvePath(dir); err != nil || real != m.Folder {
		return &errNotOwn{fmt.Sprintf("its %s was written for %s, not for this folder", OutputMarker, m.Folder)}
	}
	return nil
}

// readOwnMarker reads the marker of folder dir and checks that it is the
// folder's own (checkOwn).
func readOwnMarker(dir string) (*outputMarker, error) {
	m, err := readMarker(dir)
	if err != nil {
		return nil, err
	}
	if err := checkOwn(dir, m); err != nil {
		return nil, err
	}
	return m, nil
}

// CheckOwned returns nil when folder dir was written by jeirt (its marker is
// its own) and the file rel (a slash path) is one jeirt writes there, and
// otherwise an error saying why it may not be written: a command that adds
// a file to a folder it did not create (sweep collect's table) asks first.
func CheckOwned(dir, rel string) error {
	m, err := readOwnMarker(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s was not written by jeirt (it has no %s); refusing to write %s into it", dir, OutputMarker, rel)
	}
	var notOwn *errNotOwn
	if errors.As(err, &notOwn) {
		return fmt.Errorf("%s: %s; refusing to write %s into it", dir, notOwn.why, rel)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	if !ownsPath(m, rel) {
		return fmt.Errorf("%s: jeirt does not write %s there (its %s does not list it)", dir, rel, OutputMarker)
	}
	if fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(rel))); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file; refusing to replace it", filepath.Join(dir, rel))
	}
	return nil
}
