package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/irtfit"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/train/backend"
	"github.com/jeirt/jeirt/train/eval"
	"github.com/jeirt/jeirt/train/irt"
	"github.com/spf13/cobra"
)

func init() { rootCmd.AddCommand(newIRTCmd()) }

// newIRTCmd builds the irt command tree (fresh flags each call, for tests).
func newIRTCmd() *cobra.Command {
	irtCmd := &cobra.Command{
		Use:   "irt",
		Short: "Fit 2PL / multidimensional IRT by cBMM, with bootstrap, item selection and cross-validation",
		Long: `Fit (multidimensional) 2PL IRT, P(correct) = sigmoid((θ_i·a_j + b_j)/σ), by joint maximum
likelihood with constrained block majorization-minimization (cBMM).

Parameters are reported in one gauge: every θ dimension has mean 0 and sd 1 over the
models, a ≥ 0 (higher θ means more correct), and b is the logit of an average model.
items.csv uses mirt's names: d for that intercept and b = −d/a for the difficulty.`,
	}
	addIRTSubcommands(irtCmd)
	return irtCmd
}

// irtFitSettings are the flags of irt fit and irt cv, as fit.json records them.
type irtFitSettings irtfit.Settings

func addIRTSubcommands(irtCmd *cobra.Command) {
	var set irtFitSettings
	var readOpt read.Options
	var out, traceOut string
	var data, names []string
	var force bool
	fit := &cobra.Command{
		Use:   "fit",
		Short: "Fit abilities θ, discriminations a and difficulties b; write abilities.csv, items.csv, fit.json",
		Example: `  jeirt irt fit --data configs/data/swebench-verified/response_matrix.csv --out out/swe-irt
  jeirt irt fit --data configs/data/swebench-verified/response_matrix.csv --rank 2 --bootstrap 200 --seed 1 --out out/swe-irt-r2
  # several benchmarks in one batched cBMM run (one GPU job) -> out/batch/swe/, out/batch/swe-parquet/
  jeirt irt fit --data configs/data/swebench-verified/response_matrix.csv --data out/swe.parquet --name swe --name swe-parquet --out out/batch`,
		RunE: func(cmd *cobra.Command, args []string) error {
			set.Format, set.Items, set.Duplicates = readOpt.Format, readOpt.Items, readOpt.Duplicates
			return runIRTFit(cmd, set, readOpt, data, names, out, traceOut, force)
		},
	}
	f := fit.Flags()
	f.StringArrayVar(&data, "data", nil, "response file (required); repeat it to fit several files in one batched run, each into --out/NAME")
	f.StringArrayVar(&names, "name", nil, "output sub-folder of each --data file, in order (default: the file's base name, or its folder's name when base names clash)")
	addReadFlags(fit, &readOpt)
	f.IntVar(&set.Rank, "rank", 1, "ability dimensions r")
	f.BoolVar(&set.Joint, "joint", false, "fit all --data files as one matrix (models matched by name, items grouped by file; --name names the groups) into --out")
	f.BoolVar(&set.Signed, "signed", false, "loadings of either sign (rank >= 2; identified by uncorrelated θ and a varimax rotation)")
	f.Float64Var(&set.Sigma, "sigma", 1, "logistic scale σ")
	f.Float64Var(&set.Tol, "tol", 1e-6, "stop when the relative loss change is below this")
	f.IntVar(&set.MaxIter, "max-iter", 1000, "iteration cap")
	f.BoolVar(&set.Accelerate, "accelerate", true, "extrapolated MM steps with a monotone safeguard (false: plain cBMM)")
	f.StringVar(&set.Device, "device", "auto", "auto|cpu|cuda")
	f.IntVar(&set.Threads, "threads", 0, "goroutines (0: all cores)")
	f.IntVar(&set.Bootstrap, "bootstrap", 0, "bootstrap replicates B (resampling items); 0: none")
	f.BoolVar(&set.BootstrapModels, "bootstrap-models", false, "also resample models in the bootstrap (for the SEs of a and b)")
	f.Float64Var(&set.Level, "level", 0.95, "bootstrap interval level")
	f.Int64Var(&set.Seed, "seed", 42, "bootstrap seed")
	f.Float64Var(&set.MinA, "min-a", 0.1, "flag items with discrimination ‖a‖/σ below this as uninformative")
	f.IntVar(&set.RankMove, "rank-move", 0, "list models whose θ rank and accuracy rank differ by more than this (0: max(3, N/20))")
	f.StringVar(&set.Method, "method", "cbmm", "cbmm (joint ML by MM), lbfgs (the same objective by gonum L-BFGS; rank 1, for benchmarks) or mml (marginal ML by EM with θ ~ N(0,1); rank 1, for many respondents and few items)")
	f.StringVar(&traceOut, "trace", "", "write seconds,loss per iteration to this CSV (cbmm, lbfgs)")
	f.StringVar(&out, "out", "", "output folder (required; written atomically, with one sub-folder per file in a batch)")
	f.BoolVar(&force, "force", false, "replace an existing output folder")
	_ = fit.MarkFlagRequired("data")
	_ = fit.MarkFlagRequired("out")

	var fitDir, selOut string
	var keep float64
	var sr selectRule
	sel := &cobra.Command{
		Use:   "select",
		Short: "Keep a fraction of items by Fisher information across the ability range, or by BenchMIRT's difficulty bins",
		Example: `  jeirt irt select --fit out/swe-irt --keep 0.1 --out out/swe-kept.csv
  jeirt irt select --fit out/swe-irt --keep 0.1 --rule benchmirt --bins 10 --out out/swe-kept-bm.csv`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runIRTSelect(cmd, fitDir, keep, selOut, sr)
		},
	}
	sel.Flags().StringVar(&sr.rule, "rule", "info", "info (the most informative item at each of 13 abilities in turn) or benchmirt (difficulty bins, the most discriminating items of each)")
	sel.Flags().IntVar(&sr.bins, "bins", 10, "difficulty bins of --rule benchmirt")
	sel.Flags().StringVar(&fitDir, "fit", "", "folder written by jeirt irt fit (required)")
	sel.Flags().Float64Var(&keep, "keep", 0.1, "fraction of items to keep, in (0, 1]")
	sel.Flags().StringVar(&selOut, "out", "", "CSV of the kept items (required)")
	_ = sel.MarkFlagRequired("fit")
	_ = sel.MarkFlagRequired("out")

	var cvSet irtFitSettings
	var cvRead read.Options
	var folds int
	var cvJSON string
	cv := &cobra.Command{
		Use:     "cv",
		Short:   "k-fold cross-validation over cells: IRT vs the per-model accuracy baseline",
		Example: `  jeirt irt cv --data configs/data/swebench-verified/response_matrix.csv --folds 10`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runIRTCV(cmd, cvSet, cvRead, folds, cvJSON)
		},
	}
	cf := cv.Flags()
	cf.StringVar(&cvSet.Data, "data", "", "response file (required)")
	addReadFlags(cv, &cvRead)
	cf.IntVar(&folds, "folds", 10, "number of folds")
	cf.Int64Var(&cvSet.Seed, "seed", 42, "fold assignment seed")
	cf.IntVar(&cvSet.Rank, "rank", 1, "ability dimensions r")
	cf.Float64Var(&cvSet.Sigma, "sigma", 1, "logistic scale σ")
	cf.Float64Var(&cvSet.Tol, "tol", 1e-6, "stop when the relative loss change is below this")
	cf.IntVar(&cvSet.MaxIter, "max-iter", 1000, "iteration cap")
	cf.StringVar(&cvSet.Device, "device", "auto", "auto|cpu|cuda")
	cf.IntVar(&cvSet.Threads, "threads", 0, "goroutines (0: all cores)")
	cf.StringVar(&cvJSON, "json", "", "also write the metrics as JSON to this file")
	_ = cv.MarkFlagRequired("data")

	irtCmd.AddCommand(fit, sel, cv)
}

