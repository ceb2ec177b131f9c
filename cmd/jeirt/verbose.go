package main

import (
	"fmt"
	"time"

	"github.com/jeirt/jeirt/model/machine"
	"github.com/spf13/cobra"
)

// verbose is the global --verbose flag: commands say how long reading took,
// what the response cache did, and the process's peak memory at the end.
var verbose bool

func init() {
	rootCmd.PersistentFlags().BoolVar(&verbose, "verbose", false, "report read times, the response cache and peak memory (resident set high-water mark)")
	rootCmd.PersistentPostRun = func(cmd *cobra.Command, _ []string) {
		if !verbose {
			return
		}
		if peak, ok := peakRSS(); ok {
			fmt.Fprintf(cmd.ErrOrStderr(), "peak memory: %.0f MB resident (%s after start, %.1fs CPU)\n", float64(peak)/1e6, time.Since(started).Round(time.Millisecond), machine.CPUSeconds())
		}
	}
}

// started is when the process began, for --verbose.
var started = time.Now()
