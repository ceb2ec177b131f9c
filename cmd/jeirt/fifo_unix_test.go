//go:build unix

package main

import (
	"syscall"
	"testing"
)

// mkfifoOrSkip makes a FIFO at path, or skips the test where none can be made.
func mkfifoOrSkip(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
}