func (s irtFitSettings) fitter(progress io.Writer) irt.CBMM {
	c := irt.FromSettings(irtfit.Settings(s))
	c.Progress = progress
	return c
}

func irtRead(cmd *cobra.Command, path string, opt read.Options) (*model.Responses, error) {
	began, cpu := time.Now(), cpuSeconds()
	r, rep, err := read.File(path, opt)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "read %s: %d models x %d items, %d observed cells (%s)\n",
		path, r.NumModels(), r.NumItems(), r.Len(), rep.Format)
	if verbose {
		fmt.Fprintf(cmd.ErrOrStderr(), "read in %.2fs (%.2fs CPU); cache: %s %s\n", time.Since(began).Seconds(), cpuSeconds()-cpu, orDash(rep.Cache), rep.CachePath)
	}
	if r.Len() >= 1<<24 {
		// Hand the reader's garbage (grown buffers, name tables) back before the
		// fit allocates its layout, so the two do not add up in the peak.
		debug.FreeOSMemory()
	}
	return r, nil
}

func totalCells(rs []*model.Responses) int {
	n := 0
	for _, r := range rs {
		n += r.Len()
	}
	return n
}

// irtFitResult is one fitted response file with everything its output folder
// holds.
type irtFitResult struct {
	name string // sub-folder of --out in a batch; "" for a single fit into --out
	r    *model.Responses
	an   *irt.Analysis
	dir  *irtfit.Folder
}

