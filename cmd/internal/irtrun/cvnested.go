package irtrun

import (
	"fmt"
	"io"

	"github.com/jeirt/jeirt/train/irtstat"
)

// CVHelp is jeirt irt cv's long help: what it does and what its columns
// and nested comparisons say.
const CVHelp = `k-fold cross-validation over cells: every observed cell is held out once and
predicted by the fit on the other folds (each --model and --rank given, on the
same folds), beside the per-model accuracy baseline (and, with item groups, the
per-benchmark average).

Columns (pooled over the held-out cells of all folds; a cell of n trials
counts n answers):
  log_loss   mean -[y log p + (1 - y) log(1 - p)] per answer; lower is better
  accuracy   share of cells whose rounded prediction (p >= 0.5) is the rounded outcome
  auc        area under the ROC curve of p against the rounded outcome
  brier      mean (y - p)^2 per answer; lower is better
  ece        expected calibration error over 10 bins of p; lower is better
  spearman, kendall
             rank correlation of each model's mean prediction over its
             held-out cells with its accuracy on them
  *          the fit with the lowest held-out log loss

Nested models (1PL in 2PL in 3PL at one rank, rank r-1 in rank r of one
model) are compared on the same held-out cells, one line per pair: the
larger model's log loss minus the smaller's, per answer (negative: the
larger predicts better), its standard error clustered by model, z, and the
verdict at |z| > 1.96 (otherwise: no difference, prefer the smaller model).
A held-out comparison rather than a likelihood-ratio test: the fits are joint
(abilities estimated with the items) and, by default, under a prior, where
the likelihood ratio has no chi-squared reference.`

// writeNested prints the nested comparisons of res under the table.
func writeNested(w io.Writer, res *irtstat.CVResult) {
	if len(res.Nested) == 0 {
		return
	}
	fmt.Fprintln(w, "nested models (held-out log loss per answer, larger minus smaller; negative: the larger predicts better):")
	for _, n := range res.Nested {
		fmt.Fprintf(w, "  %s\n", n)
	}
}
