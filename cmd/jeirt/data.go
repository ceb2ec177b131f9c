package main

import (
	"fmt"

	"github.com/jeirt/jeirt/cmd/internal/cli"
	"github.com/jeirt/jeirt/cmd/internal/datarun"
	"github.com/jeirt/jeirt/model/read"
	"github.com/spf13/cobra"
)

var dataCmd = &cobra.Command{
	Use:     "data",
	Args:    cobra.ArbitraryArgs,
	RunE:    groupRun,
	Short:   "Inspect, split and import item-level response files and evaluation-tool logs",
	Long:    helpText("data"),
	Example: helpExamples("data-inspect"),
}

func newDataInspectCmd() *cobra.Command {
	var opt read.Options
	var asJSON bool
	var data string
	cmd := &cobra.Command{
		Use:     "inspect FILE | --data FILE",
		Short:   "Print counts, density, accuracy ranges and duplicates of a response file (or of evaluation-tool logs: what import would read)",
		Example: helpExamples("data-inspect"),
		Args:    needArgs(0, 1, "the responses file FILE (or --data FILE)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 && data != "" && args[0] != data {
				return fmt.Errorf("data inspect: two files given, %s and --data %s: give one", args[0], data)
			}
			if len(args) == 1 {
				data = args[0]
			}
			if data == "" {
				return needArgs(1, 1, "the responses file FILE (or --data FILE)")(cmd, args)
			}
			opt.Warn = nil // the summary says them
			r, rep, err := read.File(data, opt)
			if err != nil {
				return datarun.FailedRead(cmd.OutOrStdout(), rep, asJSON, err)
			}
			s := datarun.Summarize(r, rep)
			if asJSON {
				return s.WriteJSON(cmd.OutOrStdout())
			}
			return s.WriteText(cmd.OutOrStdout())
		},
	}
	cli.ReadFlags(cmd, &opt)
	cmd.Flags().StringVar(&data, "data", "", "response file (instead of the FILE argument)")
	cli.PrintJSON(cmd, &asJSON)
	return cli.Guard(cmd, cli.Outputs{ArgsIn: true})
}

func newDataSplitCmd() *cobra.Command {
	var s datarun.SplitFile
	cmd := &cobra.Command{
		Use:     "split --data FILE --out DIR",
		Short:   "Split responses into train.csv, val.csv and test.csv (long CSV), reproducibly",
		Long:    helpText("data-split"),
		Example: helpExamples("data-split"),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if s.Data == "" || s.Out == "" {
				return fmt.Errorf("data split: --data and --out are required")
			}
			return s.Run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	cli.ReadFlags(cmd, &s.Read)
	cmd.Flags().StringVar(&s.Data, "data", "", "response file to split (required)")
	cmd.Flags().StringVar(&s.Out, "out", "", "output folder for train.csv, val.csv, test.csv (required)")
	cmd.Flags().Float64Var(&s.Options.Val, "val-fraction", 0.1, "fraction held out for validation")
	cmd.Flags().Float64Var(&s.Options.Test, "test-fraction", 0.1, "fraction held out for test")
	cmd.Flags().Int64Var(&s.Options.Seed, "seed", 42, "random seed")
	cmd.Flags().StringVar(&s.Options.By, "by", "cell", "what is held out: cell|model|item|benchmark (whole item groups: the category or benchmark column of --items)")
	cmd.Flags().StringSliceVar(&s.Options.Hold, "hold", nil, "with --by benchmark: the benchmark(s) held out for test (default: --test-fraction of them at random); validation is --val-fraction of the other items")
	cmd.Flags().BoolVar(&s.Force, "force", false, "replace --out if it exists (only a folder jeirt wrote)")
	alias(cmd, "val", "val-fraction")
	alias(cmd, "test", "test-fraction")
	return cli.Guard(cmd, cli.Outputs{Folders: []string{"out"}})
}

func newDataImportCmd() *cobra.Command {
	var s datarun.Import
	cmd := &cobra.Command{Use: "import TREE --out FILE", Long: helpText("data-import"), Example: helpExamples("data-import"),
		Short: "Read evaluation-tool logs (lm-eval, HELM, inspect, Every Eval Ever) into one long responses file and its items file",
		Args:  needArgs(1, 1, "the log file or folder TREE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s.Tree = args[0]
			return s.Run(cmd.Context(), cmd.OutOrStdout())
		}}
	cli.ReadFlags(cmd, &s.Read)
	cmd.Flags().StringVar(&s.Out, "out", "", "the long responses file to write, .csv or .parquet (required); the items file (id, text, category) goes beside it as NAME_items.csv")
	return cli.Guard(cmd, cli.Outputs{Files: []string{"out"}, ArgsIn: true, Sidecars: datarun.ImportSidecars})
}

func init() {
	dataCmd.AddCommand(newDataInspectCmd(), newDataSplitCmd(), newDataImportCmd())
	rootCmd.AddCommand(dataCmd)
}
