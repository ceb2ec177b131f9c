package irtstat

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/irt"
	"github.com/jeirt/jeirt/train/irt/irttest"
)

// On 3PL data (c = 0.25) the fitted 3PL predicts held-out cells better
// than the 2PL on the same folds, from 0/1 answers and from 5 trials per
// cell; the 3PL with the true c given does better still. The margins are
// small (docs/irt.md): a 2PL with flatter slopes imitates a floor well.
// The fits are the default ones (guarded, under the default prior): under
// joint maximum likelihood the guarded 3PL, at its lowest training loss,
// predicts the 0/1 answers' held-out cells worse than its 2PL (0.54629
// against 0.54479), the overfit the prior is for.
func Test3PLBeats2PLHeldOut(t *testing.T) {
	for _, trials := range []int{0, 5} {
		r, _ := irttest.Gen(t, synth.Options{Kind: "2pl", Models: 200, Items: 200, Seed: 11, Guess: 0.25, Trials: trials})
		p := model.DefaultPrior
		res, err := CrossValidateFits(context.Background(), []irt.CBMM{{Accelerate: true, Prior: p}, {Accelerate: true, Model: "3pl", Prior: p},
			{Accelerate: true, Model: "3pl", Guess: 0.25, Prior: p}}, r, 5, 1)
		if err != nil {
			t.Fatal(err)
		}
		l2, l3, lc := res.Fits[0].Metrics.LogLoss, res.Fits[1].Metrics.LogLoss, res.Fits[2].Metrics.LogLoss
		t.Logf("trials %d: held-out log loss 2PL %.5f, 3PL fitted %.5f, 3PL with c = 0.25 given %.5f; best %s", max(trials, 1), l2, l3, lc, res.Fits[res.Best].Name)
		if !(l3 < l2 && lc < l3) {
			t.Errorf("trials %d: held-out log loss 2PL %.5f, 3PL fitted %.5f, given %.5f: want given < fitted < 2PL", trials, l2, l3, lc)
		}
	}
}

// k of n trials written as successes,trials and the same trials written as
// n repeated 0/1 rows (--duplicates trials) read to the same responses and
// fit to the same parameters, bit for bit; and so with a bootstrap, which
// resamples models and items and keeps each cell's trials.
func TestTrialsFitEqualsRepeatedRows(t *testing.T) {
	r, _ := irttest.Gen(t, synth.Options{Kind: "2pl", Models: 50, Items: 80, Seed: 12, Trials: 5, Missing: 0.1})
	dir := t.TempDir()
	var kn, rows strings.Builder
	kn.WriteString("model,item,successes,trials\n")
	rows.WriteString("model,item,correct\n")
	for c := range r.Label {
		m, i := r.Models[r.Model[c]], r.Items[r.Item[c]]
		k, n := int(r.SuccessesAt(c)), r.TrialsAt(c)
		fmt.Fprintf(&kn, "%s,%s,%d,%d\n", m, i, k, n)
		for s := 0; s < n; s++ {
			y := 0
			if s < k {
				y = 1
			}
			fmt.Fprintf(&rows, "%s,%s,%d\n", m, i, y)
		}
	}
	fits := make([]*model.IRT, 2)
	boots := make([]*BootstrapResult, 2)
	for k, f := range []struct{ name, body, dup string }{{"kn.csv", kn.String(), ""}, {"rows.csv", rows.String(), "trials"}} {
		p := filepath.Join(dir, f.name)
		if err := os.WriteFile(p, []byte(f.body), 0o644); err != nil {
			t.Fatal(err)
		}
		rr, _, err := read.File(p, read.Options{Duplicates: f.dup})
		if err != nil {
			t.Fatal(err)
		}
		fitter := irt.CBMM{Accelerate: true}
		if fits[k], err = fitter.Fit(context.Background(), rr); err != nil {
			t.Fatal(err)
		}
		if boots[k], err = (Bootstrap{B: 4, Seed: 1, Models: true, Fitter: fitter}).Run(context.Background(), rr, fits[k]); err != nil {
			t.Fatal(err)
		}
	}
	a, b := fits[0], fits[1]
	same := func(x, y []float64) bool {
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if math.Float64bits(x[i]) != math.Float64bits(y[i]) && !(math.IsNaN(x[i]) && math.IsNaN(y[i])) {
				return false
			}
		}
		return true
	}
	if !same(a.Theta, b.Theta) || !same(a.A, b.A) || !same(a.B, b.B) || !same(a.LossHistory, b.LossHistory) {
		t.Fatal("the fit of successes,trials differs from the fit of the same trials as repeated rows")
	}
	if !same(boots[0].ThetaSE, boots[1].ThetaSE) || !same(boots[0].ASE, boots[1].ASE) {
		t.Fatal("the bootstraps differ")
	}
	if a.Iterations < 2 {
		t.Fatalf("%d iterations", a.Iterations)
	}
}

// The item diagnostics of the family (diagnosePartFamily) are those of
// 0/1 answers (diagnosePart) on 0/1 answers.
func TestDiagnoseFamilyMatchesBinary(t *testing.T) {
	r, _ := irttest.Gen(t, synth.Options{Kind: "2pl", Models: 60, Items: 80, Missing: 0.1, Seed: 14})
	fit, err := irt.CBMM{}.Fit(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	N := r.NumModels()
	nObs, nRight := make([]int, N), make([]int, N)
	for c, i := range r.Model {
		nObs[i]++
		nRight[i] += int(r.Label[c])
	}
	a, b := diagnosePart(r, fit, nObs, nRight, 0, N), diagnosePartFamily(r, fit, 0, N)
	for k := range a.it {
		if math.Abs(a.it[k]-b.it[k]) > 1e-9*math.Max(1, math.Abs(a.it[k])) {
			t.Fatalf("slot %d of item %d: %v (0/1 path) vs %v (family path)", k%itemSlots, k/itemSlots, a.it[k], b.it[k])
		}
	}
	if a.extreme != b.extreme || math.Abs(a.erSE2-b.erSE2) > 1e-9*a.erSE2 {
		t.Errorf("extreme %d vs %d, Σ SE² %v vs %v", a.extreme, b.extreme, a.erSE2, b.erSE2)
	}
}
