package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/train/jeirt"
)

func newEvalCmd() *cobra.Command {
	var ckDir, data, encSpec string
	var ro read.Options
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "eval --checkpoint DIR --data FILE",
		Short:   "Score a JE-IRT checkpoint on a responses file",
		Long:    helpText("eval"),
		Example: helpExamples("eval"),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if ckDir == "" || data == "" {
				return fmt.Errorf("eval: --checkpoint and --data are required")
			}
			ck, err := loadCheckpoint(ckDir, encSpec)
			if err != nil {
				return err
			}
			r, _, err := read.File(data, ro)
			if err != nil {
				return err
			}
			ev, err := jeirt.EvalCheckpoint(cmd.Context(), ck, r, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(ev)
			}
			if len(ev.UnknownModels) > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %d models are not in the checkpoint; their %d cells are skipped (e.g. %s)\n",
					len(ev.UnknownModels), ev.SkippedCells, ev.UnknownModels[0])
			}
			return ev.WriteText(cmd.OutOrStdout(), ckDir, data)
		},
	}
	cmd.Flags().StringVar(&ckDir, "checkpoint", "", "checkpoint folder written by jeirt train")
	addEncoderFlag(cmd, &encSpec)
	cmd.Flags().StringVar(&data, "data", "", "responses file to score")
	addReadFlags(cmd, &ro)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	return withDevice(cmd)
}

func init() { rootCmd.AddCommand(newEvalCmd()) }
