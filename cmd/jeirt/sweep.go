package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jeirt/jeirt/cmd/internal/cli"
	"github.com/jeirt/jeirt/cmd/internal/slurm"
	"github.com/jeirt/jeirt/cmd/internal/sweeprun"
)

func newSweepCmd() *cobra.Command {
	var o struct {
		config, emit, out      string
		force, retrain, submit bool
		slurm                  sweeprun.SlurmSettings
	}
	cmd := &cobra.Command{
		Use:     "sweep --config SWEEP.yaml --emit slurm|local --out DIR",
		Short:   "Run a grid of jeirt train runs here or as a Slurm job array",
		Long:    helpText("sweep"),
		Example: helpExamples("sweep"),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.config == "" || o.out == "" {
				return fmt.Errorf("sweep: --config and --out are required")
			}
			if o.emit != "slurm" && o.emit != "local" {
				return fmt.Errorf("sweep: --emit must be slurm or local, got %q", o.emit)
			}
			return sweeprun.Job{Config: o.config, Out: o.out, Slurm: o.emit == "slurm", Submit: o.submit, Force: o.force, Retrain: o.retrain,
				Flags: o.slurm, Changed: cmd.Flags().Changed, Command: "jeirt " + strings.Join(os.Args[1:], " "),
				Version: version, Log: stderrLog(cmd)}.Run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.config, "config", "", "sweep file (YAML)")
	f.StringVar(&o.emit, "emit", "", "slurm (write a job array) or local (train here, one run after another)")
	f.StringVar(&o.out, "out", "", "sweep folder to write")
	f.BoolVar(&o.force, "force", false, "replace --out if it holds a different sweep")
	f.BoolVar(&o.retrain, "retrain", false, "with --emit local, train finished runs again")
	f.BoolVar(&o.submit, "submit", false, "with --emit slurm, submit the array (sbatch) and record its job id in DIR/slurm.json")
	d := sweeprun.DefaultSlurm()
	f.StringVar(&o.slurm.Partition, "partition", "", "Slurm partition (overrides slurm.partition)")
	f.StringVar(&o.slurm.Account, "account", "", "Slurm account")
	f.StringVar(&o.slurm.QOS, "qos", "", "Slurm QOS")
	f.StringVar(&o.slurm.Constraint, "constraint", "", "Slurm node constraint, e.g. a100")
	f.IntVar(&o.slurm.GPUs, "gpus", d.GPUs, "GPUs per task (--gres=gpu:N)")
	f.IntVar(&o.slurm.CPUs, "cpus", d.CPUs, "CPUs per task")
	f.StringVar(&o.slurm.Mem, "mem", d.Mem, "memory per task, e.g. 32G")
	f.StringVar(&o.slurm.Time, "time", d.Time, "time limit per task, e.g. 04:00:00")
	f.IntVar(&o.slurm.MaxParallel, "max-parallel", 0, "at most this many tasks at once (0 = no limit)")
	f.StringVar(&o.slurm.Jeirt, "jeirt", d.Jeirt, "the jeirt binary on the cluster")
	cmd.AddCommand(newSweepCollectCmd(), newSweepSlurmCmd("status", "Show the state of each task of a submitted sweep or sharded encoding", slurm.Status),
		newSweepSlurmCmd("resubmit", "Submit the failed and missing tasks of a submitted sweep or sharded encoding again", slurm.Resubmit))
	// The same sweep again resumes its folder (Emit checks that it is the same).
	return cli.Guard(cmd, cli.Outputs{Folders: []string{"out"}, Resumes: true})
}

func newSweepCollectCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:     "collect DIR",
		Short:   "Table every run of a sweep and name the best by validation loss",
		Long:    helpText("sweep-collect"),
		Example: helpExamples("sweep-collect"),
		Args:    needArgs(1, 1, "the sweep folder DIR (the --out of jeirt sweep)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return sweeprun.Collect(args[0], out, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "CSV to write (default DIR/sweep.csv, the sweep's own table, rewritten each time)")
	// The sweep's runs are read; its own table may be written inside it.
	return cli.Guard(cmd, cli.Outputs{Files: []string{"out"}, Inputs: func(args []string) []string {
		if len(args) == 0 {
			return nil
		}
		return []string{filepath.Join(args[0], "runs"), filepath.Join(args[0], sweeprun.SweepManifestFile)}
	}})
}

// newSweepSlurmCmd is sweep status or sweep resubmit: a job folder in, lines out.
func newSweepSlurmCmd(name, short string, run func(context.Context, string, io.Writer) error) *cobra.Command {
	return cli.Guard(&cobra.Command{Use: name + " DIR", Short: short, Long: helpText("sweep-" + name), Example: helpExamples("sweep-" + name),
		Args: needArgs(1, 1, "the job folder DIR (the --out of jeirt sweep --submit or jeirt encode --submit)"),
		RunE: func(cmd *cobra.Command, args []string) error { return run(cmd.Context(), args[0], cmd.OutOrStdout()) }}, cli.Outputs{})
}

func init() { rootCmd.AddCommand(newSweepCmd()) }
