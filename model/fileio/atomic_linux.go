//go:build linux

package fileio

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

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

// lockDir takes an exclusive lock on ".NAME.lock" beside dir; when wait is
// false and another process holds it, it fails at once naming the holder.
// The returned func removes the lock file and releases the lock. A writer
// that waited on a lock file that has since been removed sees that the path
// no longer names its file and locks anew.
func lockDir(dir string, wait bool) (unlock func(), locked bool, err error) {
	path := lockPath(dir)
	how := unix.LOCK_EX
	if !wait {
		how |= unix.LOCK_NB
	}
	for {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			return nil, false, fmt.Errorf("locking %s: %w", dir, err)
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
				dir, strings.TrimSpace(string(holder)))
		}
		if err != nil {
			f.Close()
			return nil, false, fmt.Errorf("locking %s: %w", dir, err)
		}
		held, herr := f.Stat()
		now, nerr := os.Stat(path)
		if herr == nil && nerr == nil && os.SameFile(held, now) {
			f.Truncate(0)
			f.WriteAt([]byte(holderText()), 0)
			return func() {
				os.Remove(path)
				unix.Flock(int(f.Fd()), unix.LOCK_UN)
				f.Close()
			}, true, nil
		}
		f.Close()
	}
}
