package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jeirt/jeirt/cmd/internal/cli"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/train/pipeline"
)

func newTrainCmd() *cobra.Command {
	var configPath, device string
	var overrides []string
	var force, noBaselines bool
	var maxMemory, splits = int64(0), 0
	var cfg *pipeline.Config
	// config is the run's config, read once: its train.device is the run's
	// device request (see resolveDevice).
	config := func() (*pipeline.Config, error) {
		if cfg != nil {
			return cfg, nil
		}
		if configPath == "" {
			return nil, fmt.Errorf("train: --config is required (try configs/quickstart.yaml)")
		}
		set := overrides
		if device != "" {
			set = append(append([]string(nil), overrides...), "train.device="+device)
		}
		c, err := pipeline.LoadConfigSet(configPath, set)
		cfg = c
		return c, err
	}
	cmd := &cobra.Command{
		Use:     "train --config FILE [--set key=value ...]",
		Short:   "Train JE-IRT question and model embeddings and score them against baselines",
		Long:    helpText("train"),
		Example: helpExamples("train"),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := config()
			if err != nil {
				return err
			}
			for _, note := range pipeline.SetPathNotes(configPath, overrides) {
				fmt.Fprintln(cmd.ErrOrStderr(), "train:", note)
			}
			if cmd.Flags().Changed("splits") { // prints mean ± sd, writes nothing
				return pipeline.PrintSplits(cmd.Context(), cmd.OutOrStdout(), cfg, splits, pipeline.Options{Log: stderrLog(cmd), MaxMemory: maxMemory, Device: cli.RunDevice(cmd)})
			}
			res, err := pipeline.Run(cmd.Context(), cfg, pipeline.Options{Log: stderrLog(cmd), Results: func(stop string, m *checkpoint.RunMetrics) {
				fmt.Fprintf(cmd.OutOrStdout(), "stopped: %s\n", stop)
				pipeline.PrintScoreTable(cmd.OutOrStdout(), m)
			},
				Version: version, Replace: force, NoBaselines: noBaselines, MaxMemory: maxMemory, Device: cli.RunDevice(cmd)})
			if err == nil && cmd.Context().Err() != nil && res != nil {
				// Interrupted after an epoch: the checkpoint is written; the
				// exit status says it was interrupted (130), like every command.
				return res.Interrupted(cfg.Output, cmd.Context().Err())
			}
			return err
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "YAML config file")
	cmd.Flags().StringArrayVar(&overrides, "set", nil, "override a config key, e.g. --set model.dim=128 (repeatable)")
	cmd.Flags().BoolVar(&force, "force", false, "replace the output folder if it exists")
	cmd.Flags().BoolVar(&noBaselines, "no-baselines", false, "skip the baseline table")
	cmd.Flags().StringVar(&device, "device", "", "auto|cpu|cpu:fused|cuda: overrides train.device of the config")
	cmd.Flags().IntVar(&splits, "splits", 0, "train and score split.by cell, item and model over N seeds (split.seed, split.seed+1, ...) and print accuracy, AUC and log loss as mean ± sd; writes nothing")
	cmd.Flags().Int64Var(&maxMemory, "max-memory", 0, "bytes the encoder vectors, the parameter tables and the kNN baseline's tables may take (estimated before they are made); 0: the machine's available memory")
	// The output is the config's: pipeline.Run applies the output rule to it.
	// Settings the library names are config keys here.
	return cli.Guard(cmd, cli.Outputs{Flags: map[string]string{"Hold": "split.hold", "By": "split.by", "Items": "data.items"}, Device: func(*cobra.Command) (string, error) {
		c, err := config()
		if err != nil {
			return "", err
		}
		return c.Train.Device, nil
	}})
}

func init() { rootCmd.AddCommand(newTrainCmd()) }
