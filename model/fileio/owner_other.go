//go:build !unix

package fileio

import "os"

// fileID is 0 here: markers are checked by their recorded path.
func fileID(fi os.FileInfo) uint64 { return 0 }

// processGone cannot tell here, so nothing a killed run left is removed.
func processGone(pid int) bool { return false }

// noFollow is not available here; the callers check with Lstat first.
const noFollow = 0

// nonBlock opens a FIFO without waiting for a writer.
const nonBlock = 0
