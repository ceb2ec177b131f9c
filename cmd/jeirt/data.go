package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/train/eval"
	"github.com/spf13/cobra"
)

var dataCmd = &cobra.Command{
	Use:   "data",
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
// read.File, on a command that reads responses.
func addReadFlags(cmd *cobra.Command, opt *read.Options) {
	cmd.Flags().StringVar(&opt.Format, "format", "auto", "input format: auto|long|wide|wide-items|pyirt|patterns")
	cmd.Flags().StringVar(&opt.Items, "items", "", "item-text CSV joined by item id (item_id,text / problem_statement / content; prompt_id,prompt)")
	cmd.Flags().StringVar(&opt.Duplicates, "duplicates", "majority", "repeated (model, item) rows: majority (ties become missing)|first|error")
	cmd.Flags().BoolVar(&opt.NoCache, "no-cache", false, "read a large text file directly: neither load nor write its binary response cache")
	cmd.Flags().Int64Var(&opt.CacheMin, "cache-min", 64<<20, "cache text response files of at least this many bytes (in the user cache folder, jeirt/responses)")
}

func printSummary(w io.Writer, s read.Summary) {
	gz := ""
	if s.Gzip {
		gz = ", gzip"
	}
	fmt.Fprintf(w, "file          %s\n", s.File)
	fmt.Fprintf(w, "format        %s%s (%s)\n", s.Format, gz, s.Decided)
	fmt.Fprintf(w, "models        %d\n", s.Models)
	fmt.Fprintf(w, "items         %d", s.Items)
	if s.ItemsWithText > 0 {
		fmt.Fprintf(w, " (%d with text)", s.ItemsWithText)
	}
	if s.Groups > 0 {
		fmt.Fprintf(w, " in %d groups", s.Groups)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "observed      %d of %d cells (density %.4f)\n", s.Observed, s.Models*s.Items, s.Density)
	fmt.Fprintf(w, "mean correct  %.4f\n", s.MeanCorrect)
	fmt.Fprintf(w, "model acc.    min %.4f (%s), median %.4f, max %.4f (%s)\n",
		s.ModelAccMin, s.ModelAccMinBy, s.ModelAccMedian, s.ModelAccMax, s.ModelAccMaxBy)
	if s.ModelsNoCells > 0 {
		fmt.Fprintf(w, "              %d models have no observed cell\n", s.ModelsNoCells)
	}
	fmt.Fprintf(w, "items         %d solved by nobody, %d by everybody, %d never observed\n", s.ItemsNobody, s.ItemsEveryone, s.ItemsNoCells)
	fmt.Fprintf(w, "blank cells   %d\n", s.Blank)
	fmt.Fprintf(w, "duplicates    %d cells with %d extra rows; %d conflicting, %d ties left missing\n",
		s.DuplicateCells, s.DuplicateRows, s.Conflicts, s.TiesDropped)
}

func newDataInspectCmd() *cobra.Command {
	var opt read.Options
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "inspect FILE",
		Short: "Print counts, density, accuracy ranges and duplicates of a response file",
		Example: `  jeirt data inspect configs/data/swebench-verified/response_matrix.csv \
      --items configs/data/swebench-verified/item_content.csv
  jeirt data inspect configs/data/swebench-verified/response_matrix.csv --format wide --duplicates first --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, rep, err := read.File(args[0], opt)
			if err != nil {
				return err
			}
			s := read.Summarize(r, rep)
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(jsonSafe(s))
			}
			printSummary(cmd.OutOrStdout(), s)
			return nil
		},
	}
	addReadFlags(cmd, &opt)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the summary as JSON")
	return cmd
}

// jsonSafe replaces NaN (no observed cells) by -1, which JSON can carry.
func jsonSafe(s read.Summary) read.Summary {
	for _, p := range []*float64{&s.ModelAccMin, &s.ModelAccMedian, &s.ModelAccMax} {
		if math.IsNaN(*p) {
			*p = -1
		}
	}
	return s
}

func newDataSplitCmd() *cobra.Command {
	var opt read.Options
	var split eval.SplitOptions
	var data, out string
	var force bool
	cmd := &cobra.Command{
		Use:   "split --data FILE --out DIR",
		Short: "Split responses into train.csv, val.csv and test.csv (long CSV), reproducibly",
		Long: `Split responses into train.csv, val.csv and test.csv (long CSV), reproducibly for a seed.

--by cell holds out random observed cells; --by model holds out whole models (the
new-model experiment); --by item holds out whole questions; --by benchmark --hold NAME
holds out a whole benchmark (out-of-distribution generalisation). Every file lists every
model and item (a model or item with no cell in a file gets one row with a blank
label), and items.csv carries the item texts when the input has them. The folder
is written atomically: on error nothing is left behind.`,
		Example: `  jeirt data split --data configs/data/swebench-verified/response_matrix.csv --out out/swe-split
  jeirt data split --data configs/data/swebench-verified/response_matrix.csv --out out/swe-new-models --by model --val 0 --test 0.2 --seed 7`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if data == "" || out == "" {
				return fmt.Errorf("data split: --data and --out are required")
			}
			r, _, err := read.File(data, opt)
			if err != nil {
				return err
			}
			tr, va, te, err := eval.Split(r, split)
			if err != nil {
				return err
			}
			if err := cmd.Context().Err(); err != nil {
				return err
			}
			err = model.WriteDirAtomic(out, force, func(tmp string) error {
				for _, f := range []struct {
					name string
					r    *model.Responses
				}{{"train.csv", tr}, {"val.csv", va}, {"test.csv", te}} {
					if err := model.WriteLongCSV(filepath.Join(tmp, f.name), f.r); err != nil {
						return err
					}
				}
				if r.ItemText != nil {
					return model.WriteItemsCSV(filepath.Join(tmp, "items.csv"), r)
				}
				return nil
			})
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			by := split.By
			if by == "" {
				by = "cell"
			}
			fmt.Fprintf(w, "split %s by %s (seed %d) into %s\n", data, by, split.Seed, out)
			for _, p := range []struct {
				name string
				r    *model.Responses
			}{{"train", tr}, {"val", va}, {"test", te}} {
				fmt.Fprintf(w, "  %-5s %9d cells  %6d models  %7d items  mean correct %.4f\n",
					p.name, p.r.Len(), countRows(p.r.ByModel()), countRows(p.r.ByItem()), p.r.MeanCorrect())
			}
			return nil
		},
	}
	addReadFlags(cmd, &opt)
	cmd.Flags().StringVar(&data, "data", "", "response file to split (required)")
	cmd.Flags().StringVar(&out, "out", "", "output folder for train.csv, val.csv, test.csv (required)")
	cmd.Flags().Float64Var(&split.Val, "val", 0.1, "fraction held out for validation")
	cmd.Flags().Float64Var(&split.Test, "test", 0.1, "fraction held out for test")
	cmd.Flags().Int64Var(&split.Seed, "seed", 42, "random seed")
	cmd.Flags().StringVar(&split.By, "by", "cell", "what is held out: cell|model|item|benchmark (whole item groups: the category or benchmark column of --items)")
	cmd.Flags().StringSliceVar(&split.Hold, "hold", nil, "with --by benchmark: the benchmark(s) held out for test (default: --test of them at random); validation is --val of the other items")
	cmd.Flags().BoolVar(&force, "force", false, "replace --out if it exists")
	return cmd
}

// countRows is the number of rows of an index that have at least one cell.
func countRows(ix *model.Index) int {
	n := 0
	for r := 0; r+1 < len(ix.Start); r++ {
		if ix.Start[r+1] > ix.Start[r] {
			n++
		}
	}
	return n
}

func init() {
	dataCmd.AddCommand(newDataInspectCmd(), newDataSplitCmd())
	rootCmd.AddCommand(dataCmd)
}
