package slurm

import (
	"bufio"
	"io"
	"os"
	"slices"
	"strings"
	"syscall"
)

// A job folder's tasks write their logs where the script's --output says
// (Slurm writes them, not jeirt), so the folder's marker can only name
// them by pattern. A file that matches the pattern is taken as one of the
// folder's logs only when the folder's record lists the job its name
// carries, or when it holds the first line the script prints (Banner):
// a user's file named like a log is never replaced or removed.

// bannerScan is how much of a log is searched for the script's banner.
const bannerScan = 64 << 10

// JobIDs lists the jobs the record of folder dir says it submitted (none
// when it has no readable record of its own).
func JobIDs(dir string) []string {
	a, err := ReadRecord(dir)
	if err != nil {
		return nil
	}
	var ids []string
	for _, j := range a.Jobs {
		ids = append(ids, j.ID)
	}
	if a.After != nil {
		for _, j := range a.After.Jobs {
			ids = append(ids, j.ID)
		}
	}
	return ids
}

// OwnsLog reports whether the file p is a log of one of the folder's
// jobs: a plain file whose job id (from its name) is among ids, or which
// holds a line starting with banner.
func OwnsLog(p, jobID string, ids []string, banner string) bool {
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	if slices.Contains(ids, jobID) {
		return true
	}
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, bannerScan))
	sc.Buffer(make([]byte, 4096), bannerScan)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), banner) {
			return true
		}
	}
	return false
}
