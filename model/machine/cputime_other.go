//go:build !linux

package machine

// CPUSeconds is the CPU time the process has used so far; 0 off Linux.
func CPUSeconds() float64 { return 0 }
