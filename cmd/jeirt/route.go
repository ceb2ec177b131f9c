package main

import (
	"fmt"

	"github.com/jeirt/jeirt/cmd/internal/cli"
	"github.com/jeirt/jeirt/cmd/internal/routerun"
	"github.com/jeirt/jeirt/train/router"
	"github.com/spf13/cobra"
)

func newRouteCmd() *cobra.Command {
	var o routerun.Run
	var models string
	ro := &o.Router
	cmd := &cobra.Command{
		Use:     "route QUERIES --checkpoint DIR [--costs FILE] [--min-p P | --lambda L]",
		Short:   "Send each query to the model of a JE-IRT checkpoint most likely to answer it",
		Long:    helpText("route"),
		Example: helpExamples("route"),
		Args:    needArgs(1, 1, "QUERIES: a text file with one query per line, a JSONL file, or - for standard input"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Checkpoint == "" {
				return fmt.Errorf("route: --checkpoint is required")
			}
			o.Router.Models, o.Router.MinPSet, o.Log = cli.ModelList(models), cmd.Flags().Changed("min-p"), stderrLog(cmd)
			return o.Route(cmd.Context(), args[0], cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&o.Checkpoint, "checkpoint", "", "checkpoint folder written by jeirt train or add-model")
	addEncoderFlag(cmd, &o.Encoder)
	cmd.Flags().StringVar(&models, "models", "", "comma-separated models to choose from (default: all of the checkpoint)")
	cmd.Flags().StringVar(&ro.Rule, "rule", "", "the rule: default (the checkpoint's recorded rule, what no rule flag gives), "+router.SpecHelp()+"; margin takes &default=MODEL, and any rule &k=T: among the T best models")
	cmd.Flags().StringVar(&ro.Costs, "costs", "", "model,cost CSV")
	cmd.Flags().Float64Var(&ro.MinP, "min-p", 0.7, router.FlagHelp("min-p"))
	cmd.Flags().Float64Var(&ro.Lambda, "lambda", 0, router.FlagHelp("lambda"))
	cmd.Flags().Float64Var(&ro.Margin, "margin", 0, router.FlagHelp("margin"))
	cmd.Flags().IntVar(&ro.Shortlist, "shortlist", 0, router.FlagHelp("shortlist"))
	cmd.Flags().StringVar(&ro.Default, "default", "", "with --margin: the default model (default: the best on --data)")
	cmd.Flags().StringVar(&ro.Train, "data", "", "with --margin or --shortlist: training responses, to rank the models by accuracy")
	cmd.Flags().BoolVar(&ro.KeepOutOfDomain, "keep-out-of-domain", false, "keep the rule's choice for queries unlike every training question (they are still flagged); default: send them to the best single model")
	cmd.Flags().IntVar(&o.Top, "top", 3, "alternatives to list per query")
	cmd.Flags().StringVar(&o.Print, "print", "table", "what to print on standard output: table, csv or json (JSON lines)")
	cmd.Flags().Var(&cli.FormatValue{In: &ro.TrainRead.Format}, "format", "format of --data: auto|long|wide|wide-items|pyirt|patterns")
	cmd.Flags().StringVar(&ro.TrainRead.Duplicates, "duplicates", "majority", cli.DuplicatesHelp+" (of --data)")
	cmd.Flags().BoolVar(&ro.TrainRead.Graded, "graded", false, cli.GradedHelp+" (of --data)")
	alias(cmd, "output", "print")
	alias(cmd, "train", "data")
	alias(cmd, "train-format", "format")
	cmd.AddCommand(newRouteEvalCmd())
	return cli.Guard(withDevice(cmd), cli.Outputs{ArgsIn: true, Flags: map[string]string{"Train": "--data"}})
}

func newRouteEvalCmd() *cobra.Command {
	var e routerun.EvalRun
	cmd := &cobra.Command{
		Use:     "eval (--checkpoint DIR --data FILE | --data FILE --items FILE --splits K) [--costs FILE] [--out FILE.csv]",
		Short:   "Score the router against the best single model, random choice and the oracle",
		Long:    helpText("route-eval"),
		Example: helpExamples("route-eval"),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if e.Data == "" || e.Checkpoint == "" && e.Splits == 0 {
				return fmt.Errorf("route eval: give --checkpoint DIR --data FILE (score a trained router on held-out questions) or --data FILE --splits K (split, train and score K times)")
			}
			if e.Splits < 0 {
				return fmt.Errorf("route eval: --splits %d must be positive", e.Splits)
			}
			e.Log, e.Device = stderrLog(cmd), cli.RunDevice(cmd)
			// --train's scores and repeated rows are read as --data's.
			e.TrainRead.Graded, e.TrainRead.Duplicates = e.Read.Graded, e.Read.Duplicates
			return e.Run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&e.Checkpoint, "checkpoint", "", "checkpoint folder")
	addEncoderFlag(cmd, &e.Encoder)
	cmd.Flags().StringVar(&e.Data, "data", "", "held-out responses (questions the router did not train on)")
	cli.ReadFlags(cmd, &e.Read)
	cmd.Flags().StringVar(&e.Train, "train", "", "training responses, to choose the best single model by accuracy (--graded and --duplicates apply to it too)")
	cmd.Flags().StringVar(&e.Val, "val", "", "validation responses on other held-out questions, to choose the margin δ (read like --data)")
	cmd.Flags().Float64SliceVar(&e.Margins, "margin", nil, "`list` of margin values δ to sweep (default 0,0.01,...,0.5,inf; inf is always added)")
	cmd.Flags().IntSliceVar(&e.Shortlists, "shortlist", nil, "`list` of shortlist sizes T to sweep: the highest P among the T best models (default 2,3,5,10)")
	cmd.Flags().StringVar(&e.Costs, "costs", "", "model,cost CSV")
	cmd.Flags().Float64SliceVar(&e.MinP, "min-p", nil, "`list` of min-p values to sweep (default 0.5,0.55,...,0.95)")
	cmd.Flags().Float64SliceVar(&e.Lambda, "lambda", nil, "`list` of lambda values to sweep (default a grid scaled to the cost range)")
	cmd.Flags().StringVar(&e.Out, "out", "", "CSV file for the curve (default: CSV on stdout)")
	cmd.Flags().StringVar(&e.Foreign, "foreign", "", "queries from outside the benchmark (one per line, e.g. configs/ood-prompts.txt): report how many the out-of-domain check flags")
	cmd.Flags().IntVar(&e.Splits, "splits", 0, "without --checkpoint: split the questions of --data K times (seeds --seed, --seed+1, ...), train a checkpoint on each and score it on its test questions")
	cmd.Flags().Int64Var(&e.Seed, "seed", 1, "with --splits: the first split's seed")
	cmd.Flags().Float64Var(&e.SplitVal, "val-fraction", 0.1, "with --splits: the fraction of questions held out for validation (early stopping, the margin δ)")
	cmd.Flags().Float64Var(&e.SplitTest, "test-fraction", 0.2, "with --splits: the fraction of questions held out for test")
	cmd.Flags().StringVar(&e.Config, "config", "", "with --splits: the training config (its data, split and output are the splits'); default: jeirt train's defaults (hash encoder, quickstart settings)")
	cmd.Flags().StringArrayVar(&e.Set, "set", nil, "with --splits: override a training config key, e.g. --set route.folds=3 (repeatable)")
	for _, n := range []string{"margin", "min-p", "lambda"} {
		cmd.Flags().Lookup(n).DefValue = "" // the usage gives the default; not "(default [])"
	}
	return cli.Guard(withDevice(cmd), cli.Outputs{Files: []string{"out"}})
}

func init() { rootCmd.AddCommand(newRouteCmd()) }
