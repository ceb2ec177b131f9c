// Package irt fits 2PL and multidimensional (rank-r) IRT models to
// item-level results, P(model i solves item j) = sigmoid((θ_i·a_j + b_j)/σ):
// by cBMM, constrained block majorization-minimization (Qu, Heng, Zeng and
// Liu, "An Interpretable and Scalable Framework for Evaluating Large
// Language Models", arXiv:2605.07046, 2026, and its reference code
// JackQuu/cBMM; the batched hot loop runs on a train/backend device), maximum
// a posteriori under a model.Prior or joint maximum likelihood without one
// (the same objective by L-BFGS is package train/irtlbfgs's, marginal
// maximum likelihood package train/irtmml's); each method is named only in
// Method and is a Fitter registered under its name, and a fit is a Spec
// (the rotations of multidimensional fits are package train/irt/rotate).
// StandardGauge identifies a joint maximum likelihood fit. What a fit says
// is package train/irtstat.
//
// Names follow cBMM's equations: theta, a, b (the intercept), sigma, yTilde
// (Ỹ) and the observed cells Ω. Files that users read follow mirt instead
// (see model/irtfit).
package irt
