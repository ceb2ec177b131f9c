package irtstat

import (
	"context"
	"testing"

	"github.com/jeirt/jeirt/train/irt"
	"github.com/jeirt/jeirt/train/irt/irttest"
)

// On three benchmarks that test different abilities, each model's accuracy
// per benchmark predicts better than its overall accuracy; every method
// orders the models by accuracy about right.
func TestCrossValidateBenchmarkBaselineAndRanking(t *testing.T) {
	r, _ := irttest.SignedTruth(120, 11)
	res, err := CrossValidate(context.Background(), irt.CBMM{Rank: 2, Accelerate: true}, r, 5, 1)
	if err != nil {
		t.Fatal(err)
	}
	if res.BenchmarkBaseline == nil {
		t.Fatal("no per-benchmark baseline with item groups")
	}
	t.Logf("log loss: irt %.4f, per-model %.4f, per-benchmark %.4f; ranking %+v", res.IRT.LogLoss, res.Baseline.LogLoss, res.BenchmarkBaseline.LogLoss, res.Ranking)
	if !(res.BenchmarkBaseline.LogLoss < res.Baseline.LogLoss) || !(res.IRT.LogLoss < res.BenchmarkBaseline.LogLoss) {
		t.Errorf("log loss: irt %.4f, per-benchmark %.4f, per-model %.4f (want increasing)", res.IRT.LogLoss, res.BenchmarkBaseline.LogLoss, res.Baseline.LogLoss)
	}
	for _, k := range []string{"irt", "baseline", "benchmark_baseline"} {
		if a := res.Ranking[k]; !(a.Spearman > 0.9 && a.Kendall > 0.75) {
			t.Errorf("%s: ranking %+v", k, a)
		}
	}
	r.ItemGroup = nil
	res, err = CrossValidate(context.Background(), irt.CBMM{Rank: 1, MaxIter: 50}, r, 3, 1)
	if err != nil || res.BenchmarkBaseline != nil {
		t.Errorf("without groups: %v, benchmark baseline %v", err, res.BenchmarkBaseline)
	}
}
