// Package irt fits 2PL and multidimensional (rank-r) IRT models to
// item-level results, P(model i solves item j) = sigmoid((θ_i·a_j + b_j)/σ):
// joint maximum likelihood by cBMM, constrained block
// majorization-minimization (Qu, Heng, Zeng and Liu, "An Interpretable and
// Scalable Framework for Evaluating Large Language Models", arXiv:2605.07046,
// 2026, and its reference code JackQuu/cBMM; the batched hot loop runs on a
// train/backend device), the same objective by L-BFGS (LBFGS2PL) and
// marginal maximum likelihood by EM (MML2PL), with the gauges that identify a
// fit (StandardGauge, SignedGauge). What a fit says is package train/irtstat.
//
// Names follow cBMM's equations: theta, a, b (the intercept), sigma, yTilde
// (Ỹ) and the observed cells Ω. Files that users read follow mirt instead
// (see model/irtfit).
package irt
