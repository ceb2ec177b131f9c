package main

import (
	"fmt"
	"strconv"

	"github.com/jeirt/jeirt/cmd/internal/catrun"
	"github.com/jeirt/jeirt/cmd/internal/cli"
	"github.com/jeirt/jeirt/cmd/internal/onboardrun"
	"github.com/jeirt/jeirt/train/onboard"
	"github.com/spf13/cobra"
)

func newAddModelCmd() *cobra.Command {
	var a onboardrun.AddRun
	var models string
	var asJSON bool
	var sug onboardrun.SuggestRun
	var place catrun.Place
	opt := &a.Options
	cmd := &cobra.Command{
		Use:     "add-model (--checkpoint DIR | --fit DIR) --data FILE [--models a,b] [--fraction F] [--out DIR]",
		Short:   "Place new models on a trained JE-IRT map or an IRT fit from their answers, or suggest which questions to ask",
		Long:    helpText("add-model"),
		Example: helpExamples("add-model"),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if place.Fit != "" {
				return runPlace(cmd, &place, a, models)
			}
			if a.Checkpoint == "" {
				return fmt.Errorf("add-model: --checkpoint DIR (a JE-IRT map) or --fit DIR (an IRT fit) is required")
			}
			if !(opt.Fraction > 0 && opt.Fraction <= 1) {
				return fmt.Errorf("add-model: --fraction %v is not in (0, 1]", opt.Fraction)
			}
			if cmd.Flags().Changed("suggest") {
				fmt.Fprintln(cmd.ErrOrStderr(), "add-model: --suggest K is deprecated; use jeirt add-model suggest K")
				if a.Data != "" && sug.AnsweredFile == "" {
					sug.AnsweredFile = a.Data
				}
				sug.Checkpoint, sug.Encoder, sug.Out, sug.Model, sug.Seed, sug.Read, sug.Onboard = a.Checkpoint, a.Encoder, a.Out, models, opt.Seed, a.Read, opt.Onboard
				sug.Log = stderrLog(cmd)
				return sug.Run(cmd.Context(), cmd.OutOrStdout())
			}
			switch {
			case sug.AnsweredFile != "":
				return fmt.Errorf("add-model: --answered goes with --suggest")
			case a.Data == "":
				return fmt.Errorf("add-model: --data is required (the new models' answers), or use add-model suggest K\nexample:\n  jeirt add-model --checkpoint out/quickstart --data configs/data/swebench-verified/response_matrix.csv --models 20231010_rag_claude2 --replace --fraction 0.5")
			case sug.PoolFile != "":
				return fmt.Errorf("add-model: --pool goes with --suggest")
			}
			opt.Models, opt.Log, a.Version = cli.ModelList(models), stderrLog(cmd), version
			a.Force, _ = cmd.Flags().GetBool("force")
			out, res, err := a.Run(cmd.Context())
			if err != nil {
				return err
			}
			return onboardrun.WriteAdded(cmd.OutOrStdout(), out, res, asJSON)
		},
	}
	f := cmd.Flags()
	f.StringVar(&a.Checkpoint, "checkpoint", "", "checkpoint folder written by jeirt train")
	f.StringVar(&place.Fit, "fit", "", "instead of --checkpoint: a folder written by jeirt irt fit; place the models in it from any of their answers (items not refitted) and write abilities.csv rows")
	f.StringVar(&place.Estimator, "estimator", "map", "with --fit: θ is the posterior mode (map) or mean (eap, rank 1) under the fit's prior")
	f.BoolVar(&place.Force, "force", false, "with --fit: replace an existing --out file")
	addEncoderFlag(cmd, &a.Encoder)
	f.StringVar(&a.Data, "data", "", "responses of the new models (any format jeirt reads)")
	alias(cmd, "responses", "data")
	cli.ReadFlags(cmd, &a.Read)
	f.StringVar(&models, "models", "", "comma-separated models of --data to add (default: all)")
	f.Float64Var(&opt.Fraction, "fraction", 1, "fraction of each model's answers to fit on; the rest are scored")
	f.Int64Var(&opt.Seed, "seed", 42, "seed of the --fraction draw")
	f.StringVar(&a.Out, "out", "", "new checkpoint folder (default DIR.plus-NAME); with --fit: the abilities.csv rows (default: stdout)")
	f.BoolVar(&opt.Replace, "replace", false, "refit models the checkpoint already has")
	addPriorFlags(cmd, &opt.Onboard)
	cli.PrintJSON(cmd, &asJSON)
	withDevice(cmd)
	// The old spelling of add-model suggest.
	f.IntVar(&sug.K, "suggest", 0, "suggest K questions to ask a new model instead of adding one")
	f.StringVar(&sug.AnsweredFile, "answered", "", "the new model's answers so far")
	addSuggestFlags(cmd, &sug)
	for _, n := range []string{"suggest", "design", "answered", "pool"} {
		_ = f.MarkHidden(n)
	}
	cmd.AddCommand(newSuggestCmd())
	return cli.Guard(cmd, cli.Outputs{Folders: []string{"out"}, FilesWith: []string{"fit", "suggest"}, Flags: onboardFlags})
}

