// Package eval scores predictions and holds what every trainer is compared
// with: Metrics (accuracy, AUC, log loss, Brier, ECE), the baselines
// (majority, per-model and per-item means, kNN over encoder vectors, the 2PL
// predictor, EmbedLLM's matrix factorisation, torch_measure's NCF, and the
// named fallback of the cells a baseline cannot predict), the
// train/validation/test splits, and rank statistics (Spearman, Kendall τ_b).
package eval
