package machine

import (
	"syscall"
)

// CPUSeconds is the CPU time (user and system) the process has used so far,
// for the --verbose reports; 0 where it cannot be measured.
func CPUSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
