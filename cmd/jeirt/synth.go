package main

import (
	"fmt"

	"github.com/jeirt/jeirt/cmd/internal/cli"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/synth"
	"github.com/spf13/cobra"
)

func newSynthCmd() *cobra.Command {
	var opt synth.Options
	var out, guess string
	var force bool
	cmd := &cobra.Command{
		Use:     "synth --kind 2pl|mirt|jeirt --n-models N --n-items J --out DIR",
		Short:   "Simulate responses with known ground truth, for recovery tests and benchmarks",
		Long:    helpText("synth"),
		Example: helpExamples("synth"),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return fmt.Errorf("synth: --out is required")
			}
			var err error
			if opt.Guess, err = synth.ParseGuess(guess); err != nil {
				return err
			}
			r, truth, err := synth.Generate(opt)
			if err != nil {
				return err
			}
			if err := cmd.Context().Err(); err != nil {
				return err
			}
			err = fileio.WriteDirAtomic(out, force, func(tmp string) error {
				return synth.WriteDir(tmp, opt, r, truth, version)
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %d models, %d items, %d observed cells, mean correct %.4f\n",
				out, r.NumModels(), r.NumItems(), r.Len(), r.MeanCorrect())
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&opt.Kind, "kind", synth.KindTwoPL, "generator: 2pl|mirt|jeirt")
	f.IntVar(&opt.Models, "n-models", 100, "number of models N")
	f.IntVar(&opt.Items, "n-items", 1000, "number of items J")
	f.IntVar(&opt.Rank, "rank", 0, "ability dimensions r for mirt (default 2; 2pl is 1)")
	f.Float64Var(&opt.Missing, "missing", 0, "fraction of cells missing completely at random")
	f.Int64Var(&opt.Seed, "seed", 1, "random seed")
	f.IntVar(&opt.FeatureDim, "dim", 32, "item feature dimension D (jeirt)")
	f.IntVar(&opt.EmbedDim, "embed-dim", 8, "embedding dimension d of q and m (jeirt)")
	f.StringVar(&guess, "guess", "", "lower asymptote c of every item, P = c + (1 − c)·sigmoid(x) (2pl, mirt: the 3PL)")
	f.IntVar(&opt.Trials, "trials", 0, "sample each cell n ~ U{1..N} times: successes,trials columns")
	f.IntVar(&opt.Levels, "levels", 0, "graded scores on L levels from 0 to 1, score = Binomial(L−1, P)/(L−1), in a graded_score column (read back as scores)")
	f.StringVar(&out, "out", "", "output folder (required)")
	f.BoolVar(&force, "force", false, "replace --out if it exists (only a folder jeirt wrote)")
	alias(cmd, "models", "n-models")
	alias(cmd, "items", "n-items")
	return cli.Guard(cmd, cli.Outputs{Folders: []string{"out"}})
}

func init() { rootCmd.AddCommand(newSynthCmd()) }
