package main

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// peakRSS is the resident set's high-water mark in bytes: VmHWM from
// /proc/self/status, else getrusage's maxrss (kilobytes on Linux).
func peakRSS() (int64, bool) {
	if f, err := os.Open("/proc/self/status"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
				if kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64); err == nil {
					return kb << 10, true
				}
			}
		}
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return int64(ru.Maxrss) << 10, true
}
