package main

import (
	"fmt"
	"io"
	"os"

	"github.com/jeirt/jeirt/cmd/internal/analyzerun"
	"github.com/jeirt/jeirt/cmd/internal/cli"
	"github.com/jeirt/jeirt/model/progress"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/train/analyze"
	"github.com/spf13/cobra"
)

func init() { rootCmd.AddCommand(newAnalyzeCmd()) }

// newAnalyzeCmd builds `jeirt analyze` (fresh flags each call, for tests).
func newAnalyzeCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "analyze", Args: cobra.ArbitraryArgs, RunE: groupRun, Long: helpText("analyze"), Example: helpExamples("analyze"),
		Short: "The papers' analyses: question-direction clusters, probes, empirical ICCs, the dimension ablation"}
	var ro read.Options
	var data, rule, out string
	groups := &cobra.Command{
		Use:     "groups --data FILE [--items TEXTS] --rule text-bracket|id-stem|id-first --out ITEMS.csv",
		Short:   "Write an item file (item_id,text,category) whose category is derived from each item's text or id",
		Example: `  jeirt analyze groups --data configs/data/swebench-verified/response_matrix.csv --rule id-first --out out/swe-groups.csv`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if data == "" || out == "" {
				return fmt.Errorf("analyze groups: --data and --out are required")
			}
			msg, err := analyzerun.GroupsFile(data, ro, rule, out)
			if err == nil {
				fmt.Fprintln(cmd.OutOrStdout(), msg)
			}
			return err
		},
	}
	cli.ReadFlags(groups, &ro)
	groups.Flags().StringVar(&data, "data", "", "response file (required)")
	groups.Flags().StringVar(&rule, "rule", analyze.RuleTextBracket, "text-bracket (a leading [name] of the text), id-stem (the id without a trailing _123) or id-first (the id up to its first _ - / :)")
	groups.Flags().StringVar(&out, "out", "", "item file to write (required)")

	var dr analyzerun.DirectionsRun
	dir := analysisCmd("directions --checkpoint DIR --groups GROUPS.csv --out DIR", "Cluster question directions (spherical k-means) and compare with the categories: ARI, NMI, nearest categories",
		cobra.NoArgs, []string{"checkpoint", "groups"}, func(w io.Writer, _ []string) (analyzerun.Files, error) {
			dr.Log = progress.LogTo(os.Stderr)
			return dr.Run(w)
		})
	dir.Example = `  jeirt analyze groups --data configs/data/swebench-verified/response_matrix.csv --rule id-first --out out/swe-groups.csv
  jeirt analyze directions --checkpoint out/quickstart --groups out/swe-groups.csv --out out/swe-directions`
	dir.Flags().StringVar(&dr.Checkpoint, "checkpoint", "", "checkpoint folder written by jeirt train (required)")
	dir.Flags().StringVar(&dr.Groups, "groups", "", cli.GroupsUsage+" (required)")
	alias(dir, "items", "groups")
	dir.Flags().IntVar(&dr.K, "k", 0, "clusters (0: the number of categories)")
	dir.Flags().IntVar(&dr.Restarts, "restarts", 10, "k-means++ restarts; the best total cosine is kept")
	dir.Flags().Int64Var(&dr.Seed, "seed", 0, "seed")

	var pr analyzerun.ProbeRun
	probe := analysisCmd("probe --checkpoint DIR --groups GROUPS.csv --axis A,B --out DIR", "Project every model on the difference-of-means axis between two categories of questions",
		cobra.NoArgs, []string{"checkpoint", "axis"}, func(w io.Writer, _ []string) (analyzerun.Files, error) {
			pr.Log = progress.LogTo(os.Stderr)
			return pr.Run(w)
		})
	probe.Example = `  jeirt analyze probe --checkpoint out/quickstart --groups out/swe-groups.csv --axis django,sympy --data configs/data/swebench-verified/response_matrix.csv --out out/swe-probe`
	cli.ReadFlags(probe, &pr.Read)
	probe.Flags().StringVar(&pr.Groups, "groups", "", cli.GroupsUsage+" (required)")
	probe.Flags().StringVar(&pr.Checkpoint, "checkpoint", "", "checkpoint folder written by jeirt train (required)")
	probe.Flags().StringVar(&pr.Axis, "axis", "", "two categories A,B: the axis points from B's mean question direction to A's (required)")
	probe.Flags().StringVar(&pr.Data, "data", "", "responses, to add each model's accuracy on A and on B (optional)")

	var ic analyzerun.ICCRun
	icc := analysisCmd("icc --fit DIR --out DIR", "Empirical item characteristic curves by ability bin against the fitted 2PL; flag non-monotone items and negative slopes",
		cobra.NoArgs, []string{"fit"}, func(w io.Writer, _ []string) (analyzerun.Files, error) { return ic.Run(w) })
	icc.Example = `  jeirt analyze icc --fit out/swe-irt --out out/swe-icc`
	icc.Flags().StringVar(&ic.Fit, "fit", "", "rank-1 folder written by jeirt irt fit (required; its responses are read again)")
	icc.Flags().IntVar(&ic.Bins, "bins", 5, "ability bins (quantiles of θ over the models)")
	icc.Flags().Float64Var(&ic.Z, "z", 2.5, "flag a fall between adjacent bins, or a negative free slope, beyond this many standard errors")
	icc.Flags().IntVar(&ic.MinCount, "min-count", 5, "bins with fewer cells are not compared")

	var dm analyzerun.DimsRun
	dims := analysisCmd("dims --sweep DIR --out DIR", "Test accuracy and log loss against the embedding dimension, from a sweep's finished runs",
		cobra.NoArgs, []string{"sweep"}, func(w io.Writer, _ []string) (analyzerun.Files, error) { return dm.Run(w) })
	dims.Example = `  jeirt sweep --config configs/sweeps/swebench-dims.yaml --emit local --out out/sweep-dims
  jeirt analyze dims --sweep out/sweep-dims --out out/dims`
	dims.Flags().StringVar(&dm.Sweep, "sweep", "", "sweep folder (jeirt sweep --emit) whose runs have finished (required)")
	dims.Flags().StringVar(&dm.Key, "key", "model.dim", "the config key of the dimension")

	lobo := analysisCmd("lobo --out DIR CHECKPOINT...", "Table leave-one-benchmark-out runs (split.by: benchmark): held-out accuracy, baselines, alignment and their correlation",
		cobra.MinimumNArgs(1), nil, analyzerun.LOBORun)
	lobo.Example = `  jeirt train --config configs/quickstart.yaml --set data.items=out/swe-groups.csv --set split.by=benchmark --set split.hold=sympy --set output=out/lobo-sympy
  jeirt analyze lobo --out out/swe-lobo out/lobo-sympy`
	cmd.AddCommand(cli.Guard(groups, cli.Outputs{Files: []string{"out"}}), dir, probe, icc, dims, lobo)
	return cmd
}

// analysisCmd is a sub-command that checks its required flags, runs run
// (which prints its summary and returns the files) and writes the files
// into --out atomically (--force replaces it).
func analysisCmd(use, short string, args cobra.PositionalArgs, required []string, run func(w io.Writer, args []string) (analyzerun.Files, error)) *cobra.Command {
	var out string
	var force bool
	cmd := &cobra.Command{Use: use, Short: short, Args: args}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		for _, name := range append(required, "out") {
			if cmd.Flags().Lookup(name).Value.String() == "" {
				return fmt.Errorf("%s: --%s is required", cmd.CommandPath(), name)
			}
		}
		fs, err := run(cmd.OutOrStdout(), args)
		if err != nil {
			return err
		}
		msg, err := analyzerun.WriteFiles(out, force, fs)
		if err == nil {
			fmt.Fprintln(cmd.OutOrStdout(), msg)
		}
		return err
	}
	cmd.Flags().StringVar(&out, "out", "", "output folder (required)")
	cmd.Flags().BoolVar(&force, "force", false, "replace --out if it exists (only a folder jeirt wrote)")
	return cli.Guard(cmd, cli.Outputs{Folders: []string{"out"}, ArgsIn: true})
}
