//go:build linux

package model

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

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

// lockDir takes an exclusive lock on ".NAME.lock" beside dir, waiting for
// another writer of the same folder to finish; the returned func removes the
// lock file and releases the lock. A writer that waited on a lock file that
// has since been removed sees that the path no longer names its file and
// locks anew.
func lockDir(dir string) (unlock func(), locked bool, err error) {
	path := filepath.Join(filepath.Dir(dir), "."+filepath.Base(dir)+".lock")
	for {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			return nil, false, fmt.Errorf("locking %s: %w", dir, err)
		}
		for {
			err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
			if !errors.Is(err, unix.EINTR) {
				break
			}
		}
		if err != nil {
			f.Close()
			return nil, false, fmt.Errorf("locking %s: %w", dir, err)
		}
		held, herr := f.Stat()
		now, nerr := os.Stat(path)
		if herr == nil && nerr == nil && os.SameFile(held, now) {
			return func() {
				os.Remove(path)
				unix.Flock(int(f.Fd()), unix.LOCK_UN)
				f.Close()
			}, true, nil
		}
		f.Close()
	}
}
