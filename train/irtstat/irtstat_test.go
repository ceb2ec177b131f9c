package irtstat

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/eval"
	"github.com/jeirt/jeirt/train/irt"
	"github.com/jeirt/jeirt/train/irt/irttest"
	"github.com/jeirt/jeirt/train/irt/rotate"
	"github.com/jeirt/jeirt/train/irtlbfgs"
	"github.com/jeirt/jeirt/train/irtmml"
)

// sharedData is ../shared/data relative to the repository root, or "" (skip).
func sharedData(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "data")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("shared data not available: %v", err)
	}
	return dir
}

// standardTruth puts the generator's (θ, a, b) in the standard gauge.
func standardTruth(truth *synth.Truth, r *model.Responses, rank int) *model.IRT {
	m := &model.IRT{Models: r.Models, Items: r.Items, Rank: rank, Sigma: 1,
		Theta: append([]float64(nil), truth.Theta...), A: append([]float64(nil), truth.A...), B: append([]float64(nil), truth.B...)}
	irt.StandardGauge(m)
	return m
}

func coverage(lo, hi, truth []float64) float64 {
	in, n := 0, 0
	for k := range truth {
		if math.IsNaN(lo[k]) {
			continue
		}
		n++
		if lo[k] <= truth[k] && truth[k] <= hi[k] {
			in++
		}
	}
	return float64(in) / float64(n)
}

