// Package analyze holds the analyses the JE-IRT and BenchMIRT papers draw
// their conclusions from, as functions over fitted models that `jeirt
// analyze` writes to CSV:
//
//   - Directions: do question directions cluster by subject (spherical
//     k-means; adjusted Rand index and NMI against the category column);
//   - Probe: a difference-of-means axis between two groups of questions and
//     each model's projection on it;
//   - ICC: empirical item characteristic curves against the fitted 2PL,
//     flagging non-monotone items and items whose best slope is negative;
//   - Dims: accuracy and log loss against the embedding dimension of a sweep;
//   - Groups: benchmark or subject names derived from item ids or texts, for
//     data whose item file has no category column.
package analyze
