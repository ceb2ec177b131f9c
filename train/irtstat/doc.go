// Package irtstat says what a fitted IRT model says about its data: ranks,
// Kendall τ against accuracy, item flags and the papers' item diagnostics
// (item-total correlations, infit and outfit, reliability), information-based
// and BenchMIRT item selection, the bootstrap of the fit and k-fold
// cross-validation against the per-model baseline.
package irtstat