func runIRTFit(cmd *cobra.Command, set irtFitSettings, read read.Options, data, names []string, out, traceOut string, force bool) error {
	ctx := cmd.Context()
	set.Level = irtOrDefault(set.Level, 0.95)
	if err := irt.CheckSettings(irtfit.Settings(set)); err != nil {
		return err
	}
	if _, err := backend.Resolve(set.Device); err != nil {
		return err
	}
	if set.Joint {
		return runIRTFitJoint(cmd, set, read, data, names, out, force)
	}
	// A batch (several --data, or any --name) writes one folder per file under --out.
	batch := len(data) > 1 || len(names) > 0
	if len(names) > 0 && len(names) != len(data) {
		return fmt.Errorf("--name given %d time(s) for %d --data file(s): give one per file, in the same order, or none", len(names), len(data))
	}
	if batch && read.Items != "" {
		return fmt.Errorf("--items names the item texts of one benchmark; it cannot go with several --data files")
	}
	dirs, err := irtfit.OutNames(data, names)
	if err != nil {
		return err
	}
	if _, err := os.Stat(out); err == nil && !force {
		return fmt.Errorf("%s already exists (choose another --out or pass --force)", out)
	}
	rs := make([]*model.Responses, len(data))
	for k, path := range data {
		if rs[k], err = irtRead(cmd, path, read); err != nil {
			return err
		}
	}
	stderr := cmd.ErrOrStderr()
	var trace []string
	job := irt.FitJob{Settings: irtfit.Settings(set), Data: data, Version: version, Progress: stderr,
		Trace: func(k int, secs, loss float64) {
			line := fmt.Sprintf("%.6f,%.10g", secs, loss)
			if batch {
				line = dirs[k] + "," + line
			}
			trace = append(trace, line)
		}}
	folders, secs, err := job.Run(ctx, rs)
	if err != nil {
		return err
	}
	if cells := totalCells(rs); cells >= 1<<24 {
		// The fit's layout and surrogate are garbage now: free them before the
		// analyses build their own indexes, so the two do not add up in the peak.
		debug.FreeOSMemory()
	}
	if traceOut != "" {
		hdr := "seconds,loss\n"
		if batch {
			hdr = "fit,seconds,loss\n"
		}
		if err := model.WriteFileAtomic(traceOut, func(w io.Writer) error {
			_, err := io.WriteString(w, hdr+strings.Join(trace, "\n")+"\n")
			return err
		}); err != nil {
			return err
		}
	}
	if batch {
		fmt.Fprintf(stderr, "fit: %d files in one %s run, %.2fs\n", len(rs), set.Method, secs)
	}
	results := make([]*irtFitResult, len(rs))
	for k, r := range rs {
		if err := job.Analyze(ctx, k, r, folders[k], secs); err != nil {
			return err
		}
		results[k] = &irtFitResult{r: r, dir: folders[k].Folder, an: folders[k].Analysis}
		if batch {
			results[k].name, results[k].dir.Doc.BatchFits = dirs[k], len(rs)
		}
	}
	err = model.WriteDirAtomic(out, force, func(tmp string) error {
		if !batch {
			return irtfit.Write(tmp, results[0].dir)
		}
		for _, res := range results {
			sub := filepath.Join(tmp, res.name)
			if err := os.Mkdir(sub, 0o755); err != nil {
				return err
			}
			if err := irtfit.Write(sub, res.dir); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, res := range results {
		an := res.an
		fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %d models, %d items; Kendall τ(θ, accuracy) = %.4f; %d model(s) move more than %d ranks; flags %v\n",
			filepath.Join(out, res.name), res.r.NumModels(), res.r.NumItems(), an.KendallTau, len(an.RankMoves), an.RankMoveLimit, an.FlagCounts)
		if set.Signed {
			printGroupLoadings(cmd.OutOrStdout(), an.GroupLoadings)
		}
	}
	return nil
}

func irtOrDefault(v, d float64) float64 {
	if v == 0 {
		return d
	}
	return v
}

func runIRTSelect(cmd *cobra.Command, dir string, keep float64, out string, sr selectRule) error {
	folder, err := irtfit.Read(dir)
	if err != nil {
		return err
	}
	fit := folder.IRT()
	items, at, err := sr.choose(fit, keep)
	if err != nil {
		return fmt.Errorf("--keep: %w", err)
	}
	err = model.WriteFileAtomic(out, func(w io.Writer) error { return irtfit.WriteSelection(w, fit, items, at) })
	if err != nil {
		return err
	}
	msg := fmt.Sprintf("kept %d of %d items in %s", len(items), len(fit.Items), out)
	// τ between the rankings needs the responses: read them again as the fit did.
	set := irtFitSettings(folder.Doc.Settings)
	r, rerr := irtRead(cmd, set.Data, read.Options{Format: set.Format, Items: set.Items, Duplicates: set.Duplicates})
	if set.Joint {
		r, rerr = irt.ReadFitData(irtfit.Settings(set))
	}
	if rerr != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "select: cannot re-read %s for the ranking check: %v\n", set.Data, rerr)
	} else {
		if r.NumModels() != len(fit.Models) || r.NumItems() != len(fit.Items) {
			return fmt.Errorf("%s now has %d models x %d items, the fit in %s has %d x %d", set.Data,
				r.NumModels(), r.NumItems(), dir, len(fit.Models), len(fit.Items))
		}
		tau, _, err := irt.SelectionTau(cmd.Context(), set.fitter(cmd.ErrOrStderr()), r, fit, items)
		if err != nil {
			return err
		}
		msg += fmt.Sprintf("; Kendall τ between the model rankings from the kept items and from all items: %.4f", tau)
	}
	fmt.Fprintln(cmd.OutOrStdout(), msg)
	return nil
}

