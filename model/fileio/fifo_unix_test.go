//go:build unix

package fileio

import (
	"syscall"
	"testing"
)

// mkfifo makes a FIFO, or skips the test where there are none.
func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
}
