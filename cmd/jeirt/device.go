package main

import (
	"fmt"

	"github.com/jeirt/jeirt/cmd/internal/cli"
	"github.com/spf13/cobra"
)

// newDeviceCmd is `jeirt device probe`: the GPU this binary would use, or why there is none (exit 1);
// the plain jeirt runs it in jeirt-cuda, the CUDA runner, before handing it a --device cuda|auto command.
func newDeviceCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "device", Short: "The compute devices this binary can use", Args: cobra.ArbitraryArgs, RunE: groupRun,
		Example: "  jeirt device probe"}
	cmd.AddCommand(cli.Guard(&cobra.Command{
		Use:   "probe",
		Short: "Print the GPU this binary would use, or why there is none (exit 1)",
		Args:  cobra.NoArgs, Example: "  jeirt device probe",
		RunE: func(cmd *cobra.Command, args []string) error {
			dev, err := probeDevice()
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), dev)
			return nil
		},
	}, cli.Outputs{}))
	return cmd
}

func init() {
	rootCmd.AddCommand(newDeviceCmd())
	cli.Version, cli.CUDABuilt = version, cudaBuilt
}
