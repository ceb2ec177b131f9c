package fileio

import "context"

// InputContext is the context that the run's reads honour (set by
// SetInputContext): readers that walk folders or scan data held in memory
// check it between files and inside long scans, as every read of an Input
// does.
func InputContext() context.Context { return inputContext() }
