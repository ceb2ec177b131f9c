//go:build !unix

package main

import "testing"

// mkfifoOrSkip skips the test: this system has no FIFOs.
func mkfifoOrSkip(t *testing.T, path string) { t.Skip("no FIFOs on this system") }
