package cli

import (
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
