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
	Short:   "Inspect and split item-level response files",
	Long:    helpText("data"),
	Example: helpExamples("data-inspect"),
}

// addReadFlags registers --format, --items, --duplicates and --graded, the
// options of read.File, on a command that reads responses.
func addReadFlags(cmd *cobra.Command, opt *read.Options) {
	cmd.Flags().StringVar(&opt.Format, "format", "auto", "input format: auto|long|wide|wide-items|pyirt|patterns")
	cmd.Flags().StringVar(&opt.Items, "items", "", "item-text CSV joined by item id (item_id,text / problem_statement / content; prompt_id,prompt)")
	cmd.Flags().StringVar(&opt.Duplicates, "duplicates", "majority", duplicatesHelp)
	cmd.Flags().BoolVar(&opt.Graded, "graded", false, gradedHelp)
	cmd.Flags().BoolVar(&opt.NoCache, "no-cache", false, "read a large text file directly: neither load nor write its binary response cache")
	cmd.Flags().Int64Var(&opt.CacheMin, "cache-min", 64<<20, "cache text response files of at least this many bytes (in the user cache folder, jeirt/responses; keyed by a hash of the whole file)")
	cmd.Flags().BoolVar(&opt.CacheTrustMtime, "cache-trust-mtime", false, "load a file's response cache when its size and modification time match, without hashing the file (faster; wrong for a file changed in place with its time restored)")
}

// The help of --duplicates and --graded, wherever responses are read.
const (
	duplicatesHelp = "repeated (model, item) rows: majority (ties become missing)|first|error|trials (the rows are trials of one cell: k of n correct)"
	gradedHelp     = "read labels strictly between 0 and 1 as graded scores (partial credit); without it such a label is an error"
)

func newDataInspectCmd() *cobra.Command {
	var opt read.Options
	var asJSON bool
	var data string
	cmd := &cobra.Command{
		Use:     "inspect FILE | --data FILE",
		Short:   "Print counts, density, accuracy ranges and duplicates of a response file",
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
			r, rep, err := read.File(data, opt)
			if err != nil {
				return err
			}
			s := datarun.Summarize(r, rep)
			if asJSON {
				return s.WriteJSON(cmd.OutOrStdout())
			}
			return s.WriteText(cmd.OutOrStdout())
		},
	}
	addReadFlags(cmd, &opt)
	cmd.Flags().StringVar(&data, "data", "", "response file (instead of the FILE argument)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the summary as JSON")
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
	addReadFlags(cmd, &s.Read)
	cmd.Flags().StringVar(&s.Data, "data", "", "response file to split (required)")
	cmd.Flags().StringVar(&s.Out, "out", "", "output folder for train.csv, val.csv, test.csv (required)")
	cmd.Flags().Float64Var(&s.Options.Val, "val", 0.1, "fraction held out for validation")
	cmd.Flags().Float64Var(&s.Options.Test, "test", 0.1, "fraction held out for test")
	cmd.Flags().Int64Var(&s.Options.Seed, "seed", 42, "random seed")
	cmd.Flags().StringVar(&s.Options.By, "by", "cell", "what is held out: cell|model|item|benchmark (whole item groups: the category or benchmark column of --items)")
	cmd.Flags().StringSliceVar(&s.Options.Hold, "hold", nil, "with --by benchmark: the benchmark(s) held out for test (default: --test of them at random); validation is --val of the other items")
	cmd.Flags().BoolVar(&s.Force, "force", false, "replace --out if it exists (only a folder jeirt wrote)")
	return cli.Guard(cmd, cli.Outputs{Folders: []string{"out"}})
}

func init() {
	dataCmd.AddCommand(newDataInspectCmd(), newDataSplitCmd())
	rootCmd.AddCommand(dataCmd)
}
