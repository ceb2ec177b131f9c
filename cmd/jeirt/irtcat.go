package main

import (
	"fmt"

	"github.com/jeirt/jeirt/cmd/internal/catrun"
	"github.com/jeirt/jeirt/cmd/internal/cli"
	"github.com/spf13/cobra"
)

// newIRTCatCmd is jeirt irt cat (fresh flags each call, for tests).
func newIRTCatCmd() *cobra.Command {
	var c catrun.CAT
	var models string
	cmd := &cobra.Command{
		Use:     "cat --fit DIR (--data FILE --models M,... | --next N [--answers FILE])",
		Short:   "Adaptive testing on an IRT fit: simulate it on held-out models, or pick the next questions for a new one",
		Long:    helpText("irt-cat"),
		Example: helpExamples("irt-cat"),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c.Models, c.Version, c.Log = cli.ModelList(models), version, stderrLog(cmd)
			res, err := c.Run(cmd.Context(), cmd.OutOrStdout())
			if err != nil {
				return err
			}
			if c.Data != "" {
				if err := catrun.WriteSummary(cmd.OutOrStdout(), res); err != nil {
					return err
				}
			}
			if c.Out != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s\n", c.Out)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&c.Fit, "fit", "", "folder written by jeirt irt fit: the item bank and its prior (required)")
	f.StringVar(&c.Data, "data", "", "simulate: responses whose answers are replayed (any format jeirt reads)")
	f.StringVar(&models, "models", "", "comma-separated models to test (simulate, default: those of --data the fit does not have) or of --answers to continue")
	f.StringVar(&c.Answers, "answers", "", "live: the answers given so far (any responses format); continue from them")
	f.IntVar(&c.Next, "next", 0, "live: print the next N questions to ask each model (next.csv)")
	cli.ReadFlags(cmd, &c.Read)
	f.StringVar(&c.Test.Rule, "rule", "fisher", "fisher (maximum information; D-optimal at rank > 1), kl (Chang-Ying KL information, rank 1), d-optimal or random")
	f.StringVar(&c.Test.Estimator, "estimator", "map", "θ: map (posterior mode under the fit's prior) or eap (posterior mean, rank 1)")
	f.IntVar(&c.Test.Budget, "budget", 0, "stop after N items per model (0: no cap)")
	f.Float64Var(&c.Test.TargetSE, "target-se", 0, "stop once θ's standard error is at most S (0: no target)")
	f.IntVar(&c.Test.MinItems, "min-items", 0, "ask at least this many items before --target-se (or --target-score-width) may stop a test")
	f.Float64Var(&c.TargetScoreWidth, "target-score-width", 0, "simulate: stop once the 95% interval of the score on all the fit's items is at most this wide (0.04: ±2 points)")
	f.BoolVar(&c.ExcludeFlagged, "exclude-flagged", false, "never ask an item with a flag in the fit's items.csv (answers to them still count)")
	f.StringVar(&c.Groups, "groups", "", cli.GroupsUsage+": the groups are balanced at their share of the bank")
	f.StringVar(&c.GroupColumn, "group-column", "", "the group column of --groups (default: group, category or benchmark)")
	f.Float64Var(&c.Test.KLWidth, "kl-width", 3, "c of the KL rule's interval θ ± c/√n")
	f.Int64Var(&c.Seed, "seed", 42, "seed of --rule random (with each model's name)")
	f.StringVar(&c.Out, "out", "", "folder for abilities.csv, trace.csv, cat.json (and next.csv, live); written atomically")
	f.BoolVar(&c.Force, "force", false, "replace an existing --out folder")
	_ = cmd.MarkFlagRequired("fit")
	return cmd
}