func runIRTCV(cmd *cobra.Command, set irtFitSettings, read read.Options, folds int, jsonOut string) error {
	set.Level, set.Accelerate, set.Method = 0.95, true, "cbmm"
	if err := irt.CheckSettings(irtfit.Settings(set)); err != nil {
		return err
	}
	if folds < 2 {
		return fmt.Errorf("--folds %d: need at least 2", folds)
	}
	if _, err := backend.Resolve(set.Device); err != nil {
		return err
	}
	r, err := irtRead(cmd, set.Data, read)
	if err != nil {
		return err
	}
	start := time.Now()
	res, err := irt.CrossValidate(cmd.Context(), set.fitter(cmd.ErrOrStderr()), r, folds, set.Seed)
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "cv: %d folds in %.2fs\n", folds, time.Since(start).Seconds())
	w := cmd.OutOrStdout()
	name := "2PL"
	if set.Rank > 1 {
		name = fmt.Sprintf("rank-%d", set.Rank)
	}
	fmt.Fprintf(w, "%d-fold CV over %d cells (seed %d)\n", folds, r.Len(), set.Seed)
	fmt.Fprintf(w, "%-22s %9s %9s %9s %9s %9s %9s\n", "method", "accuracy", "log_loss", "auc", "brier", "spearman", "kendall")
	for _, row := range []struct {
		n string
		m eval.Metrics
		k string
	}{{name + " (cBMM)", res.IRT, "irt"}, {"per-model accuracy", res.Baseline, "baseline"}, {"per-benchmark average", benchmarkRow(res), "benchmark_baseline"}} {
		if row.k == "benchmark_baseline" && res.BenchmarkBaseline == nil {
			continue
		}
		rk := res.Ranking[row.k]
		fmt.Fprintf(w, "%-22s %9.4f %9.4f %9.4f %9.4f %9.4f %9.4f\n", row.n, row.m.Accuracy, row.m.LogLoss, row.m.AUC, row.m.Brier, rk.Spearman, rk.Kendall)
	}
	if jsonOut != "" {
		return model.WriteFileAtomic(jsonOut, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(res)
		})
	}
	return nil
}
