// Package sweeprun runs grids of `jeirt train` runs: sweep files, run folders, a
// Slurm job array script (Emit), local runs (RunLocal) and the table of their
// metrics.json files (package train/sweep, its manifest and table).
package sweeprun