// runPlace is add-model --fit: the checkpoint-only flags are refused.
func runPlace(cmd *cobra.Command, place *catrun.Place, a onboardrun.AddRun, models string) error {
	if a.Checkpoint != "" {
		return fmt.Errorf("add-model: --fit and --checkpoint are two kinds of map; give one")
	}
	for _, name := range []string{"fraction", "replace", "prior", "shrink", "l2", "encoder", "suggest", "answered", "pool", "json", "print"} {
		if fl := cmd.Flags().Lookup(name); fl != nil && fl.Changed {
			return fmt.Errorf("add-model: --%s goes with --checkpoint, not --fit", name)
		}
	}
	if a.Data == "" {
		return fmt.Errorf("add-model --fit: --data is required (the new models' answers, any subset of the fit's items)")
	}
	place.Data, place.Read, place.Out, place.Models, place.Log = a.Data, a.Read, a.Out, cli.ModelList(models), stderrLog(cmd)
	_, err := place.Run(cmd.Context(), cmd.OutOrStdout())
	return err
}

func addPriorFlags(cmd *cobra.Command, ob *onboard.Onboard) {
	f := cmd.Flags()
	f.StringVar(&ob.Prior, "prior", "default", "prior on the new row: default or population (mean and covariance of the known rows), or theta=normal(0,SD) (a ridge; l2 with --l2 is the older spelling)")
	f.Float64Var(&ob.Shrink, "shrink", 0.1, "population prior: ridge added to the covariance, relative to its mean variance")
	f.Float64Var(&ob.L2, "l2", 1, "l2 prior: precision of N(0, I/l2)")
}

func addSuggestFlags(cmd *cobra.Command, s *onboardrun.SuggestRun) {
	f := cmd.Flags()
	f.StringVar(&s.Design, "design", "v-optimal", "v-optimal (least summed predictive variance), d-optimal (largest log det) or random")
	f.StringVar(&s.PoolFile, "pool", "", "item-text CSV of candidate questions (default: the checkpoint's items)")
}

func newSuggestCmd() *cobra.Command {
	var sug onboardrun.SuggestRun
	cmd := &cobra.Command{
		Use:     "suggest K --checkpoint DIR [--data FILE] [--out FILE]",
		Short:   "Suggest the K questions whose answers place a new model best",
		Long:    helpText("add-model-suggest"),
		Example: helpExamples("add-model-suggest"),
		Args:    needArgs(1, 1, "K, the number of questions to suggest"),
		RunE: func(cmd *cobra.Command, args []string) error {
			k, err := strconv.Atoi(args[0])
			if err != nil {
				return fmt.Errorf("add-model suggest: K %q is not a whole number", args[0])
			}
			if sug.Checkpoint == "" {
				return fmt.Errorf("add-model: --checkpoint is required")
			}
			sug.K, sug.Log = k, stderrLog(cmd)
			return sug.Run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&sug.Checkpoint, "checkpoint", "", "checkpoint folder written by jeirt train")
	addEncoderFlag(cmd, &sug.Encoder)
	f.StringVar(&sug.Out, "out", "", "items CSV to write (default: stdout)")
	f.StringVar(&sug.Model, "models", "", "the model of --data, when it holds several")
	f.Int64Var(&sug.Seed, "seed", 42, "seed of --design random")
	addSuggestFlags(cmd, &sug)
	f.StringVar(&sug.AnsweredFile, "data", "", "the new model's answers so far; pick the next K questions at its fitted row")
	alias(cmd, "answered", "data")
	cli.ReadFlags(cmd, &sug.Read)
	addPriorFlags(cmd, &sug.Onboard)
	withDevice(cmd)
	return cli.Guard(cmd, cli.Outputs{Files: []string{"out"}, Flags: onboardFlags})
}

// onboardFlags are the flags of the onboarding settings not named for their
// fields.
var onboardFlags = map[string]string{"AnsweredFile": "--data", "Model": "--models"}

func init() { rootCmd.AddCommand(newAddModelCmd()) }
