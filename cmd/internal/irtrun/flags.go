package irtrun

import (
	"github.com/jeirt/jeirt/cmd/internal/cli"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/estimate"
	"github.com/spf13/cobra"
)

// EstimateFlags registers the flags of jeirt irt estimate on cmd, into e
// (models: the --models list, for ModelList).
func EstimateFlags(cmd *cobra.Command, e *Estimate, models *string) {
	f := cmd.Flags()
	f.StringVar(&e.Fit, "fit", "", "folder written by jeirt irt fit: the items whose full score is estimated")
	f.StringVar(&e.Answers, "answers", "", "the new models' answers to some of the fit's items (any responses format)")
	f.StringVar(models, "models", "", "comma-separated models of --answers (default: every model with an answer)")
	f.StringVar(&e.Weights, "weights", "", "the CSV of jeirt irt select (--rule anchor-rank, anchor, anchor-correct or random): only the answers to the items it lists count, each with its weight, its share of the bank (default: every answer, equal weights)")
	f.StringVar(&e.Categories, "by-category", "", "item-group CSV (item and category, group or benchmark): also estimate each category (categories.csv)")
	f.StringSliceVar(&e.Estimators, "estimator", nil, "default (blend), blend (IRT + shrunk residual of the answered items), irt (p-IRT), gp-irt (tinyBenchmarks) or mean; a list with --eval")
	f.Float64Var(&e.Level, "level", 0.95, "interval level")
	f.Float64Var(&e.PriorDF, "prior-df", estimate.DefaultPriorDF, "blend: degrees of freedom of its Student-t priors on θ (the fitted abilities' mean and sd) and on the residual (the fitted models' spread), so that a model unlike the fitted ones is not pulled back to them; 0: normal priors")
	f.StringVar(&e.Out, "out", "", "folder for estimates.csv (and categories.csv); written atomically")
	f.BoolVar(&e.Force, "force", false, "replace an existing --out folder")
	f.BoolVar(&e.Eval, "eval", false, "measure: split the models of --data, fit the rest, select --budget items by each --rule, estimate the held-out models' scores and print MAE and coverage")
	f.BoolVar(&e.CV, "cv", false, "choose the estimator: --eval of every estimator under the default rule (anchor-rank; or --rule) on --data, the lowest MAE marked *")
	f.StringVar(&e.Data, "data", "", "--eval: the response file")
	cli.ReadFlags(cmd, &e.Read)
	f.StringVar(&e.By, "by", "model", "--eval: what is split (model)")
	f.Float64Var(&e.Eval1.TestFraction, "test-fraction", 0.2, "--eval: share of the models held out in each split")
	f.IntVar(&e.Eval1.Budget, "budget", 0, "--eval: items K asked of each held-out model (0: min(100, 10% of the items))")
	f.StringSliceVar(&e.Eval1.Rules, "rule", nil, "--eval: selection rules, of random, anchor, anchor-correct, anchor-rank and info (default: all)")
	f.IntVar(&e.Eval1.Seeds, "seeds", 10, "--eval: number of model splits")
	f.Int64Var(&e.Eval1.Seed, "seed", 42, "--eval: seed of the splits and of the selection")
	f.StringVar(&e.SplitsOut, "splits-out", "", "--eval: write each split's held-out models to this CSV (split,model), to measure a peer on the same splits (replaced only with --force)")
	f.IntVar(&e.Fitting.Rank, "rank", 1, "--eval: ability dimensions r of the fits")
	f.IntSliceVar(&e.Eval1.Ranks, "ranks", nil, "--eval: choose each split's rank among these (e.g. 1,2,5) by p-IRT's error on validation models, as tinyBenchmarks chooses its dimension; prints each rank's error, how often chosen and whether its fits converged (replaces --rank)")
	f.StringVar(&e.Fitting.Model, "model", model.TwoPL.String(), "--eval: response function of the fits (1pl or 2pl)")
	cli.PriorFlag(cmd, &e.Fitting.Prior, "--eval")
}

// SelectFlags registers the flags of jeirt irt select on cmd, into s; the
// refit's --device is the fit's unless given.
func SelectFlags(cmd *cobra.Command, s *Select) {
	f := cmd.Flags()
	f.StringVar(&s.Fit, "fit", "", "folder written by jeirt irt fit (required)")
	f.Float64Var(&s.Keep, "keep", 0.1, "fraction of items to keep, in (0, 1]")
	f.StringVar(&s.Out, "out", "", "CSV of the kept items (required; an existing file only with --force)")
	f.String("device", "", "auto|cpu|cpu:fused|cuda for the refit of the ranking check (default: the fit's)")
	f.StringVar(&s.Rule, "rule", "", "default: anchor-rank with --budget (irt estimate's default rule), info with --keep; info (the most informative item at each of 13 abilities in turn), benchmirt (difficulty bins, the most discriminating items of each), anchor (k-medoids of the items' (a, d), each weighted by its cluster's size), anchor-rank (the same on the ranks of a and d: clusters of about equal size; irt estimate's default), anchor-correct (k-medoids of the items' answers) or random")
	f.IntVar(&s.Budget, "budget", 0, "keep this many items instead of --keep's fraction")
	f.Int64Var(&s.Seed, "seed", 42, "seed of --rule anchor, anchor-rank, anchor-correct and random")
	f.IntVar(&s.Bins, "bins", 10, "difficulty bins of --rule benchmirt")
	f.BoolVar(&s.ExcludeFlagged, "exclude-flagged", false, "never keep an item with a flag in items.csv (never_solved, always_solved, uninformative, misfit, negative_item_total, weak_item_total)")
	_ = cmd.MarkFlagRequired("fit")
	_ = cmd.MarkFlagRequired("out")
}
