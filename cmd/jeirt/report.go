package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/jeirt/jeirt/cmd/internal/cli"
	"github.com/jeirt/jeirt/cmd/internal/report"
)

func newReportCmd() *cobra.Command {
	var opt report.Options
	var out string
	var force bool
	cmd := &cobra.Command{
		Use:     "report [--checkpoint DIR] [--fit DIR] [--route-csv FILE] --out DIR",
		Short:   "Write a self-contained HTML report with figures of a checkpoint, an IRT fit and a routing curve",
		Long:    helpText("report"),
		Example: helpExamples("report"),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return fmt.Errorf("report: --out is required")
			}
			opt.Version, opt.Log = version, stderrLog(cmd)
			rep, err := report.Build(opt)
			if err != nil {
				return err
			}
			if err := rep.Write(out, force); err != nil {
				return err
			}
			for _, n := range rep.Notes {
				fmt.Fprintf(cmd.ErrOrStderr(), "report: note: %s\n", n)
			}
			abs, _ := filepath.Abs(out)
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s (%d figures as PNG and SVG, %d tables)\n", filepath.Join(abs, "index.html"), len(rep.Figures), len(rep.Tables))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&opt.Checkpoint, "checkpoint", "", "JE-IRT checkpoint folder (jeirt train)")
	f.StringVar(&opt.Fit, "fit", "", "IRT fit folder (jeirt irt fit)")
	f.StringVar(&opt.RouteCSV, "route-csv", "", "cost-quality CSV (jeirt route eval --out)")
	f.StringVar(&opt.Data, "data", "", "responses for item error rates and groups (default: the checkpoint's training data)")
	f.StringVar(&opt.Items, "items", "", "item-text CSV to go with --data (for groups)")
	f.StringVar(&opt.DataRead.Format, "format", "auto", "format of --data: auto|long|wide|wide-items|pyirt|patterns")
	f.StringVar(&opt.DataRead.Duplicates, "duplicates", "majority", cli.DuplicatesHelp+" (of --data)")
	f.BoolVar(&opt.DataRead.Graded, "graded", false, cli.GradedHelp+" (of --data)")
	f.IntVar(&opt.Label, "label", 8, "models to label in the ability figure (largest rank moves)")
	f.IntVar(&opt.Curves, "curves", 4, "item characteristic curves at each end (most and least discriminating)")
	f.StringVar(&out, "out", "", "report folder to write (atomically)")
	f.BoolVar(&force, "force", false, "replace --out if it exists (only a folder jeirt wrote)")
	return cli.Guard(cmd, cli.Outputs{Folders: []string{"out"}})
}

func init() { rootCmd.AddCommand(newReportCmd()) }
