package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/irtfit"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/train/analyze"
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

// writeAnalysis writes files (name -> writer) into out atomically.
func writeAnalysis(out string, force bool, files map[string]func(io.Writer) error) error {
	return model.WriteDirAtomic(out, force, func(tmp string) error {
		for name, write := range files {
			if err := model.WriteFileAtomic(filepath.Join(tmp, name), write); err != nil {
				return err
			}
		}
		return nil
	})
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
			g, err := analyze.DeriveGroups(r.Items, r.ItemText, rule)
			if err != nil {
				return err
			}
			r.ItemGroup = g
			if err := model.WriteItemsCSV(out, r); err != nil {
				return err
			}
			count := map[string]int{}
			for _, x := range g {
				count[x]++
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %d items in %d categories (%d without one)\n", out, len(g), len(count)-min(count[""], 1), count[""])
			return nil
		},
	}
	addReadFlags(cmd, &ro)
	cmd.Flags().StringVar(&data, "data", "", "response file (required)")
	cmd.Flags().StringVar(&rule, "rule", analyze.RuleTextBracket, "text-bracket (a leading [name] of the text), id-stem (the id without a trailing _123) or id-first (the id up to its first _ - / :)")
	cmd.Flags().StringVar(&out, "out", "", "item file to write (required)")
	return cmd
}

// checkpointCategories loads a checkpoint and the category of each of its
// items from an item file (by id; "" where the file has none).
func checkpointCategories(ckDir, items string) (*model.Checkpoint, []string, error) {
	ck, err := model.LoadCheckpoint(ckDir)
	if err != nil {
		return nil, nil, err
	}
	t, err := read.Items(items)
	if err != nil {
		return nil, nil, err
	}
	if t.Group == nil {
		return nil, nil, fmt.Errorf("%s has no category or benchmark column (make one with jeirt analyze groups)", items)
	}
	at := map[string]string{}
	for k, id := range t.IDs {
		at[id] = t.Group[k]
	}
	cat := make([]string, len(ck.Model.Items))
	found := 0
	for j, id := range ck.Model.Items {
		if g, ok := at[id]; ok {
			cat[j] = g
			found++
		}
	}
	if found == 0 {
		return nil, nil, fmt.Errorf("%s: none of its ids is an item of the checkpoint %s", items, ckDir)
	}
	return ck, cat, nil
}

func newAnalyzeDirectionsCmd() *cobra.Command {
	var ckDir, items, out string
	var c analyze.Directions
	var force bool
	cmd := &cobra.Command{
		Use:     "directions --checkpoint DIR --items ITEMS.csv --out DIR",
		Short:   "Cluster question directions (spherical k-means) and compare with the categories: ARI, NMI, nearest categories",
		Example: `  jeirt analyze directions --checkpoint out/quickstart --items configs/data/swebench-verified/item_content.csv --out out/directions`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if ckDir == "" || items == "" || out == "" {
				return fmt.Errorf("analyze directions: --checkpoint, --items and --out are required")
			}
			ck, cat, err := checkpointCategories(ckDir, items)
			if err != nil {
				return err
			}
			res, err := c.Run(ck.Model.Q, ck.Model.Dim, cat)
			if err != nil {
				return err
			}
			err = writeAnalysis(out, force, map[string]func(io.Writer) error{
				"clusters.csv":    res.WriteClusters,
				"assignments.csv": func(w io.Writer) error { return res.WriteAssignments(w, ck.Model.Items, cat) },
			})
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "%d items, k = %d: ARI %.4f, NMI %.4f against the categories\n", len(cat), res.K, res.ARI, res.NMI)
			for k, cl := range res.Clusters {
				fmt.Fprintf(w, "  cluster %2d (%4d items): nearest %s\n", k, cl.Size, shareText(cl.Nearest))
			}
			fmt.Fprintf(w, "wrote %s (clusters.csv, assignments.csv)\n", out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&ckDir, "checkpoint", "", "checkpoint folder written by jeirt train (required)")
	f.StringVar(&items, "items", "", "item file with a category or benchmark column (required)")
	f.IntVar(&c.K, "k", 0, "clusters (0: the number of categories)")
	f.IntVar(&c.Restarts, "restarts", 10, "k-means++ restarts; the best total cosine is kept")
	f.Int64Var(&c.Seed, "seed", 0, "seed")
	f.StringVar(&out, "out", "", "output folder (required)")
	f.BoolVar(&force, "force", false, "replace --out if it exists")
	return cmd
}

