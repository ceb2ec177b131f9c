package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/jeirt"
	"github.com/jeirt/jeirt/train/onboard"
)

func newTrainCmd() *cobra.Command {
	var configPath string
	var overrides []string
	var force, noBaselines bool
	var device string
	cmd := &cobra.Command{
		Use:   "train --config FILE [--set key=value ...]",
		Short: "Train JE-IRT question and model embeddings and score them against baselines",
		Long: `Train JE-IRT: question embeddings q = adapter(encoder(text)) and model embeddings m
with P(correct) = sigmoid(q·m/‖q‖ − ‖q‖), from a YAML config (see docs/training.md for every key).

Prints one line per epoch (train/val loss and accuracy, learning rate, examples/s)
and warnings on standard error; then, on standard output, why training stopped and
the test-cell table: JE-IRT, majority label, per-model mean, per-item mean, kNN
questions by encoder cosine (k chosen on validation) and 2PL (cBMM). With
split.by=model the held-out models are not trained: each is onboarded from
split.onboard_fraction of its cells (the add-model fit) and scored on the rest,
next to its per-model mean.
Writes the checkpoint folder named by output: model.safetensors, manifest.json and
metrics.json, atomically. Ctrl-C stops training and writes the best epoch so far.`,
		Example: `  jeirt train --config configs/quickstart.yaml
  jeirt train --config configs/swebench.yaml --set model.dim=128 --set output=out/swe-d128
  jeirt train --config configs/swebench.yaml --set split.by=item --set output=out/swe-by-item
  jeirt train --config configs/swebench.yaml --set split.by=model --set split.joint=true --set output=out/swe-by-model`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if configPath == "" {
				return fmt.Errorf("train: --config is required (try configs/quickstart.yaml)")
			}
			cfg, err := jeirt.LoadConfig(configPath)
			if err != nil {
				return err
			}
			if device != "" {
				if _, err := resolveDevice(device); err != nil {
					return err
				}
				overrides = append(overrides, "train.device="+device)
			}
			if len(overrides) > 0 {
				if err := cfg.SetAll(overrides); err != nil {
					return err
				}
				if err := cfg.Validate(); err != nil {
					return err
				}
			}
			_, err = jeirt.RunJEIRT(cmd.Context(), cfg, jeirt.RunOptions{Log: model.LogTo(cmd.ErrOrStderr()), Results: func(stop string, m *jeirt.RunMetrics) {
				fmt.Fprintf(cmd.OutOrStdout(), "stopped: %s\n", stop)
				jeirt.PrintScoreTable(cmd.OutOrStdout(), m)
			},
				Version: version, Replace: force, NoBaselines: noBaselines, Onboard: onboard.HeldOut})
			return err
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "YAML config file")
	cmd.Flags().StringArrayVar(&overrides, "set", nil, "override a config key, e.g. --set model.dim=128 (repeatable)")
	cmd.Flags().BoolVar(&force, "force", false, "replace the output folder if it exists")
	cmd.Flags().BoolVar(&noBaselines, "no-baselines", false, "skip the baseline table")
	cmd.Flags().StringVar(&device, "device", "", "auto|cpu|cuda: overrides train.device of the config")
	return cmd
}

func init() { rootCmd.AddCommand(newTrainCmd()) }
