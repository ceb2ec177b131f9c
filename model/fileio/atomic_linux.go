//go:build linux

package fileio

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// exchange swaps the folders a and b in one step (renameat2 with
// RENAME_EXCHANGE). It reports false, without error, where the file system
// or kernel cannot exchange, so the caller falls back to two renames.
func exchange(a, b string) (bool, error) {
	err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EOPNOTSUPP):
		return false, nil
	default:
		return false, &os.LinkError{Op: "exchange", Old: a, New: b, Err: err}
	}
}

// lockDir takes an exclusive lock on ".NAME.jeirt-lock" beside dir; when
// wait is false and another process holds it, it fails at once naming the
// holder. The lock file is created with O_CREAT|O_EXCL|O_NOFOLLOW; one that
// is already there is opened with O_NOFOLLOW (a symlink there is refused,
// never followed) and taken only when it is a regular file holding a jeirt
// holder line, left by a run that is gone (its flock is free). The returned
// func releases the lock and removes the lock file only when this process
// created it and it is still the file at the path. A writer that waited on
// a lock file that has since been removed sees that the path no longer
// names its file and locks anew.
func lockDir(dir string, wait bool) (unlock func(), locked bool, err error) {
	path := lockPath(dir)
	for {
		created := true
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDWR|unix.O_NOFOLLOW, 0o644)
		if errors.Is(err, fs.ErrExist) {
			created = false
			f, err = os.OpenFile(path, os.O_RDWR|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
			if errors.Is(err, fs.ErrNotExist) {
				continue // released meanwhile
			}
			if errors.Is(err, unix.ELOOP) {
				return nil, false, fmt.Errorf("locking %s: %s is a symbolic link, and jeirt's lock file never is one: it was not made by jeirt; move it away", dir, path)
			}
		}
		if err != nil {
			return nil, false, fmt.Errorf("locking %s: %w", dir, err)
		}
		held, err := f.Stat()
		if err != nil || !held.Mode().IsRegular() {
			f.Close()
			return nil, false, fmt.Errorf("locking %s: %s is not a regular file, so it is not jeirt's lock file; move it away", dir, path)
		}
		how := unix.LOCK_EX
		if !wait && !created {
			// A file this process created is only ever flocked for a moment
			// by another process that found it (below): wait for that.
			how |= unix.LOCK_NB
		}
		for {
			err = unix.Flock(int(f.Fd()), how)
			if !errors.Is(err, unix.EINTR) {
				break
			}
		}
		if errors.Is(err, unix.EWOULDBLOCK) {
			holder, _ := io.ReadAll(io.LimitReader(f, 512))
			f.Close()
			return nil, false, fmt.Errorf("%s is being written by another run (%s); wait for it or choose another output folder",
				dir, strings.TrimPrefix(strings.TrimSpace(string(holder)), holderPrefix))
		}
		if err != nil {
			f.Close()
			return nil, false, fmt.Errorf("locking %s: %w", dir, err)
		}
		if now, err := os.Lstat(path); err != nil || !os.SameFile(held, now) {
			f.Close()
			continue
		}
		if !created {
			text, _ := io.ReadAll(io.LimitReader(f, 512))
			switch {
			case len(text) == 0 && time.Since(held.ModTime()) < 5*time.Second:
				// Its creator has not written its holder line yet.
				unix.Flock(int(f.Fd()), unix.LOCK_UN)
				f.Close()
				time.Sleep(20 * time.Millisecond)
				continue
			case len(text) > 0 && !strings.HasPrefix(string(text), holderPrefix):
				f.Close()
				return nil, false, fmt.Errorf("locking %s: %s holds text that is not a jeirt lock's, so it is not jeirt's lock file; move it away", dir, path)
			}
		}
		f.Truncate(0)
		f.WriteAt([]byte(holderText()), 0)
		return func() {
			if now, err := os.Lstat(path); created && err == nil && os.SameFile(held, now) {
				os.Remove(path)
			}
			unix.Flock(int(f.Fd()), unix.LOCK_UN)
			f.Close()
		}, true, nil
	}
}