func shareText(s []analyze.Share) string {
	var p []string
	for _, x := range s {
		p = append(p, fmt.Sprintf("%s (%.3f)", x.Category, x.Value))
	}
	return strings.Join(p, ", ")
}

func newAnalyzeProbeCmd() *cobra.Command {
	var ckDir, axis, data, out string
	var ro read.Options // ro.Items is the item file with categories
	var force bool
	cmd := &cobra.Command{
		Use:   "probe --checkpoint DIR --items ITEMS.csv --axis A,B --out DIR",
		Short: "Project every model on the difference-of-means axis between two categories of questions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if ckDir == "" || ro.Items == "" || out == "" {
				return fmt.Errorf("analyze probe: --checkpoint, --items, --axis and --out are required")
			}
			ab := strings.Split(axis, ",")
			if len(ab) != 2 || ab[0] == "" || ab[1] == "" {
				return fmt.Errorf("--axis %q: want two categories, A,B", axis)
			}
			ck, cat, err := checkpointCategories(ckDir, ro.Items)
			if err != nil {
				return err
			}
			var r *model.Responses
			if data != "" {
				if r, _, err = read.File(data, ro); err != nil {
					return err
				}
			}
			res, err := analyze.Probe(ck.Model, cat, ab[0], ab[1], r)
			if err != nil {
				return err
			}
			if err := writeAnalysis(out, force, map[string]func(io.Writer) error{"probe.csv": res.Write}); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "axis %s − %s (%d and %d items): item AUC %.4f; Spearman(projection, accuracy gap) %.4f\nwrote %s (probe.csv)\n",
				res.A, res.B, res.NA, res.NB, res.ItemAUC, res.AccuracyGapSpearman, out)
			return nil
		},
	}
	addReadFlags(cmd, &ro)
	f := cmd.Flags()
	f.Lookup("items").Usage = "item file with a category or benchmark column (required)"
	f.StringVar(&ckDir, "checkpoint", "", "checkpoint folder written by jeirt train (required)")
	f.StringVar(&axis, "axis", "", "two categories A,B: the axis points from B's mean question direction to A's (required)")
	f.StringVar(&data, "data", "", "responses, to add each model's accuracy on A and on B (optional)")
	f.StringVar(&out, "out", "", "output folder (required)")
	f.BoolVar(&force, "force", false, "replace --out if it exists")
	return cmd
}

func newAnalyzeICCCmd() *cobra.Command {
	var fitDir, out string
	var c analyze.ICC
	var force bool
	cmd := &cobra.Command{
		Use:     "icc --fit DIR --out DIR",
		Short:   "Empirical item characteristic curves by ability bin against the fitted 2PL; flag non-monotone items and negative slopes",
		Example: `  jeirt analyze icc --fit out/swe-irt --out out/swe-icc`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if fitDir == "" || out == "" {
				return fmt.Errorf("analyze icc: --fit and --out are required")
			}
			folder, err := irtfit.Read(fitDir)
			if err != nil {
				return err
			}
			s := folder.Doc.Settings
			r, _, err := read.File(s.Data, read.Options{Format: s.Format, Items: s.Items, Duplicates: s.Duplicates})
			if err != nil {
				return fmt.Errorf("re-reading the fit's responses: %w", err)
			}
			res, err := c.Run(r, folder.IRT())
			if err != nil {
				return err
			}
			err = writeAnalysis(out, force, map[string]func(io.Writer) error{"icc_items.csv": res.WriteItems, "icc_curves.csv": res.WriteCurves,
				"icc.svg": func(w io.Writer) error { return res.WriteFigure(w, 6) }})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%d items, %d ability bins: %d non_monotone, %d negative_slope\nwrote %s (icc_items.csv, icc_curves.csv, icc.svg)\n",
				len(res.Items), len(res.Mid), res.Count[analyze.FlagNonMonotone], res.Count[analyze.FlagNegativeSlope], out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&fitDir, "fit", "", "rank-1 folder written by jeirt irt fit (required; its responses are read again)")
	f.IntVar(&c.Bins, "bins", 5, "ability bins (quantiles of θ over the models)")
	f.Float64Var(&c.Z, "z", 2.5, "flag a fall between adjacent bins, or a negative free slope, beyond this many standard errors")
	f.IntVar(&c.MinCount, "min-count", 5, "bins with fewer cells are not compared")
	f.StringVar(&out, "out", "", "output folder (required)")
	f.BoolVar(&force, "force", false, "replace --out if it exists")
	return cmd
}

