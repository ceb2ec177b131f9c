package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/train/eval"
	"github.com/jeirt/jeirt/train/jeirt"
)

func newEvalCmd() *cobra.Command {
	var ckDir, data, items, format, encSpec string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "eval --checkpoint DIR --data FILE",
		Short: "Score a JE-IRT checkpoint on a responses file",
		Long: `Score a JE-IRT checkpoint on any responses file: accuracy, AUC, log loss, Brier and
expected calibration error over the cells whose model the checkpoint knows. Items the
checkpoint has not seen are encoded with its encoder (same fingerprint required);
give their text with --items.`,
		Example: `  jeirt eval --checkpoint out/quickstart --data configs/data/swebench-verified/response_matrix.csv
  jeirt eval --checkpoint out/quickstart --data configs/data/swebench-verified/response_matrix.csv --items configs/data/swebench-verified/item_content.csv --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if ckDir == "" || data == "" {
				return fmt.Errorf("eval: --checkpoint and --data are required")
			}
			ck, err := loadCheckpoint(ckDir, encSpec)
			if err != nil {
				return err
			}
			r, _, err := read.File(data, read.Options{Format: format, Items: items})
			if err != nil {
				return err
			}
			ev, err := jeirt.EvalCheckpoint(cmd.Context(), ck, r, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(ev)
			}
			if len(ev.UnknownModels) > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %d models are not in the checkpoint; their %d cells are skipped (e.g. %s)\n",
					len(ev.UnknownModels), ev.SkippedCells, ev.UnknownModels[0])
			}
			fmt.Fprintf(out, "%s on %s: %d cells, %d items new to the checkpoint\n", ckDir, data, ev.Metrics.N, ev.NewItems)
			fmt.Fprintf(out, "%-22s %8s %8s %8s %8s %8s\n", "", "accuracy", "AUC", "logloss", "Brier", "ECE")
			for _, row := range []struct {
				name string
				s    eval.Scores
			}{{"jeirt", ev.Metrics}, {"model mean (in-sample)", ev.ModelMean}} {
				fmt.Fprintf(out, "%-22s %8.4f %8.4f %8.4f %8.4f %8.4f\n", row.name, row.s.Accuracy, row.s.AUC, row.s.LogLoss, row.s.Brier, row.s.ECE)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&ckDir, "checkpoint", "", "checkpoint folder written by jeirt train")
	addEncoderFlag(cmd, &encSpec)
	cmd.Flags().StringVar(&data, "data", "", "responses file to score")
	cmd.Flags().StringVar(&items, "items", "", "item-text CSV for items the checkpoint has not seen")
	cmd.Flags().StringVar(&format, "format", "auto", "responses format: "+fmt.Sprint(read.Formats))
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	return withDevice(cmd)
}

func init() { rootCmd.AddCommand(newEvalCmd()) }
