package main

import (
	"fmt"
	"io"

	"github.com/jeirt/jeirt/cmd/internal/cli"
	"github.com/jeirt/jeirt/cmd/internal/irtrun"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/irtfit"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/train/irt"
	"github.com/jeirt/jeirt/train/irtguard"
	"github.com/jeirt/jeirt/train/irtstat"
	"github.com/spf13/cobra"
)

func init() { rootCmd.AddCommand(newIRTCmd()) }

// newIRTCmd builds the irt command tree (fresh flags each call, for tests).
func newIRTCmd() *cobra.Command {
	irtCmd := &cobra.Command{
		Use:     "irt",
		Args:    cobra.ArbitraryArgs,
		RunE:    groupRun,
		Short:   "Fit IRT (1PL, 2PL, 3PL, multidimensional, graded) by cBMM, with bootstrap, item selection and cross-validation",
		Long:    helpText("irt"),
		Example: helpExamples("irt-fit"),
	}
	addIRTSubcommands(irtCmd)
	return irtCmd
}

func addIRTSubcommands(irtCmd *cobra.Command) {
	var ff irtrun.FitFiles
	fit := &cobra.Command{
		Use:     "fit",
		Short:   "Fit abilities θ, discriminations a and difficulties b; write abilities.csv, items.csv, fit.json, information.csv",
		Example: helpExamples("irt-fit"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ff.Version, ff.Log, ff.Verbose, ff.Device = version, stderrLog(cmd), verbose, cli.RunDevice(cmd)
			res, err := ff.Run(cmd.Context())
			for _, r := range res {
				fmt.Fprintln(cmd.OutOrStdout(), r.Summary())
			}
			return err
		},
	}
	f, set := fit.Flags(), &ff.Settings
	f.StringArrayVar(&ff.Data, "data", nil, "response file (required); repeat it to fit several files in one batched run, each into --out/NAME")
	f.StringArrayVar(&ff.Names, "name", nil, "output sub-folder of each --data file, in order (default: the file's base name, or its folder's name when base names clash)")
	cli.ReadFlags(fit, &ff.Read)
	f.IntVar(&set.Rank, "rank", 1, "ability dimensions r")
	f.StringVar(&set.Model, "model", model.TwoPL.String(), "response function: 1pl (one common discrimination), 2pl or 3pl (a lower asymptote c per item, see --guess)")
	cli.FitterFlags(fit, set, deviceUsage)
	f.BoolVar(&set.Joint, "joint", false, "fit all --data files as one matrix (models matched by name, items grouped by file; --name names the groups) into --out")
	f.BoolVar(&set.Signed, "signed", false, "loadings of either sign (rank >= 2; identified by uncorrelated θ and a varimax rotation)")
	f.Float64Var(&set.GradTol, "grad-tol", irtguard.DefaultGradTol, "converged also needs the projected gradient per answer at most this (the first-order certificate; fits continue until it holds or --max-iter)")
	f.BoolVar(&set.Accelerate, "accelerate", true, "extrapolated MM steps with a monotone safeguard (false: plain cBMM)")
	f.IntVar(&set.Bootstrap, "bootstrap", 0, "bootstrap replicates B (resampling items); 0: none")
	f.BoolVar(&set.BootstrapModels, "bootstrap-models", false, "also resample models in the bootstrap (for the SEs of a and b)")
	f.Int64Var(&set.MaxMemory, "max-memory", 0, "bytes the bootstrap's replicates may use at once (about 26 per observed cell each; fitted in batches that fit); 0: half the machine's memory")
	f.Float64Var(&set.Level, "level", 0.95, "bootstrap interval level")
	f.Int64Var(&set.Seed, "seed", 42, "bootstrap seed")
	f.Float64Var(&set.MinA, "min-a", 0.1, "flag items with discrimination ‖a‖/σ below this as uninformative")
	f.IntVar(&set.RankMove, "rank-move", 0, "list models whose θ rank and accuracy rank differ by more than this (0: max(3, N/20))")
	f.IntVar(&set.MinAnswers, "min-answers", irtstat.DefaultMinAnswers, "models with fewer observed answers are flagged few_answers and not ranked (no rank, no bootstrap rank interval); items are flagged (0: no threshold)")
	f.StringVar(&set.Method, "method", string(irt.MethodCBMM), "cbmm (joint ML by MM), lbfgs (the same objective by gonum L-BFGS; rank 1, for benchmarks) or mml (marginal ML by EM with θ ~ N(0,1); rank 1, for many respondents and few items)")
	f.StringVar(&ff.Trace, "trace", "", "write seconds,loss per iteration to this CSV (cbmm, lbfgs)")
	f.StringVar(&ff.Out, "out", "", "output folder (required; written atomically, with one sub-folder per file in a batch)")
	f.BoolVar(&ff.Force, "force", false, "replace an existing output folder")
	_ = fit.MarkFlagRequired("data")
	_ = fit.MarkFlagRequired("out")

	var selection irtrun.Select
	sel := &cobra.Command{
		Use:     "select",
		Short:   "Keep a fraction of items by Fisher information across the ability range, or by BenchMIRT's difficulty bins",
		Example: helpExamples("irt-select"),
		RunE: func(cmd *cobra.Command, args []string) error {
			msg, err := selection.Run(cmd.Context(), cli.RunDevice(cmd), stderrLog(cmd))
			if err == nil {
				fmt.Fprintln(cmd.OutOrStdout(), msg)
			}
			return err
		},
	}
	irtrun.SelectFlags(sel, &selection)

	var cvSet irtfit.Settings
	var cvRead read.Options
	var folds int
	var cvOut string
	var cvJSON bool
	var cvModels []string
	var cvRanks []int
	cv := &cobra.Command{
		Use:     "cv",
		Short:   "k-fold cross-validation over cells: IRT vs the per-model accuracy baseline",
		Long:    helpText("irt-cv"),
		Example: helpExamples("irt-cv"),
		Args:    needArgs(0, 1, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				if !cvJSON || cvOut != "" {
					return needArgs(0, 0, "no arguments")(cmd, args)
				}
				return fmt.Errorf("irt cv: --json FILE was retired: use --out %s (--print json prints the metrics as JSON)", args[0])
			}
			res, cells, err := irtrun.CVFile(cmd.Context(), cvSet, cvRead, folds, cvModels, cvRanks, cli.RunDevice(cmd), stderrLog(cmd), verbose)
			if err != nil {
				return err
			}
			if err := irtrun.WriteCVTable(cmd.OutOrStdout(), res, cells, cvJSON); err != nil || cvOut == "" {
				return err
			}
			return fileio.WriteFileAtomic(cvOut, func(w io.Writer) error { return irtrun.WriteCVTable(w, res, cells, true) })
		},
	}
	cf := cv.Flags()
	cf.StringVar(&cvSet.Data, "data", "", "response file (required)")
	cli.ReadFlags(cv, &cvRead)
	cf.IntVar(&folds, "folds", 10, "number of folds")
	cf.Int64Var(&cvSet.Seed, "seed", 42, "fold assignment seed")
	cf.IntSliceVar(&cvRanks, "rank", []int{1}, "ability dimensions r; a list (1,2) cross-validates each rank on the same folds")
	cf.StringSliceVar(&cvModels, "model", []string{model.TwoPL.String()}, "1pl|2pl|3pl; a list (1pl,2pl,3pl) cross-validates each on the same folds, the lowest held-out log loss marked *")
	cli.FitterFlags(cv, &cvSet, deviceUsage)
	cf.StringVar(&cvOut, "out", "", "also write the metrics as JSON to this file")
	_ = cv.MarkFlagRequired("data")
	cli.PrintJSON(cv, &cvJSON)

	var est irtrun.Estimate
	var estModels string
	estimate := &cobra.Command{Use: "estimate --fit DIR --answers FILE [--out DIR] | --eval --data FILE", Args: cobra.NoArgs, Long: helpText("irt-estimate"), Example: helpExamples("irt-estimate"),
		Short: "Full-benchmark scores of new models from their answers to a few items, with 95% intervals; --eval measures the estimators on held-out models",
		RunE: func(cmd *cobra.Command, args []string) error {
			est.Models, est.Log, est.Version = cli.ModelList(estModels), stderrLog(cmd), version
			return est.Run(cmd.Context(), cmd.OutOrStdout())
		}}
	irtrun.EstimateFlags(estimate, &est, &estModels)

	irtCmd.AddCommand(cli.Guard(fit, cli.Outputs{Folders: []string{"out"}, Files: []string{"trace"}, Flags: map[string]string{"Names": "--name"}}),
		cli.Guard(sel, cli.Outputs{Files: []string{"out"}, Device: func(*cobra.Command) (string, error) { return irtfit.RecordedDevice(selection.Fit), nil }}),
		cli.Guard(cv, cli.Outputs{Files: []string{"out"}, ArgOut: 1}),
		cli.Guard(newIRTCatCmd(), cli.Outputs{Folders: []string{"out"}}),
		cli.Guard(estimate, cli.Outputs{Folders: []string{"out"}, Flags: map[string]string{"Estimators": "--estimator", "Categories": "--by-category"}}))
}
