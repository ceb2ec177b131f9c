package main

import (
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/irtfit"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/train/analyze"
	"github.com/jeirt/jeirt/train/irt"
	"github.com/jeirt/jeirt/train/sweep"
	"github.com/spf13/cobra"
)

func init() { rootCmd.AddCommand(newAnalyzeCmd()) }

// newAnalyzeCmd builds `jeirt analyze` (fresh flags each call, for tests).
func newAnalyzeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "analyze",
		Short: "The papers' analyses: question-direction clusters, probes, empirical ICCs, the dimension ablation",
		Long: `Analyses of fitted models, each written as CSV files into an output folder (atomically):

  groups      derive a category for every item (from its text or id) into an item file
  directions  spherical k-means on a checkpoint's question directions; ARI and NMI against the categories
  probe       the difference-of-means axis between two categories and each model's projection on it
  icc         empirical item characteristic curves against a 2PL fit; flags non-monotone items and negative slopes
  dims        test accuracy and log loss against the embedding dimension, from a sweep's runs
  lobo        the leave-one-benchmark-out table of split.by: benchmark runs, with the alignment correlation`,
	}
	cmd.AddCommand(newAnalyzeGroupsCmd(), newAnalyzeDirectionsCmd(), newAnalyzeProbeCmd(), newAnalyzeICCCmd(), newAnalyzeDimsCmd(), newAnalyzeLOBOCmd())
	return cmd
}

type files = map[string]func(io.Writer) error

