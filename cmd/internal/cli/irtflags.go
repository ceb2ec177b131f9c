package cli

import (
	"github.com/jeirt/jeirt/cmd/internal/irtrun"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/irtfit"
	"github.com/spf13/cobra"
)

// FitterFlags registers the flags that irt fit and irt cv share, into set:
// the 3PL's lower asymptotes (--guess, --guess-prior), σ, the stopping
// rule, and where and on how many goroutines the fit runs (deviceUsage: the
// --device help every command shares).
func FitterFlags(cmd *cobra.Command, set *irtfit.Settings, deviceUsage string) {
	f := cmd.Flags()
	f.StringVar(&set.Guess, "guess", "", "3PL lower asymptotes: a number for every item (0.25), or a column of --items (n_options: c = 1/n; or c itself); default: fitted by EM")
	f.Float64SliceVar(&set.GuessPrior, "guess-prior", nil, "Beta(α,β) prior on fitted lower asymptotes (default 5,17; 1,1: none)")
	PriorFlag(cmd, &set.Prior, "")
	f.Float64Var(&set.Sigma, "sigma", 1, "logistic scale σ")
	f.Float64Var(&set.Tol, "tol", 1e-6, "stop when the relative loss change is below this")
	f.IntVar(&set.MaxIter, "max-iter", 1000, "iteration cap")
	f.StringVar(&set.Device, "device", "auto", deviceUsage)
	f.IntVar(&set.Threads, "threads", 0, "goroutines (0: all cores)")
}

// PriorFlag registers --prior, the prior of an IRT fit in
// model.ParsePrior's grammar, into prior; what says which fits it sets
// ("" for the command's own fit).
func PriorFlag(cmd *cobra.Command, prior *string, what string) {
	if what != "" {
		what += ": "
	}
	cmd.Flags().StringVar(prior, "prior", "default", what+"prior on θ, a and d on the logit scale: default ("+model.DefaultPrior.String()+"), none (joint maximum likelihood), or terms PARAM=normal(MEAN,SD) or PARAM=none, PARAM theta, a or d (the others keep their default)")
}

// SelectFlags registers the flags of jeirt irt select on cmd, into s; the
// refit's --device is the fit's unless given.
func SelectFlags(cmd *cobra.Command, s *irtrun.Select) {
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
