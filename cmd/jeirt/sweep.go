package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jeirt/jeirt/cmd/internal/sweeprun"
	"github.com/jeirt/jeirt/model"
)

func newSweepCmd() *cobra.Command {
	var o struct {
		config, emit, out string
		force, retrain    bool
		slurm             sweeprun.SlurmSettings
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
			s, err := sweeprun.LoadSweep(o.config)
			if err != nil {
				return err
			}
			s.Slurm.Override(o.slurm, cmd.Flags().Changed)
			if err := s.Slurm.Validate("flags"); err != nil {
				return err
			}
			stderr := cmd.ErrOrStderr()
			runs, err := s.Emit(o.out, sweeprun.EmitOptions{Slurm: o.emit == "slurm", Replace: o.force,
				Command: "jeirt " + strings.Join(os.Args[1:], " ")})
			if err != nil {
				return err
			}
			abs, _ := filepath.Abs(o.out)
			fmt.Fprintf(stderr, "sweep: %d runs (%s) in %s\n", len(runs), strings.Join(s.Keys(), " x "), abs)
			if o.emit == "slurm" {
				script := filepath.Join(abs, sweeprun.SweepScriptFile)
				fmt.Fprintf(cmd.OutOrStdout(), "wrote %s (array 0-%d) and %d configs\nsubmit: sbatch %s\nthen:   jeirt sweep collect %s\n",
					script, len(runs)-1, len(runs), script, abs)
				return nil
			}
			runErr := s.RunLocal(cmd.Context(), abs, runs, sweeprun.SweepLocalOptions{Log: model.LogTo(stderr), Version: version, Force: o.retrain})
			tab, err := sweeprun.CollectSweep(abs)
			if err != nil {
				return err
			}
			if err := tab.WriteCSVFile(filepath.Join(abs, sweeprun.SweepTableFile)); err != nil {
				return err
			}
			tab.Print(cmd.OutOrStdout())
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s\n", filepath.Join(abs, sweeprun.SweepTableFile))
			return runErr
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.config, "config", "", "sweep file (YAML)")
	f.StringVar(&o.emit, "emit", "", "slurm (write a job array) or local (train here, one run after another)")
	f.StringVar(&o.out, "out", "", "sweep folder to write")
	f.BoolVar(&o.force, "force", false, "replace --out if it holds a different sweep")
	f.BoolVar(&o.retrain, "retrain", false, "with --emit local, train finished runs again")
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
	cmd.AddCommand(newSweepCollectCmd())
	// The same sweep again resumes its folder (Emit checks that it is the same).
	return guard(cmd, outputs{folders: []string{"out"}, resumes: true})
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
			tab, err := sweeprun.CollectSweep(args[0])
			if err != nil {
				return err
			}
			if out == "" {
				out = filepath.Join(args[0], sweeprun.SweepTableFile)
			}
			if err := tab.WriteCSVFile(out); err != nil {
				return err
			}
			tab.Print(cmd.OutOrStdout())
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s\n", out)
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "CSV to write (default DIR/sweep.csv, the sweep's own table, rewritten each time)")
	// The sweep's runs are read; its own table may be written inside it.
	return guard(cmd, outputs{files: []string{"out"}, inputs: func(args []string) []string {
		if len(args) == 0 {
			return nil
		}
		return []string{filepath.Join(args[0], "runs"), filepath.Join(args[0], sweeprun.SweepManifestFile)}
	}})
}

func init() { rootCmd.AddCommand(newSweepCmd()) }
