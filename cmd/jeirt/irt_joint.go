package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/irtfit"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/train/eval"
	"github.com/jeirt/jeirt/train/irt"
	"github.com/spf13/cobra"
)

// runIRTFitJoint is `irt fit --joint`: every --data file in one matrix, one
// fit folder in --out, each file's mean loadings printed.
func runIRTFitJoint(cmd *cobra.Command, set irtFitSettings, read read.Options, data, names []string, out string, force bool) error {
	if len(names) > 0 && len(names) != len(data) {
		return fmt.Errorf("--name given %d time(s) for %d --data file(s): give one per file, in the same order, or none", len(names), len(data))
	}
	if read.Items != "" {
		return fmt.Errorf("--items names the item texts of one benchmark; it cannot go with --joint")
	}
	bench, err := irtfit.OutNames(data, names)
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
	job := irt.FitJob{Settings: irtfit.Settings(set), Data: data, Version: version, Progress: cmd.ErrOrStderr()}
	fit, r, err := irt.FitJoint(cmd.Context(), job, bench, rs)
	if err != nil {
		return err
	}
	if err := model.WriteDirAtomic(out, force, func(tmp string) error { return irtfit.Write(tmp, fit.Folder) }); err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "wrote %s: %d benchmarks jointly, %d models, %d items; Kendall τ(θ, accuracy) = %.4f\n",
		out, len(rs), r.NumModels(), r.NumItems(), fit.Analysis.KendallTau)
	printGroupLoadings(w, fit.Analysis.GroupLoadings)
	return nil
}

// printGroupLoadings lists each item group's mean loading per dimension.
func printGroupLoadings(w io.Writer, gs []irt.GroupLoading) {
	if len(gs) == 0 {
		return
	}
	fmt.Fprintf(w, "%-24s %6s  mean loading per dimension\n", "group", "items")
	for _, g := range gs {
		var v []string
		for _, x := range g.MeanLoading {
			v = append(v, fmt.Sprintf("%7.3f", x))
		}
		fmt.Fprintf(w, "%-24s %6d  %s\n", g.Group, g.Items, strings.Join(v, " "))
	}
}

// benchmarkRow is the per-benchmark baseline of a CV result (zero when the
// items have no groups).
func benchmarkRow(res *irt.CVResult) eval.Metrics {
	if res.BenchmarkBaseline == nil {
		return eval.Metrics{}
	}
	return *res.BenchmarkBaseline
}

// selectRule is irt select's --rule and --bins.
type selectRule struct {
	rule string
	bins int
}

func (s selectRule) choose(fit *model.IRT, keep float64) ([]int, []float64, error) {
	switch s.rule {
	case "", "info":
		return irt.InformationSelect(fit, keep)
	case "benchmirt":
		return irt.BenchMIRTSelect(fit, keep, s.bins)
	}
	return nil, nil, fmt.Errorf("--rule %q: want info or benchmirt", s.rule)
}
