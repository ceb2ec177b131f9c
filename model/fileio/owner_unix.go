//go:build unix

package fileio

import (
	"errors"
	"os"
	"syscall"
)

// fileID is the inode of fi, or 0 where the system gives none.
func fileID(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}

// processGone reports whether no process pid exists (a process of another
// user answers EPERM: it exists).
func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// noFollow is the open flag that refuses a symlink as the last part.
const noFollow = syscall.O_NOFOLLOW

// nonBlock opens a FIFO without waiting for a writer.
const nonBlock = syscall.O_NONBLOCK
