//go:build !linux

package main

// peakRSS is not measured off Linux.
func peakRSS() (int64, bool) { return 0, false }

// cpuSeconds is not measured off Linux.
func cpuSeconds() float64 { return 0 }