func TestBootstrapCoverage(t *testing.T) {
	r, truth := irttest.Gen(t, synth.Options{Kind: "2pl", Models: 100, Items: 400, Missing: 0.1, Seed: 11})
	c := irt.CBMM{Accelerate: true}
	full, err := c.Fit(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	tr := standardTruth(truth, r, 1)
	items, err := Bootstrap{B: 60, Seed: 1, Fitter: c}.Run(context.Background(), r, full)
	if err != nil {
		t.Fatal(err)
	}
	both, err := Bootstrap{B: 60, Seed: 2, Models: true, Fitter: c}.Run(context.Background(), r, full)
	if err != nil {
		t.Fatal(err)
	}
	covTheta := coverage(items.ThetaLo, items.ThetaHi, tr.Theta)
	covA, covB := coverage(both.ALo, both.AHi, tr.A), coverage(both.BLo, both.BHi, tr.B)
	t.Logf("95%% percentile intervals cover the truth: θ %.3f (items resampled), a %.3f, b %.3f (models and items resampled)", covTheta, covA, covB)
	if covTheta < 0.85 || covB < 0.85 || covA < 0.8 {
		t.Errorf("coverage θ %.3f, a %.3f, b %.3f: want about 0.95 (at least 0.85, a 0.8)", covTheta, covA, covB)
	}
	// Ranks: intervals hold the point rank for almost every model.
	an := Analyze(r, full, AnalysisOptions{})
	in := 0
	for i := range an.Rank {
		if items.RankLo[i] <= an.Rank[i] && an.Rank[i] <= items.RankHi[i] {
			in++
		}
		if items.RankLo[i] > items.RankHi[i] || items.RankLo[i] < 1 || items.RankHi[i] > 100 {
			t.Fatalf("model %d: rank interval [%d, %d]", i, items.RankLo[i], items.RankHi[i])
		}
	}
	t.Logf("%d of 100 rank intervals hold the fitted rank", in)
	if in < 95 {
		t.Errorf("only %d of 100 rank intervals hold the fitted rank", in)
	}
}

func TestAnalyzeFlagsAndTau(t *testing.T) {
	base, _ := irttest.Gen(t, synth.Options{Kind: "2pl", Models: 50, Items: 200, Seed: 4})
	y := irttest.DenseFrom(base)
	for i := range y {
		y[i][0] = 0                  // never solved
		y[i][1] = 1                  // always solved
		y[i][2] = (i*7 + 3) % 2      // alternating, unrelated to ability
		y[i][3] = (i / 25 * 2) % 2   // first half wrong, second half right
		y[i][4] = ((i*13)/5 + 1) % 2 // noise
	}
	r := irttest.RespFromLabels(y)
	fit, err := irt.CBMM{}.Fit(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	an := Analyze(r, fit, AnalysisOptions{MinDiscrimination: 0.25, RankMove: 1000})
	if an.ItemFlags[0] != FlagNeverSolved || an.ItemFlags[1] != FlagAlwaysSolved {
		t.Errorf("flags of items 0, 1 = %q, %q", an.ItemFlags[0], an.ItemFlags[1])
	}
	// Unrelated to ability: no discrimination, and a rest-score correlation
	// that cannot be told from 0 at 50 models.
	if an.ItemFlags[2] != FlagUninformative+";"+FlagWeakItemTotal {
		t.Errorf("item 2 (answers unrelated to ability): flag %q, a = %.3f, rest r %.3f", an.ItemFlags[2], fit.A[2], an.ItemDiagnostics[2].RestScore)
	}
	never, always := 0, 0
	for j := range y[0] {
		s := 0
		for i := range y {
			s += y[i][j]
		}
		if s == 0 {
			never++
		}
		if s == len(y) {
			always++
		}
	}
	if an.FlagCounts[FlagNeverSolved] != never || an.FlagCounts[FlagAlwaysSolved] != always {
		t.Errorf("flag counts %v, want %d never and %d always solved", an.FlagCounts, never, always)
	}
	if an.ItemObserved[5] != 50 || an.ItemAccuracy[0] != 0 {
		t.Errorf("n_obs %d, p_correct %g", an.ItemObserved[5], an.ItemAccuracy[0])
	}
	if an.KendallTau < 0.85 {
		t.Errorf("Kendall τ(θ, accuracy) = %.3f, want > 0.85 on complete 2PL data", an.KendallTau)
	}
	if len(an.RankMoves) != 0 {
		t.Errorf("rank moves with threshold 1000: %v", an.RankMoves)
	}
	an = Analyze(r, fit, AnalysisOptions{RankMove: 1})
	for _, mv := range an.RankMoves {
		if abs(mv.Move) <= 1 || mv.Move != mv.AccuracyRank-mv.Rank {
			t.Errorf("rank move %+v", mv)
		}
	}
	if got := eval.KendallTau([]float64{1, 2, 3, 4}, []float64{1, 3, 2, 4}); math.Abs(got-4.0/6) > 1e-15 {
		t.Errorf("τ = %g, want 2/3", got)
	}
}

func TestVarimaxRecoversSimpleStructure(t *testing.T) {
	J, r := 40, 2
	simple := make([]float64, J*r)
	for j := 0; j < J; j++ {
		simple[j*r+j%2] = 0.5 + float64(j%7)/7
	}
	rot := make([]float64, J*r)
	c, s := math.Cos(0.5), math.Sin(0.5)
	for j := 0; j < J; j++ {
		x, y := simple[j*r], simple[j*r+1]
		rot[j*r], rot[j*r+1] = c*x-s*y, s*x+c*y
	}
	got := rotate.Varimax(rot, J, r)
	// Up to column order: match column 0 of got to the simple column it fits.
	best := math.Inf(1)
	for _, perm := range [][2]int{{0, 1}, {1, 0}} {
		e := 0.0
		for j := 0; j < J; j++ {
			for d := 0; d < r; d++ {
				e = math.Max(e, math.Abs(got[j*r+d]-simple[j*r+perm[d]]))
			}
		}
		best = math.Min(best, e)
	}
	if best > 1e-8 {
		t.Errorf("varimax did not undo a 0.5 rad rotation: max error %g", best)
	}
}

func TestGroupLoadingsSeparateBenchmarks(t *testing.T) {
	r, _ := irttest.Gen(t, synth.Options{Kind: "mirt", Rank: 2, Models: 200, Items: 400, Missing: 0.1, Seed: 8})
	// synth's mirt items load mainly on dimension j mod 2: name the groups so.
	r.ItemGroup = make([]string, r.NumItems())
	for j := range r.ItemGroup {
		r.ItemGroup[j] = []string{"even", "odd"}[j%2]
	}
	fit, err := irt.CBMM{Rank: 2, Accelerate: true}.Fit(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	an := Analyze(r, fit, AnalysisOptions{})
	if len(an.GroupLoadings) != 2 {
		t.Fatalf("group loadings %v", an.GroupLoadings)
	}
	e, o := an.GroupLoadings[0].MeanLoading, an.GroupLoadings[1].MeanLoading
	t.Logf("mean varimax loadings: even %.3f %.3f, odd %.3f %.3f", e[0], e[1], o[0], o[1])
	// Each group loads mostly on its own (different) dimension.
	if !((e[0] > 2*e[1] && o[1] > 2*o[0]) || (e[1] > 2*e[0] && o[0] > 2*o[1])) {
		t.Errorf("groups not separated: even %v, odd %v", e, o)
	}
}

func TestInformationSelect(t *testing.T) {
	r, _ := irttest.Gen(t, synth.Options{Kind: "2pl", Models: 120, Items: 1000, Missing: 0.1, Seed: 9})
	c := irt.CBMM{Accelerate: true}
	full, err := c.Fit(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	items, at, err := InformationSelect(full, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 100 || len(at) != 100 {
		t.Fatalf("kept %d items", len(items))
	}
	seen := map[int]bool{}
	for _, j := range items {
		if seen[j] {
			t.Fatalf("item %d chosen twice", j)
		}
		seen[j] = true
	}
	// Kept items span the difficulty range: some easy, some hard.
	bs := make([]float64, len(items))
	for k, j := range items {
		bs[k] = full.B[j]
	}
	sort.Float64s(bs)
	if bs[0] > -1.5 || bs[len(bs)-1] < 1.5 {
		t.Errorf("kept items' b range [%.2f, %.2f] does not reach easy and hard items", bs[0], bs[len(bs)-1])
	}
	tau, _, err := SelectionTau(context.Background(), c, r, full, items)
	if err != nil {
		t.Fatal(err)
	}
	// A random 10% for comparison.
	var rnd []int
	for j := 0; j < 1000; j += 10 {
		rnd = append(rnd, j)
	}
	tauRnd, _, _ := SelectionTau(context.Background(), c, r, full, rnd)
	t.Logf("Kendall τ(kept 10%%, all): information %.4f, every 10th item %.4f", tau, tauRnd)
	if tau < 0.85 {
		t.Errorf("τ = %.4f, want > 0.85", tau)
	}
	if _, _, err := InformationSelect(full, 0); err == nil || err.Error() != "keep 0 must be in (0, 1]" {
		t.Errorf("keep 0: %v", err)
	}
}

func TestCrossValidateBeatsBaseline(t *testing.T) {
	r, _ := irttest.Gen(t, synth.Options{Kind: "2pl", Models: 80, Items: 500, Missing: 0.2, Seed: 10})
	res, err := CrossValidate(context.Background(), irt.CBMM{Accelerate: true}, r, 10, 42)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("2PL: acc %.4f log loss %.4f AUC %.4f; baseline: acc %.4f log loss %.4f AUC %.4f",
		res.IRT.Accuracy, res.IRT.LogLoss, res.IRT.AUC, res.Baseline.Accuracy, res.Baseline.LogLoss, res.Baseline.AUC)
	if res.IRT.N != r.Len() || res.Baseline.N != r.Len() || len(res.PerFold) != 10 {
		t.Fatalf("scored %d / %d cells, %d folds", res.IRT.N, res.Baseline.N, len(res.PerFold))
	}
	if !(res.IRT.LogLoss < res.Baseline.LogLoss-0.05 && res.IRT.AUC > res.Baseline.AUC+0.05 && res.IRT.Accuracy > res.Baseline.Accuracy) {
		t.Errorf("2PL does not beat the per-model baseline: %+v vs %+v", res.IRT, res.Baseline)
	}
	again, _ := CrossValidate(context.Background(), irt.CBMM{Accelerate: true}, r, 10, 42)
	if again.IRT != res.IRT {
		t.Errorf("same seed, different result")
	}
	if _, err := CrossValidate(context.Background(), irt.CBMM{}, r, 1, 42); err == nil || err.Error() != "cv: need at least 2 folds, got 1" {
		t.Errorf("1 fold: %v", err)
	}
}

func TestLBFGSReachesCBMMLoss(t *testing.T) {
	r, _ := irttest.Gen(t, synth.Options{Kind: "2pl", Models: 60, Items: 300, Missing: 0.1, Seed: 12})
	mm, err := irt.CBMM{Tol: 1e-10, Accelerate: true}.Fit(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	lb, err := irtlbfgs.LBFGS2PL{Tol: 1e-12}.Fit(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	lm, ll := mm.LossHistory[len(mm.LossHistory)-1], lb.LossHistory[len(lb.LossHistory)-1]
	t.Logf("final loss: cBMM %.6f (%d iterations), L-BFGS %.6f (%d iterations)", lm, mm.Iterations, ll, lb.Iterations)
	if math.Abs(lm-ll) > 1e-4*lm {
		t.Errorf("cBMM loss %.6f and L-BFGS loss %.6f differ", lm, ll)
	}
	if s := eval.Spearman(mm.Theta, lb.Theta); s < 0.999 {
		t.Errorf("Spearman(θ cBMM, θ L-BFGS) = %.5f", s)
	}
}

// mirt's published LSAT7 2PL estimates (shared/data/README.md).
var lsat7Mirt = struct{ a, d []float64 }{
	a: []float64{0.988, 1.081, 1.706, 0.7651, 0.7358},
	d: []float64{1.8561, 0.808, 1.8043, 0.486, 1.8545},
}

func order(v []float64) []int {
	idx := []int{0, 1, 2, 3, 4}
	sort.SliceStable(idx, func(x, y int) bool { return v[idx[x]] > v[idx[y]] })
	return idx
}

func TestLSAT7ItemOrderMatchesMirt(t *testing.T) {
	path := filepath.Join(sharedData(t), "lsat", "LSAT7.csv")
	r, _, err := read.File(path, read.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.NumModels() != 1000 || r.NumItems() != 5 {
		t.Fatalf("LSAT7: %d respondents x %d items", r.NumModels(), r.NumItems())
	}
	// Marginal ML, as mirt fits it: the values must agree to mirt's own 1e-2.
	mml, err := irtmml.MML2PL{}.Fit(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	irttest.AssertMonotone(t, "LSAT7 MML", mml.LossHistory)
	// Joint ML (cBMM) on 1000 respondents x 5 items: reported, not asserted
	// (joint ML is inconsistent with 5 items; 30% of respondents have
	// perfect scores whose θ diverges).
	jml, err := irt.CBMM{Tol: 1e-9}.Fit(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	irttest.AssertMonotone(t, "LSAT7 cBMM", jml.LossHistory)
	// items.csv's convention: d the intercept, b = −d/a the difficulty, set
	// beside mirt's d and its IRTpars b = −d/a.
	for j := 0; j < 5; j++ {
		wantB := -lsat7Mirt.d[j] / lsat7Mirt.a[j]
		mb := model.Difficulty(mml.A[j:j+1], mml.B[j])
		jb := model.Difficulty(jml.A[j:j+1], jml.B[j])
		t.Logf("item %d: mirt a %.4f d %.4f b %.4f | jeirt MML a %.4f d %.4f b %.4f | cBMM (JML) a %.4f d %.4f b %.4f", j+1,
			lsat7Mirt.a[j], lsat7Mirt.d[j], wantB, mml.A[j], mml.B[j], mb, jml.A[j], jml.B[j], jb)
		if math.Abs(mml.A[j]-lsat7Mirt.a[j]) > 1e-2 || math.Abs(mml.B[j]-lsat7Mirt.d[j]) > 1e-2 {
			t.Errorf("item %d: MML a %.4f d %.4f, mirt a %.4f d %.4f (tolerance 1e-2)", j+1, mml.A[j], mml.B[j], lsat7Mirt.a[j], lsat7Mirt.d[j])
		}
		if math.Abs(mb-wantB) > 2e-2 {
			t.Errorf("item %d: MML b = −d/a %.4f, mirt's %.4f (tolerance 2e-2)", j+1, mb, wantB)
		}
	}
	ga, gb := order(mml.A), order(mml.B)
	wa, wb := order(lsat7Mirt.a), order(lsat7Mirt.d)
	t.Logf("order by a: MML %v mirt %v; by easiness: MML %v mirt %v; cBMM by a %v, by d %v", ga, wa, gb, wb, order(jml.A), order(jml.B))
	if fmt.Sprint(ga) != fmt.Sprint(wa) || fmt.Sprint(gb) != fmt.Sprint(wb) {
		t.Errorf("item order differs from mirt's")
	}
}

func TestRanksAndTauWithMissingModel(t *testing.T) {
	x := []float64{0.3, math.NaN(), 0.9, 0.5}
	if got := eval.DescRanks(x); fmt.Sprint(got) != "[3 4 1 2]" {
		t.Errorf("eval.DescRanks = %v, want [3 4 1 2]", got)
	}
	if tau := eval.KendallTau(x, []float64{1, 5, 3, 2}); tau != 1 {
		t.Errorf("τ with a NaN entry = %g, want 1 (the NaN pairs left out)", tau)
	}
	if s := eval.Spearman([]float64{1, 2, 3}, []float64{10, 30, 20}); math.Abs(s-0.5) > 1e-15 {
		t.Errorf("Spearman = %g, want 0.5", s)
	}
}

func TestBootstrapRank2Aligned(t *testing.T) {
	r, _ := irttest.Gen(t, synth.Options{Kind: "mirt", Rank: 2, Models: 60, Items: 300, Missing: 0.1, Seed: 13})
	c := irt.CBMM{Rank: 2, Accelerate: true}
	full, err := c.Fit(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	for _, models := range []bool{false, true} {
		res, err := Bootstrap{B: 12, Seed: 3, Models: models, Fitter: c}.Run(context.Background(), r, full)
		if err != nil {
			t.Fatal(err)
		}
		// Aligned replicates scatter around the full fit: SEs are small
		// compared with θ's sd of 1, and (items resampled) every interval
		// holds the point estimate.
		in := 0
		var ses []float64
		for k, th := range full.Theta {
			lo, hi, se := res.ThetaLo[k], res.ThetaHi[k], res.ThetaSE[k]
			if math.IsNaN(se) {
				if models {
					continue // a model drawn in fewer than two replicates
				}
				t.Fatalf("θ[%d] has no SE", k)
			}
			ses = append(ses, se)
			if lo <= th && th <= hi {
				in++
			}
		}
		sort.Float64s(ses)
		med := ses[len(ses)/2]
		t.Logf("models=%v: %d of %d θ intervals hold the estimate; median SE %.3f, largest %.3f", models, in, len(full.Theta), med, ses[len(ses)-1])
		if !models && (in != len(full.Theta) || med > 0.3) {
			t.Errorf("items resampled: %d of %d intervals hold the estimate, median SE %.3f", in, len(full.Theta), med)
		}
		if models && med > 0.6 {
			t.Errorf("models resampled: median SE %.3f: replicates not aligned", med)
		}
	}
}

// A model with no observed cell keeps a θ but is left out of both rankings
// (rank 0) and of the rank moves; the others are ranked 1..N−1.
func TestAnalyzeUnobservedModelNotRanked(t *testing.T) {
	base, _ := irttest.Gen(t, synth.Options{Kind: "2pl", Models: 30, Items: 100, Seed: 5})
	r := &model.Responses{Models: append(append([]string(nil), base.Models...), "ghost"), Items: base.Items,
		Model: base.Model, Item: base.Item, Label: base.Label}
	fit, err := irt.CBMM{}.Fit(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	an := Analyze(r, fit, AnalysisOptions{RankMove: 1})
	ghost := len(r.Models) - 1
	if an.Rank[ghost] != 0 || an.AccuracyRank[ghost] != 0 || len(an.Unobserved) != 1 || an.Unobserved[0] != "ghost" {
		t.Fatalf("ghost: rank %d, accuracy rank %d, unobserved %v", an.Rank[ghost], an.AccuracyRank[ghost], an.Unobserved)
	}
	seen := map[int]bool{}
	for i := 0; i < ghost; i++ {
		seen[an.Rank[i]] = true
	}
	for k := 1; k <= ghost; k++ {
		if !seen[k] {
			t.Errorf("rank %d missing among the observed models", k)
		}
	}
	for _, m := range an.RankMoves {
		if m.Model == "ghost" {
			t.Error("the unobserved model is listed as a rank move")
		}
	}
}

// A memory cap smaller than a batch of replicates fits them in smaller
// batches (says so) and changes nothing else: the replicates are drawn in
// the same order, so the intervals are the same as without the cap.
func TestBootstrapMaxMemoryBatches(t *testing.T) {
	r, _ := irttest.Gen(t, synth.Options{Kind: "2pl", Models: 40, Items: 120, Seed: 3})
	c := irt.CBMM{Accelerate: true}
	full, err := c.Fit(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := Bootstrap{B: 6, Seed: 1, Fitter: c, MaxMemory: -1}.Run(context.Background(), r, full)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	capped, err := Bootstrap{B: 6, Seed: 1, Fitter: c, MaxMemory: 2 * BootstrapBytesPerCell * int64(r.Len()),
		Log: func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }}.Run(context.Background(), r, full)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) == 0 || !strings.Contains(lines[0], "bootstrap: 2 replicates per batch") {
		t.Errorf("log %q", lines)
	}
	for k := range whole.ThetaSE {
		if d := math.Abs(whole.ThetaSE[k] - capped.ThetaSE[k]); d > 1e-9 {
			t.Fatalf("θ SE %d: %v without the cap, %v with it", k, whole.ThetaSE[k], capped.ThetaSE[k])
		}
	}
}

// An interrupted bootstrap keeps the replicates of the batches done: the
// summary is that of a bootstrap asked for just those (the replicates are
// drawn in the same order), labelled with what was asked for.
func TestBootstrapInterruptedKeepsDoneReplicates(t *testing.T) {
	r, _ := irttest.Gen(t, synth.Options{Kind: "2pl", Models: 40, Items: 120, Seed: 3})
	c := irt.CBMM{Accelerate: true}
	full, err := c.Fit(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopAt := func(format string, args ...any) {
		if strings.HasPrefix(fmt.Sprintf(format, args...), "bootstrap: 6 of 20") {
			cancel()
		}
	}
	got, err := Bootstrap{B: 20, Seed: 1, BatchSize: 3, Fitter: c, Log: stopAt}.Run(ctx, r, full)
	var in *Interrupted
	if !errors.As(err, &in) || in.Done != 6 || in.Of != 20 || !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want interrupted after 6 of 20", err)
	}
	if got == nil || got.B != 6 || got.Requested != 20 {
		t.Fatalf("result %+v", got)
	}
	want, err := Bootstrap{B: 6, Seed: 1, BatchSize: 3, Fitter: c}.Run(context.Background(), r, full)
	if err != nil {
		t.Fatal(err)
	}
	for k := range want.ThetaSE {
		if d := math.Abs(want.ThetaSE[k] - got.ThetaSE[k]); !(d <= 1e-12) || math.IsNaN(want.ThetaSE[k]) && !math.IsNaN(got.ThetaSE[k]) {
			t.Fatalf("θ SE %d: %v interrupted, %v from 6 replicates", k, got.ThetaSE[k], want.ThetaSE[k])
		}
	}
	// Stopped before 2 replicates: no summary.
	ctx2, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if res, err := (Bootstrap{B: 20, Seed: 1, Fitter: c}).Run(ctx2, r, full); res != nil || !errors.As(err, &in) || in.Done != 0 {
		t.Errorf("cancelled at once: %v %v", res, err)
	}
}