// analysisCmd is a sub-command that checks its required flags, runs run
// (which prints its summary to w and returns the files to write) and writes
// the files into --out atomically (--force replaces it).
func analysisCmd(use, short string, args cobra.PositionalArgs, required []string, run func(w io.Writer, args []string) (files, error)) *cobra.Command {
	var out string
	var force bool
	cmd := &cobra.Command{Use: use, Short: short, Args: args}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		for _, name := range append(required, "out") {
			if cmd.Flags().Lookup(name).Value.String() == "" {
				return fmt.Errorf("%s: --%s is required", cmd.CommandPath(), name)
			}
		}
		w := cmd.OutOrStdout()
		fs, err := run(w, args)
		if err != nil {
			return err
		}
		err = model.WriteDirAtomic(out, force, func(tmp string) error {
			for name, write := range fs {
				if err := model.WriteFileAtomic(filepath.Join(tmp, name), write); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		var names []string
		for name := range fs {
			names = append(names, name)
		}
		sort.Strings(names)
		fmt.Fprintf(w, "wrote %s (%s)\n", out, strings.Join(names, ", "))
		return nil
	}
	cmd.Flags().StringVar(&out, "out", "", "output folder (required)")
	cmd.Flags().BoolVar(&force, "force", false, "replace --out if it exists")
	return cmd
}

func newAnalyzeGroupsCmd() *cobra.Command {
	var ro read.Options
	var data, rule, out string
	cmd := &cobra.Command{
		Use:   "groups --data FILE [--items TEXTS] --rule text-bracket|id-stem|id-first --out ITEMS.csv",
		Short: "Write an item file (item_id,text,category) whose category is derived from each item's text or id",
		Example: `  jeirt analyze groups --data configs/data/swebench-verified/response_matrix.csv --rule id-first --out out/swe-groups.csv
  # RewardBench: the subset in the prompt's leading [brackets]
  jeirt analyze groups --data rewardbench/response_matrix.csv --items rewardbench/item_content.csv --rule text-bracket --out rb-items.csv`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if data == "" || out == "" {
				return fmt.Errorf("analyze groups: --data and --out are required")
			}
			r, _, err := read.File(data, ro)
			if err != nil {
				return err
			}
			if r.ItemGroup, err = analyze.DeriveGroups(r.Items, r.ItemText, rule); err != nil {
				return err
			}
			if err := model.WriteItemsCSV(out, r); err != nil {
				return err
			}
			count := map[string]int{}
			for _, g := range r.ItemGroup {
				count[g]++
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %d items in %d categories (%d without one)\n", out, len(r.Items), len(count)-min(count[""], 1), count[""])
			return nil
		},
	}
	addReadFlags(cmd, &ro)
	cmd.Flags().StringVar(&data, "data", "", "response file (required)")
	cmd.Flags().StringVar(&rule, "rule", analyze.RuleTextBracket, "text-bracket (a leading [name] of the text), id-stem (the id without a trailing _123) or id-first (the id up to its first _ - / :)")
	cmd.Flags().StringVar(&out, "out", "", "item file to write (required)")
	return cmd
}

func newAnalyzeDirectionsCmd() *cobra.Command {
	var ckDir, items string
	var c analyze.Directions
	cmd := analysisCmd("directions --checkpoint DIR --items ITEMS.csv --out DIR",
		"Cluster question directions (spherical k-means) and compare with the categories: ARI, NMI, nearest categories",
		cobra.NoArgs, []string{"checkpoint", "items"}, func(w io.Writer, _ []string) (files, error) {
			ck, err := model.LoadCheckpoint(ckDir)
			if err != nil {
				return nil, err
			}
			cat, err := analyze.ItemCategories(ck.Model.Items, items)
			if err != nil {
				return nil, err
			}
			res, err := c.Run(ck.Model.Q, ck.Model.Dim, cat)
			if err != nil {
				return nil, err
			}
			res.Summary(w)
			return files{"clusters.csv": res.WriteClusters,
				"assignments.csv": func(w io.Writer) error { return res.WriteAssignments(w, ck.Model.Items, cat) }}, nil
		})
	f := cmd.Flags()
	f.StringVar(&ckDir, "checkpoint", "", "checkpoint folder written by jeirt train (required)")
	f.StringVar(&items, "items", "", "item file with a category or benchmark column (required)")
	f.IntVar(&c.K, "k", 0, "clusters (0: the number of categories)")
	f.IntVar(&c.Restarts, "restarts", 10, "k-means++ restarts; the best total cosine is kept")
	f.Int64Var(&c.Seed, "seed", 0, "seed")
	return cmd
}

func newAnalyzeProbeCmd() *cobra.Command {
	var ckDir, axis, data string
	var ro read.Options // ro.Items is the item file with categories
	cmd := analysisCmd("probe --checkpoint DIR --items ITEMS.csv --axis A,B --out DIR",
		"Project every model on the difference-of-means axis between two categories of questions",
		cobra.NoArgs, []string{"checkpoint", "items", "axis"}, func(w io.Writer, _ []string) (files, error) {
			ab := strings.Split(axis, ",")
			if len(ab) != 2 || ab[0] == "" || ab[1] == "" {
				return nil, fmt.Errorf("--axis %q: want two categories, A,B", axis)
			}
			ck, err := model.LoadCheckpoint(ckDir)
			if err != nil {
				return nil, err
			}
			cat, err := analyze.ItemCategories(ck.Model.Items, ro.Items)
			if err != nil {
				return nil, err
			}
			var r *model.Responses
			if data != "" {
				if r, _, err = read.File(data, ro); err != nil {
					return nil, err
				}
			}
			res, err := analyze.Probe(ck.Model, cat, ab[0], ab[1], r)
			if err != nil {
				return nil, err
			}
			fmt.Fprintf(w, "axis %s − %s (%d and %d items): item AUC %.4f; Spearman(projection, accuracy gap) %.4f\n",
				res.A, res.B, res.NA, res.NB, res.ItemAUC, res.AccuracyGapSpearman)
			return files{"probe.csv": res.Write}, nil
		})
	addReadFlags(cmd, &ro)
	f := cmd.Flags()
	f.Lookup("items").Usage = "item file with a category or benchmark column (required)"
	f.StringVar(&ckDir, "checkpoint", "", "checkpoint folder written by jeirt train (required)")
	f.StringVar(&axis, "axis", "", "two categories A,B: the axis points from B's mean question direction to A's (required)")
	f.StringVar(&data, "data", "", "responses, to add each model's accuracy on A and on B (optional)")
	return cmd
}

func newAnalyzeICCCmd() *cobra.Command {
	var fitDir string
	var c analyze.ICC
	cmd := analysisCmd("icc --fit DIR --out DIR",
		"Empirical item characteristic curves by ability bin against the fitted 2PL; flag non-monotone items and negative slopes",
		cobra.NoArgs, []string{"fit"}, func(w io.Writer, _ []string) (files, error) {
			folder, err := irtfit.Read(fitDir)
			if err != nil {
				return nil, err
			}
			r, err := irt.ReadFitData(folder.Doc.Settings)
			if err != nil {
				return nil, fmt.Errorf("re-reading the fit's responses: %w", err)
			}
			res, err := c.Run(r, folder.IRT())
			if err != nil {
				return nil, err
			}
			fmt.Fprintf(w, "%d items, %d ability bins: %d non_monotone, %d negative_slope\n",
				len(res.Items), len(res.Mid), res.Count[analyze.FlagNonMonotone], res.Count[analyze.FlagNegativeSlope])
			return files{"icc_items.csv": res.WriteItems, "icc_curves.csv": res.WriteCurves,
				"icc.svg": func(w io.Writer) error { return res.WriteFigure(w, 6) }}, nil
		})
	cmd.Example = `  jeirt analyze icc --fit out/swe-irt --out out/swe-icc`
	f := cmd.Flags()
	f.StringVar(&fitDir, "fit", "", "rank-1 folder written by jeirt irt fit (required; its responses are read again)")
	f.IntVar(&c.Bins, "bins", 5, "ability bins (quantiles of θ over the models)")
	f.Float64Var(&c.Z, "z", 2.5, "flag a fall between adjacent bins, or a negative free slope, beyond this many standard errors")
	f.IntVar(&c.MinCount, "min-count", 5, "bins with fewer cells are not compared")
	return cmd
}

func newAnalyzeDimsCmd() *cobra.Command {
	var dir, key string
	cmd := analysisCmd("dims --sweep DIR --out DIR",
		"Test accuracy and log loss against the embedding dimension, from a sweep's finished runs",
		cobra.NoArgs, []string{"sweep"}, func(w io.Writer, _ []string) (files, error) {
			t, err := sweep.CollectSweep(dir)
			if err != nil {
				return nil, err
			}
			rows, err := analyze.Dims(t, key)
			if err != nil {
				return nil, err
			}
			analyze.DimsSummary(w, rows)
			return files{"dims.csv": func(w io.Writer) error { return analyze.WriteDims(w, rows) },
				"dims.svg": func(w io.Writer) error { return analyze.WriteDimsFigure(w, rows) }}, nil
		})
	cmd.Flags().StringVar(&dir, "sweep", "", "sweep folder (jeirt sweep --emit) whose runs have finished (required)")
	cmd.Flags().StringVar(&key, "key", "model.dim", "the config key of the dimension")
	return cmd
}

func newAnalyzeLOBOCmd() *cobra.Command {
	return analysisCmd("lobo --out DIR CHECKPOINT...",
		"Table leave-one-benchmark-out runs (split.by: benchmark): held-out accuracy, baselines, alignment and their correlation",
		cobra.MinimumNArgs(1), nil, func(w io.Writer, args []string) (files, error) {
			l, err := analyze.CollectLOBO(args)
			if err != nil {
				return nil, err
			}
			l.Summary(w)
			return files{"lobo.csv": l.Write}, nil
		})
}
