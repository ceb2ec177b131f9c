//go:build !unix

package fileio

import "testing"

// mkfifo skips the test: this system has no FIFOs.
func mkfifo(t *testing.T, path string) { t.Skip("no FIFOs on this system") }
