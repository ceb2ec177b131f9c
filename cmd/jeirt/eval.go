package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jeirt/jeirt/cmd/internal/cli"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/train/pipeline"
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
			ev, err := pipeline.EvalFile(cmd.Context(), ckDir, encSpec, data, ro, stderrLog(cmd))
			if err != nil {
				return err
			}
			if asJSON {
				return ev.WriteJSON(cmd.OutOrStdout())
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
	cli.ReadFlags(cmd, &ro)
	cli.PrintJSON(cmd, &asJSON)
	return cli.Guard(withDevice(cmd), cli.Outputs{})
}

func init() { rootCmd.AddCommand(newEvalCmd()) }
