package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/report"
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
models, a ≥ 0 (higher θ means more correct), and b is the logit of an average model.`,
	}
	addIRTSubcommands(irtCmd)
	return irtCmd
}

// irtFitSettings is the "settings" object of fit.json; jeirt irt select reads it back.
type irtFitSettings struct {
	Method          string  `json:"method"`
	Data            string  `json:"data"`
	Format          string  `json:"format"`
	Items           string  `json:"items,omitempty"`
	Duplicates      string  `json:"duplicates"`
	Rank            int     `json:"rank"`
	Sigma           float64 `json:"sigma"`
	Tol             float64 `json:"tol"`
	MaxIter         int     `json:"max_iter"`
	Accelerate      bool    `json:"accelerate"`
	Device          string  `json:"device"`
	Threads         int     `json:"threads"`
	Bootstrap       int     `json:"bootstrap"`
	BootstrapModels bool    `json:"bootstrap_models"`
	Level           float64 `json:"level"`
	Seed            int64   `json:"seed"`
	MinA            float64 `json:"min_discrimination"`
	RankMove        int     `json:"rank_move_threshold"`
}

type irtFitJSON struct {
	Version          string             `json:"jeirt_version"`
	Settings         irtFitSettings     `json:"settings"`
	Models           int                `json:"models"`
	Items            int                `json:"items"`
	Observed         int                `json:"observed"`
	LossHistory      []float64          `json:"loss_history"`
	Loss             float64            `json:"loss"`
	Iterations       int                `json:"iterations"`
	Converged        bool               `json:"converged"`
	Seconds          float64            `json:"seconds"`
	BootstrapSeconds float64            `json:"bootstrap_seconds,omitempty"`
	KendallTau       float64            `json:"kendall_tau_vs_accuracy"`
	RankMoves        []irt.RankMove     `json:"rank_moves"`
	FlagCounts       map[string]int     `json:"flag_counts"`
	GroupLoadings    []irt.GroupLoading `json:"group_loadings,omitempty"`
	BatchFits        int                `json:"batch_fits,omitempty"` // fitted together with this many files in one run; Seconds is that run's
	Gauge            string             `json:"gauge"`
}

const gaugeText = "theta: mean 0, sd 1 (population) per dimension over models; a >= 0; x = theta.a + b unchanged; P = sigmoid(x/sigma)"

func addIRTSubcommands(irtCmd *cobra.Command) {
	var set irtFitSettings
	var read model.ReadOptions
	var out, traceOut string
	var data, names []string
	var force bool
	fit := &cobra.Command{
		Use:   "fit",
		Short: "Fit abilities θ, discriminations a and difficulties b; write abilities.csv, items.csv, fit.json",
		Example: `  jeirt irt fit --data ../shared/data/swebench-verified/response_matrix.csv --out fits/swe
  jeirt irt fit --data responses.csv --rank 2 --bootstrap 200 --seed 1 --out fits/r2
  # several benchmarks in one batched cBMM run (one GPU job) -> fits/swebench-verified/, fits/rewardbench/
  jeirt irt fit --data ../shared/data/swebench-verified/response_matrix.csv --data ../shared/data/rewardbench/response_matrix.csv --out fits`,
		RunE: func(cmd *cobra.Command, args []string) error {
			set.Format, set.Items, set.Duplicates = read.Format, read.Items, read.Duplicates
			return runIRTFit(cmd, set, read, data, names, out, traceOut, force)
		},
	}
	f := fit.Flags()
	f.StringArrayVar(&data, "data", nil, "response file (required); repeat it to fit several files in one batched run, each into --out/NAME")
	f.StringArrayVar(&names, "name", nil, "output sub-folder of each --data file, in order (default: the file's base name, or its folder's name when base names clash)")
	addReadFlags(fit, &read)
	f.IntVar(&set.Rank, "rank", 1, "ability dimensions r")
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
	sel := &cobra.Command{
		Use:     "select",
		Short:   "Keep a fraction of items by Fisher information across the ability range",
		Example: `  jeirt irt select --fit fits/swe --keep 0.1 --out fits/swe-kept.csv`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runIRTSelect(cmd, fitDir, keep, selOut)
		},
	}
	sel.Flags().StringVar(&fitDir, "fit", "", "folder written by jeirt irt fit (required)")
	sel.Flags().Float64Var(&keep, "keep", 0.1, "fraction of items to keep, in (0, 1]")
	sel.Flags().StringVar(&selOut, "out", "", "CSV of the kept items (required)")
	_ = sel.MarkFlagRequired("fit")
	_ = sel.MarkFlagRequired("out")

	var cvSet irtFitSettings
	var cvRead model.ReadOptions
	var folds int
	var cvJSON string
	cv := &cobra.Command{
		Use:     "cv",
		Short:   "k-fold cross-validation over cells: IRT vs the per-model accuracy baseline",
		Example: `  jeirt irt cv --data ../shared/data/swebench-verified/response_matrix.csv --folds 10`,
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
	return irt.CBMM{Sigma: s.Sigma, Rank: s.Rank, Tol: s.Tol, MaxIter: s.MaxIter, Threads: s.Threads,
		Accelerate: s.Accelerate, Device: s.Device, Progress: progress}
}

func (s irtFitSettings) check() error {
	switch {
	case s.Rank < 1:
		return fmt.Errorf("--rank %d: must be at least 1", s.Rank)
	case !(s.Sigma > 0) || math.IsInf(s.Sigma, 0):
		return fmt.Errorf("--sigma %v: must be positive", s.Sigma)
	case !(s.Tol >= 0):
		return fmt.Errorf("--tol %v: must not be negative", s.Tol)
	case s.Method != "cbmm" && s.Method != "lbfgs" && s.Method != "mml":
		return fmt.Errorf("--method %q: want cbmm, lbfgs or mml", s.Method)
	case s.Method != "cbmm" && s.Rank != 1:
		return fmt.Errorf("--method %s fits rank 1 only (got --rank %d)", s.Method, s.Rank)
	case s.Method != "cbmm" && s.Bootstrap > 0:
		return fmt.Errorf("--bootstrap needs --method cbmm")
	case s.Method == "mml" && s.Sigma != 1:
		return fmt.Errorf("--method mml uses sigma 1 (got --sigma %v)", s.Sigma)
	case s.MaxIter < 1:
		return fmt.Errorf("--max-iter %d: must be at least 1", s.MaxIter)
	case s.Bootstrap < 0 || s.Bootstrap == 1:
		return fmt.Errorf("--bootstrap %d: must be 0 (none) or at least 2", s.Bootstrap)
	case !(s.Level > 0 && s.Level < 1):
		return fmt.Errorf("--level %v: must be in (0, 1)", s.Level)
	}
	return nil
}

func irtRead(cmd *cobra.Command, path string, opt model.ReadOptions) (*model.Responses, error) {
	began, cpu := time.Now(), cpuSeconds()
	r, rep, err := model.ReadFile(path, opt)
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
	fit  *model.IRT
	an   *irt.Analysis
	boot *irt.BootstrapResult
	doc  irtFitJSON
}

func runIRTFit(cmd *cobra.Command, set irtFitSettings, read model.ReadOptions, data, names []string, out, traceOut string, force bool) error {
	ctx := cmd.Context()
	set.Level = irtOrDefault(set.Level, 0.95)
	if err := set.check(); err != nil {
		return err
	}
	if _, err := backend.Resolve(set.Device); err != nil {
		return err
	}
	// A batch (several --data, or any --name) writes one folder per file under --out.
	batch := len(data) > 1 || len(names) > 0
	if len(names) > 0 && len(names) != len(data) {
		return fmt.Errorf("--name given %d time(s) for %d --data file(s): give one per file, in the same order, or none", len(names), len(data))
	}
	if batch && read.Items != "" {
		return fmt.Errorf("--items names the item texts of one benchmark; it cannot go with several --data files")
	}
	dirs, err := irtOutNames(data, names)
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
	start := time.Now()
	var trace []string
	record := func(k int, loss float64) {
		line := fmt.Sprintf("%.6f,%.10g", time.Since(start).Seconds(), loss)
		if batch {
			line = dirs[k] + "," + line
		}
		trace = append(trace, line)
	}
	var fits []*model.IRT
	switch set.Method {
	case "cbmm":
		// All files in one batched run of the backend's hot loop.
		c := set.fitter(stderr)
		c.Trace = func(k, _ int, loss float64) { record(k, loss) }
		fits, err = c.FitBatch(ctx, rs)
	default:
		fits = make([]*model.IRT, len(rs))
		for k, r := range rs {
			if set.Method == "lbfgs" {
				fits[k], err = irt.LBFGS2PL{Sigma: set.Sigma, Tol: set.Tol, MaxIter: set.MaxIter, Threads: set.Threads,
					Trace: func(loss float64) { record(k, loss) }}.Fit(ctx, r)
			} else {
				fits[k], err = irt.MML2PL{MaxIter: set.MaxIter}.Fit(ctx, r)
			}
			if err != nil {
				err = fmt.Errorf("%s: %w", data[k], err)
				break
			}
		}
	}
	if err != nil {
		return err
	}
	secs := time.Since(start).Seconds()
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
		one := set
		one.Data = data[k]
		res, err := irtAnalyze(cmd, one, r, fits[k], secs)
		if err != nil {
			return err
		}
		if batch {
			res.name, res.doc.BatchFits = dirs[k], len(rs)
		}
		results[k] = res
	}
	err = model.WriteDirAtomic(out, force, func(tmp string) error {
		if !batch {
			return results[0].write(tmp)
		}
		for _, res := range results {
			sub := filepath.Join(tmp, res.name)
			if err := os.Mkdir(sub, 0o755); err != nil {
				return err
			}
			if err := res.write(sub); err != nil {
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
	}
	return nil
}

// irtAnalyze reports on one fit (taking secs for the fit itself), runs its
// bootstrap when asked, and builds its fit.json.
func irtAnalyze(cmd *cobra.Command, set irtFitSettings, r *model.Responses, fit *model.IRT, secs float64) (*irtFitResult, error) {
	stderr := cmd.ErrOrStderr()
	fmt.Fprintf(stderr, "fit %s: %d iterations, loss %.6g, converged %v, %.2fs\n", set.Data, fit.Iterations,
		fit.LossHistory[len(fit.LossHistory)-1], fit.Converged, secs)
	an := irt.Analyze(r, fit, irt.AnalysisOptions{MinDiscrimination: set.MinA, RankMove: set.RankMove})
	var boot *irt.BootstrapResult
	var bootSecs float64
	if set.Bootstrap > 0 {
		start := time.Now()
		var err error
		boot, err = irt.Bootstrap{B: set.Bootstrap, Seed: set.Seed, Models: set.BootstrapModels, Level: set.Level,
			Fitter: set.fitter(nil), Progress: stderr}.Run(cmd.Context(), r, fit)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", set.Data, err)
		}
		bootSecs = time.Since(start).Seconds()
		fmt.Fprintf(stderr, "bootstrap %s: %d replicates in %.2fs\n", set.Data, set.Bootstrap, bootSecs)
	}
	set.RankMove = an.RankMoveLimit
	doc := irtFitJSON{Version: version, Settings: set, Models: r.NumModels(), Items: r.NumItems(), Observed: r.Len(),
		LossHistory: fit.LossHistory, Loss: fit.LossHistory[len(fit.LossHistory)-1], Iterations: fit.Iterations,
		Converged: fit.Converged, Seconds: secs, BootstrapSeconds: bootSecs, KendallTau: an.KendallTau,
		RankMoves: an.RankMoves, FlagCounts: an.FlagCounts, GroupLoadings: an.GroupLoadings, Gauge: gaugeText}
	if set.Method == "mml" {
		doc.Gauge = "theta ~ N(0,1) prior (marginal ML, 61 points on [-6, 6]); theta is the EAP; a unconstrained; P = sigmoid(theta*a + b)"
		doc.LossHistory = fit.LossHistory // marginal negative log-likelihood
	}
	if doc.RankMoves == nil {
		doc.RankMoves = []irt.RankMove{}
	}
	return &irtFitResult{r: r, fit: fit, an: an, boot: boot, doc: doc}, nil
}

// write puts abilities.csv, items.csv and fit.json into dir.
func (res *irtFitResult) write(dir string) error {
	if err := model.WriteFileAtomic(filepath.Join(dir, "abilities.csv"), func(w io.Writer) error {
		return writeIRTAbilities(w, res.fit, res.an, res.boot)
	}); err != nil {
		return err
	}
	if err := model.WriteFileAtomic(filepath.Join(dir, "items.csv"), func(w io.Writer) error {
		return writeIRTItems(w, res.fit, res.an, res.boot)
	}); err != nil {
		return err
	}
	return model.WriteFileAtomic(filepath.Join(dir, "fit.json"), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(irtJSONSafe(res.doc))
	})
}

// irtOutNames names the folder of each --data file in a batch: its --name when
// given, else the file's base name without extension; files sharing a base
// name take their folder's name instead (data/tumlu/response_matrix.csv ->
// tumlu), and a name still taken gets -2, -3, ... in --data order.
func irtOutNames(data, names []string) ([]string, error) {
	if len(names) > 0 {
		seen := map[string]bool{}
		for _, n := range names {
			if n == "" || n == "." || n == ".." || strings.ContainsAny(n, `/\`) {
				return nil, fmt.Errorf("--name %q: want a plain folder name", n)
			}
			if seen[n] {
				return nil, fmt.Errorf("--name %q given twice", n)
			}
			seen[n] = true
		}
		return names, nil
	}
	stem := func(p string) string {
		b := filepath.Base(p)
		return strings.TrimSuffix(b, filepath.Ext(b))
	}
	count := map[string]int{}
	for _, p := range data {
		count[stem(p)]++
	}
	out := make([]string, len(data))
	taken := map[string]bool{}
	for k, p := range data {
		n := stem(p)
		if count[n] > 1 {
			if d := filepath.Base(filepath.Dir(filepath.Clean(p))); d != "." && d != ".." && d != string(filepath.Separator) {
				n = d
			}
		}
		if n == "" || n == "." || n == ".." {
			n = "fit"
		}
		base := n
		for i := 2; taken[n]; i++ {
			n = fmt.Sprintf("%s-%d", base, i)
		}
		taken[n] = true
		out[k] = n
	}
	return out, nil
}

func irtOrDefault(v, d float64) float64 {
	if v == 0 {
		return d
	}
	return v
}

// irtJSONSafe replaces NaN in the few float fields that can be NaN (τ with a
// constant ranking) by encoding through a map; encoding/json rejects NaN.
func irtJSONSafe(doc irtFitJSON) any {
	if math.IsNaN(doc.KendallTau) {
		b, _ := json.Marshal(struct {
			irtFitJSON
			KendallTau *float64 `json:"kendall_tau_vs_accuracy"`
		}{irtFitJSON: doc})
		return json.RawMessage(b)
	}
	return doc
}

// irtFloat formats a float for CSV: shortest round-trip form, empty for NaN.
func irtFloat(x float64) string {
	if math.IsNaN(x) {
		return ""
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

func irtInt(x int) string { return strconv.Itoa(x) }

func writeIRTAbilities(w io.Writer, fit *model.IRT, an *irt.Analysis, boot *irt.BootstrapResult) error {
	rk := fit.Rank
	cw := csv.NewWriter(w)
	hdr := []string{"model"}
	if rk == 1 {
		hdr = append(hdr, "theta", "se", "lo", "hi")
	} else {
		for _, p := range []string{"theta", "se", "lo", "hi"} {
			for d := 1; d <= rk; d++ {
				hdr = append(hdr, fmt.Sprintf("%s_%d", p, d))
			}
		}
		hdr = append(hdr, "score")
	}
	hdr = append(hdr, "rank", "rank_lo", "rank_hi", "accuracy", "accuracy_rank")
	if err := cw.Write(hdr); err != nil {
		return err
	}
	for i, name := range fit.Models {
		row := []string{name}
		for _, src := range [][]float64{fit.Theta, irtBootField(boot, func(b *irt.BootstrapResult) []float64 { return b.ThetaSE }),
			irtBootField(boot, func(b *irt.BootstrapResult) []float64 { return b.ThetaLo }),
			irtBootField(boot, func(b *irt.BootstrapResult) []float64 { return b.ThetaHi })} {
			for d := 0; d < rk; d++ {
				if src == nil {
					row = append(row, "")
				} else {
					row = append(row, irtFloat(src[i*rk+d]))
				}
			}
		}
		if rk > 1 {
			row = append(row, irtFloat(an.Score[i]))
		}
		row = append(row, irtInt(an.Rank[i]))
		if boot != nil {
			row = append(row, irtInt(boot.RankLo[i]), irtInt(boot.RankHi[i]))
		} else {
			row = append(row, "", "")
		}
		row = append(row, irtFloat(an.Accuracy[i]), irtInt(an.AccuracyRank[i]))
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func irtBootField(b *irt.BootstrapResult, f func(*irt.BootstrapResult) []float64) []float64 {
	if b == nil {
		return nil
	}
	return f(b)
}

func writeIRTItems(w io.Writer, fit *model.IRT, an *irt.Analysis, boot *irt.BootstrapResult) error {
	rk := fit.Rank
	cw := csv.NewWriter(w)
	hdr := []string{"item"}
	if rk == 1 {
		hdr = append(hdr, "a", "b", "se_a", "se_b")
	} else {
		for d := 1; d <= rk; d++ {
			hdr = append(hdr, fmt.Sprintf("a_%d", d))
		}
		hdr = append(hdr, "b")
		for d := 1; d <= rk; d++ {
			hdr = append(hdr, fmt.Sprintf("se_a_%d", d))
		}
		hdr = append(hdr, "se_b")
	}
	hdr = append(hdr, "p_correct", "n_obs", "flag")
	if rk == 1 {
		hdr = append(hdr, "a_lo", "a_hi", "b_lo", "b_hi")
	}
	if err := cw.Write(hdr); err != nil {
		return err
	}
	for j, name := range fit.Items {
		row := []string{name}
		for d := 0; d < rk; d++ {
			row = append(row, irtFloat(fit.A[j*rk+d]))
		}
		row = append(row, irtFloat(fit.B[j]))
		for d := 0; d < rk; d++ {
			if boot != nil {
				row = append(row, irtFloat(boot.ASE[j*rk+d]))
			} else {
				row = append(row, "")
			}
		}
		if boot != nil {
			row = append(row, irtFloat(boot.BSE[j]))
		} else {
			row = append(row, "")
		}
		row = append(row, irtFloat(an.ItemAccuracy[j]), irtInt(an.ItemObserved[j]), an.ItemFlags[j])
		if rk == 1 {
			if boot != nil {
				row = append(row, irtFloat(boot.ALo[j]), irtFloat(boot.AHi[j]), irtFloat(boot.BLo[j]), irtFloat(boot.BHi[j]))
			} else {
				row = append(row, "", "", "", "")
			}
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// readIRTFitDir rebuilds the fitted parameters and the settings from a folder
// written by irt fit.
func readIRTFitDir(dir string) (*model.IRT, *irtFitJSON, error) {
	fit, err := report.ReadFit(dir)
	if err != nil {
		return nil, nil, err
	}
	var doc irtFitJSON
	p := filepath.Join(dir, "fit.json")
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, nil, err
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", p, err)
	}
	return fit.IRT(), &doc, nil
}

func runIRTSelect(cmd *cobra.Command, dir string, keep float64, out string) error {
	fit, doc, err := readIRTFitDir(dir)
	if err != nil {
		return err
	}
	items, at, err := irt.InformationSelect(fit, keep)
	if err != nil {
		return fmt.Errorf("--keep: %w", err)
	}
	rk := fit.Rank
	err = model.WriteFileAtomic(out, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		hdr := []string{"item"}
		if rk == 1 {
			hdr = append(hdr, "a")
		} else {
			for d := 1; d <= rk; d++ {
				hdr = append(hdr, fmt.Sprintf("a_%d", d))
			}
		}
		hdr = append(hdr, "b", "chosen_at_theta")
		if err := cw.Write(hdr); err != nil {
			return err
		}
		for k, j := range items {
			row := []string{fit.Items[j]}
			for d := 0; d < rk; d++ {
				row = append(row, irtFloat(fit.A[j*rk+d]))
			}
			row = append(row, irtFloat(fit.B[j]), irtFloat(at[k]))
			if err := cw.Write(row); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	})
	if err != nil {
		return err
	}
	msg := fmt.Sprintf("kept %d of %d items in %s", len(items), len(fit.Items), out)
	// τ between the rankings needs the responses: read them again as the fit did.
	set := doc.Settings
	r, rerr := irtRead(cmd, set.Data, model.ReadOptions{Format: set.Format, Items: set.Items, Duplicates: set.Duplicates})
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

func runIRTCV(cmd *cobra.Command, set irtFitSettings, read model.ReadOptions, folds int, jsonOut string) error {
	set.Level, set.Accelerate, set.Method = 0.95, true, "cbmm"
	if err := set.check(); err != nil {
		return err
	}
	if folds < 2 {
		return fmt.Errorf("--folds %d: need at least 2", folds)
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
	fmt.Fprintf(w, "%-22s %9s %9s %9s %9s\n", "method", "accuracy", "log_loss", "auc", "brier")
	for _, row := range []struct {
		n string
		m eval.Metrics
	}{{name + " (cBMM)", res.IRT}, {"per-model accuracy", res.Baseline}} {
		fmt.Fprintf(w, "%-22s %9.4f %9.4f %9.4f %9.4f\n", row.n, row.m.Accuracy, row.m.LogLoss, row.m.AUC, row.m.Brier)
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
