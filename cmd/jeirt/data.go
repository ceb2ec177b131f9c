package main

import (
	"fmt"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/eval"
	"github.com/spf13/cobra"
)

var dataCmd = &cobra.Command{
	Use:   "data",
	Args:  cobra.ArbitraryArgs,
	RunE:  groupRun,
	Short: "Inspect and split item-level response files",
	Long: `Inspect and split item-level response files.

Formats (--format, default auto, which decides from the header and says what it decided):
  long        one row per cell: model column (model|model_name|model_id|subject_id),
              item column (item|item_id|prompt_id|question_id), label column
              (correct|label|y|response), optional text|prompt and category|benchmark
  wide        model-major matrix: first column names the model, one column per item
  wide-items  item-major matrix: first column names the item (or is an unnamed index),
              one column per model
  pyirt       py-irt JSONL: {"subject_id": ..., "responses": {item: 0/1}}
  patterns    response-pattern table with a freq column (e.g. LSAT7), expanded freq times
Labels: 0/1, 0.0/1.0, -1/1, true/false; blank, NA and NaN are missing. Gzip is detected.
Parquet files (long, wide or wide-items, the same column names; labels boolean, integer,
float or string, null missing) are detected by their contents; "jeirt data parquet" converts.
The first read of a text file of at least --cache-min bytes writes a binary cache of its
cells; later reads load it while the file is unchanged (--no-cache reads the text).`,
}

// addReadFlags registers --format, --items and --duplicates, the options of
// model.ReadFile, on a command that reads responses.
func addReadFlags(cmd *cobra.Command, opt *model.ReadOptions) {
	cmd.Flags().StringVar(&opt.Format, "format", "auto", "input format: auto|long|wide|wide-items|pyirt|patterns")
	cmd.Flags().StringVar(&opt.Items, "items", "", "item-text CSV joined by item id (item_id,text / problem_statement / content; prompt_id,prompt)")
	cmd.Flags().StringVar(&opt.Duplicates, "duplicates", "majority", "repeated (model, item) rows: majority (ties become missing)|first|error")
	cmd.Flags().BoolVar(&opt.NoCache, "no-cache", false, "read a large text file directly: neither load nor write its binary response cache")
	cmd.Flags().Int64Var(&opt.CacheMin, "cache-min", 64<<20, "cache text response files of at least this many bytes (in the user cache folder, jeirt/responses)")
}

func newDataInspectCmd() *cobra.Command {
	var opt model.ReadOptions
	var asJSON bool
	var data string
	cmd := &cobra.Command{
		Use:   "inspect FILE | --data FILE",
		Short: "Print counts, density, accuracy ranges and duplicates of a response file",
		Example: `  jeirt data inspect configs/data/swebench-verified/response_matrix.csv \
      --items configs/data/swebench-verified/item_content.csv
  jeirt data inspect --data configs/data/swebench-verified/response_matrix.csv --format wide --duplicates first --json`,
		Args: needArgs(0, 1, "the responses file FILE (or --data FILE)"),
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
			r, rep, err := model.ReadFile(data, opt)
			if err != nil {
				return err
			}
			s := model.Summarize(r, rep)
			if asJSON {
				return s.WriteJSON(cmd.OutOrStdout())
			}
			return s.WriteText(cmd.OutOrStdout())
		},
	}
	addReadFlags(cmd, &opt)
	cmd.Flags().StringVar(&data, "data", "", "response file (instead of the FILE argument)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the summary as JSON")
	return cmd
}

func newDataSplitCmd() *cobra.Command {
	var s eval.SplitFile
	cmd := &cobra.Command{
		Use:   "split --data FILE --out DIR",
		Short: "Split responses into train.csv, val.csv and test.csv (long CSV), reproducibly",
		Long: `Split responses into train.csv, val.csv and test.csv (long CSV), reproducibly for a seed.

--by cell holds out random observed cells; --by model holds out whole models (the
new-model experiment); --by item holds out whole questions. Every file lists every
model and item (a model or item with no cell in a file gets one row with a blank
label), and items.csv carries the item texts when the input has them. The folder
is written atomically: on error nothing is left behind.`,
		Example: `  jeirt data split --data configs/data/swebench-verified/response_matrix.csv --out out/swe-split
  jeirt data split --data configs/data/swebench-verified/response_matrix.csv --out out/swe-new-models --by model --val 0 --test 0.2 --seed 7`,
		Args: cobra.NoArgs,
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
	cmd.Flags().StringVar(&s.Options.By, "by", "cell", "what is held out: cell|model|item")
	cmd.Flags().BoolVar(&s.Force, "force", false, "replace --out if it exists")
	return cmd
}

func init() {
	dataCmd.AddCommand(newDataInspectCmd(), newDataSplitCmd())
	rootCmd.AddCommand(dataCmd)
}
