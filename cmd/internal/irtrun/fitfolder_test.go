package irtrun

import (
	"context"
	"math"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/irtfit"
	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/eval"
	"github.com/jeirt/jeirt/train/irt/irttest"
)

// items.csv's b is a difficulty: it falls as the share of correct answers
// rises, and d (the intercept) rises with it; b = −d/a exactly, with a
// bootstrap interval around it.
func TestFolderDifficultyRisesWithHardness(t *testing.T) {
	r, _ := irttest.Gen(t, synth.Options{Kind: "2pl", Models: 80, Items: 200, Missing: 0.1, Seed: 21})
	set := irtfit.Settings{Method: "cbmm", Rank: 1, Sigma: 1, Tol: 1e-6, MaxIter: 1000, Accelerate: true, Bootstrap: 20, Level: 0.9, Seed: 1}
	job := FitJob{Settings: set, Data: []string{"sim.csv"}}
	fits, secs, err := job.Run(context.Background(), []*model.Responses{r})
	if err != nil {
		t.Fatal(err)
	}
	if err := job.Analyze(context.Background(), 0, r, fits[0], secs); err != nil {
		t.Fatal(err)
	}
	f := fits[0].Folder
	if f.Doc.Parameterisation != irtfit.Parameterisation {
		t.Errorf("fit.json parameterisation %q", f.Doc.Parameterisation)
	}
	var b, d, p []float64
	inside := 0
	for _, it := range f.Items {
		if it.Flag != "" {
			continue
		}
		if got := -it.D / it.A[0]; math.Abs(got-it.B) > 1e-12*math.Abs(got) {
			t.Fatalf("item %s: b %v, −d/a %v", it.ID, it.B, got)
		}
		if it.BLo <= it.B && it.B <= it.BHi {
			inside++
		}
		if !(it.SEB > 0) {
			t.Fatalf("item %s: se_b %v", it.ID, it.SEB)
		}
		b, d, p = append(b, it.B), append(d, it.D), append(p, it.PCorrect)
	}
	rb, rd := eval.Spearman(b, p), eval.Spearman(d, p)
	t.Logf("Spearman(b, p_correct) = %.4f, Spearman(d, p_correct) = %.4f; b inside its interval for %d of %d items", rb, rd, inside, len(b))
	if rb > -0.9 || rd < 0.9 {
		t.Errorf("Spearman(b, p) %.4f (want ≤ −0.9), Spearman(d, p) %.4f (want ≥ 0.9)", rb, rd)
	}
	if inside < len(b)*8/10 {
		t.Errorf("b inside its own bootstrap interval for only %d of %d items", inside, len(b))
	}
}

// An item no model solved and one every model solved have no finite
// difficulty: b, se_b and its interval are undefined (NaN, written empty),
// not the 1e14-sized −d/a of a discrimination driven to 0, and they read
// back as undefined; the other items keep b = −d/a.
func TestFolderNoDifficultyForUnanimousItems(t *testing.T) {
	r, _ := irttest.Gen(t, synth.Options{Kind: "2pl", Models: 40, Items: 30, Seed: 5})
	for c, j := range r.Item {
		switch j {
		case 0:
			r.Label[c] = 0 // nobody solves item 0
		case 1:
			r.Label[c] = 1 // everybody solves item 1
		}
	}
	set := irtfit.Settings{Method: "cbmm", Rank: 1, Sigma: 1, Tol: 1e-6, MaxIter: 1000, Accelerate: true, Bootstrap: 10, Level: 0.9, Seed: 1}
	job := FitJob{Settings: set, Data: []string{"sim.csv"}}
	fits, secs, err := job.Run(context.Background(), []*model.Responses{r})
	if err != nil {
		t.Fatal(err)
	}
	if err := job.Analyze(context.Background(), 0, r, fits[0], secs); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := irtfit.Write(dir, fits[0].Folder); err != nil {
		t.Fatal(err)
	}
	back, err := irtfit.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	for j, it := range back.Items {
		switch j {
		case 0, 1:
			if !math.IsNaN(it.B) || !math.IsNaN(it.SEB) || !math.IsNaN(it.BLo) || !math.IsNaN(it.BHi) {
				t.Errorf("item %s (%s): b %v, se_b %v, interval [%v, %v]; want all undefined", it.ID, it.Flag, it.B, it.SEB, it.BLo, it.BHi)
			}
			if math.IsNaN(it.D) || math.IsInf(it.D, 0) {
				t.Errorf("item %s: d %v, want finite", it.ID, it.D)
			}
		default:
			if got := -it.D / it.A[0]; it.Flag == "" && math.Abs(got-it.B) > 1e-9*math.Abs(got) {
				t.Errorf("item %s: b %v, −d/a %v", it.ID, it.B, got)
			}
		}
	}
}
