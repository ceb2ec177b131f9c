// Package analyzerun runs the jeirt analyze commands end to end: it reads
// checkpoints, fits, item files and sweeps, runs the analyses of package
// train/analyze, prints their summaries and writes their files atomically.
package analyzerun
