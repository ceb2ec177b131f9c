package main

import (
	"context"
	"fmt"
	"os"

	"github.com/jeirt/jeirt/cmd/internal/runner"
	"github.com/jeirt/jeirt/train/backend"
	"github.com/spf13/cobra"
)

// `jeirt device probe` prints the GPU this binary would use, or why there is
// none (exit 1). The plain jeirt runs it in jeirt-cuda, the CUDA runner,
// before handing a --device cuda|auto command to it (package runner).
func newDeviceCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "device", Short: "The compute devices this binary can use", Args: cobra.ArbitraryArgs, RunE: groupRun,
		Example: "  jeirt device probe"}
	cmd.AddCommand(&cobra.Command{
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
	})
	return cmd
}

type deviceKey struct{}

// resolveDevice is the one device resolution of a run of c (guard calls
// it): the --device flag when given, else what the command's settings ask
// for (o.device: train's config, irt select's fit), else the flag's default.
// In a binary without CUDA a cuda or auto request first goes to the
// jeirt-cuda runner, which runs the whole command on its GPU when it has one
// (package runner); this is the only place that decides. The resolved device
// (backend.Resolve) is in the command's context for runDevice.
func resolveDevice(c *cobra.Command, o outputs) error {
	f := c.Flags().Lookup("device")
	if f == nil && o.device == nil {
		return nil
	}
	var req string
	switch {
	case f != nil && f.Changed:
		req = f.Value.String()
	case o.device != nil:
		var err error
		if req, err = o.device(c); err != nil {
			return err
		}
	default:
		req = f.Value.String()
	}
	if req == "" {
		req = backend.Auto
	}
	if !cudaBuilt && (req == backend.CUDA || req == backend.Auto) {
		handled, code, err := runner.Delegate(c.Context(), req, os.Args[1:])
		if handled {
			os.Exit(code)
		}
		if err != nil {
			return fmt.Errorf("device cuda: this jeirt binary was built without CUDA, and %w", err)
		}
	}
	dev, err := backend.Resolve(req)
	if err != nil {
		return err
	}
	c.SetContext(context.WithValue(c.Context(), deviceKey{}, dev))
	return nil
}

// runDevice is the device guard resolved for this run of cmd ("" for a
// command that computes nothing).
func runDevice(cmd *cobra.Command) string {
	d, _ := cmd.Context().Value(deviceKey{}).(string)
	return d
}

func init() { rootCmd.AddCommand(newDeviceCmd()) }
