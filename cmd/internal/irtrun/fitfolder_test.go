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
