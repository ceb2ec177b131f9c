//go:build !linux

package main

// peakRSS is not measured off Linux.
func peakRSS() (int64, bool) { return 0, false }