func newAnalyzeDimsCmd() *cobra.Command {
	var dir, key, out string
	var force bool
	cmd := &cobra.Command{
		Use:   "dims --sweep DIR --out DIR",
		Short: "Test accuracy and log loss against the embedding dimension, from a sweep's finished runs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if dir == "" || out == "" {
				return fmt.Errorf("analyze dims: --sweep and --out are required")
			}
			t, err := sweep.CollectSweep(dir)
			if err != nil {
				return err
			}
			rows, err := analyze.Dims(t, key)
			if err != nil {
				return err
			}
			if err := writeAnalysis(out, force, map[string]func(io.Writer) error{"dims.csv": func(w io.Writer) error { return analyze.WriteDims(w, rows) },
				"dims.svg": func(w io.Writer) error { return analyze.WriteDimsFigure(w, rows) }}); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "%6s %5s %10s %10s %10s %10s\n", "dim", "runs", "best acc", "best ll", "mean acc", "mean ll")
			for _, r := range rows {
				fmt.Fprintf(w, "%6d %5d %10.4f %10.4f %10.4f %10.4f\n", r.Dim, r.Runs, r.BestAccuracy, r.BestLogLoss, r.MeanAccuracy, r.MeanLogLoss)
			}
			fmt.Fprintf(w, "wrote %s (dims.csv, dims.svg)\n", out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&dir, "sweep", "", "sweep folder (jeirt sweep --emit) whose runs have finished (required)")
	f.StringVar(&key, "key", "model.dim", "the config key of the dimension")
	f.StringVar(&out, "out", "", "output folder (required)")
	f.BoolVar(&force, "force", false, "replace --out if it exists")
	return cmd
}

func newAnalyzeLOBOCmd() *cobra.Command {
	var out string
	var force bool
	cmd := &cobra.Command{
		Use:   "lobo --out DIR CHECKPOINT...",
		Short: "Table leave-one-benchmark-out runs (split.by: benchmark): held-out accuracy, baselines, alignment and their correlation",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return fmt.Errorf("analyze lobo: --out is required")
			}
			l, err := analyze.CollectLOBO(args)
			if err != nil {
				return err
			}
			if err := writeAnalysis(out, force, map[string]func(io.Writer) error{"lobo.csv": l.Write}); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "%-28s %7s %7s", "held out", "cells", "jeirt")
			for _, b := range analyze.LOBOBaselines {
				fmt.Fprintf(w, " %10s", b)
			}
			fmt.Fprintf(w, " %7s  %s\n", "cosine", "nearest")
			for _, r := range l.Rows {
				fmt.Fprintf(w, "%-28s %7d %7.4f", r.HeldOut, r.Cells, r.JEIRT)
				for _, b := range analyze.LOBOBaselines {
					v, ok := r.Baselines[b]
					if !ok {
						fmt.Fprintf(w, " %10s", "-")
						continue
					}
					fmt.Fprintf(w, " %10.4f", v)
				}
				fmt.Fprintf(w, " %7.4f  %s\n", r.Cosine, r.Nearest)
			}
			fmt.Fprintf(w, "cosine vs jeirt accuracy: Pearson %.3f, Spearman %.3f; vs gain over model_mean: Pearson %.3f, Spearman %.3f\nwrote %s (lobo.csv)\n",
				l.PearsonAcc, l.SpearmanAcc, l.PearsonGain, l.SpearmanGain, out)
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "output folder (required)")
	cmd.Flags().BoolVar(&force, "force", false, "replace --out if it exists")
	return cmd
}
