package irtrun

import (
	"context"
	"math"
	"path/filepath"
	"reflect"
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

// fit.json of `irt fit` records the starts (svd and the nested 1pl's fit),
// the nested fit's loss, which the written loss never exceeds, and the
// certificate with its tolerance; converged only when it holds. The
// folder reads back the same.
func TestFolderRecordsStartsAndCertificate(t *testing.T) {
	r, _ := irttest.Gen(t, synth.Options{Kind: "2pl", Models: 60, Items: 120, Missing: 0.1, Seed: 8})
	for _, method := range []string{"cbmm", "lbfgs"} {
		set := irtfit.Settings{Method: method, Rank: 1, Sigma: 1, Tol: 1e-6, MaxIter: 1000, Accelerate: true, Level: 0.9}
		job := FitJob{Settings: set, Data: []string{"sim.csv"}}
		fits, secs, err := job.Run(context.Background(), []*model.Responses{r})
		if err != nil {
			t.Fatal(err)
		}
		if err := job.Analyze(context.Background(), 0, r, fits[0], secs); err != nil {
			t.Fatal(err)
		}
		d := fits[0].Folder.Doc
		if len(d.Starts) != 2 || d.Starts[0].Name != "svd" || d.Starts[1].Name != "1pl" || d.Nested != "1pl" || d.StartsAgree == nil {
			t.Fatalf("%s: starts %+v, nested %q, agree %v", method, d.Starts, d.Nested, d.StartsAgree)
		}
		chosen := 0
		for _, s := range d.Starts {
			if s.Chosen {
				chosen++
				if s.Loss != d.Loss {
					t.Errorf("%s: chosen start's loss %v, fit.json's %v", method, s.Loss, d.Loss)
				}
			}
			if s.Loss < d.Loss {
				t.Errorf("%s: start %s reached %v, below the written %v", method, s.Name, s.Loss, d.Loss)
			}
		}
		if chosen != 1 || d.Loss > d.NestedLoss || d.Settings.GradTol != 1e-3 || !(float64(d.MaxGradient) >= 0) ||
			d.Converged && float64(d.MaxGradient) > d.Settings.GradTol {
			t.Errorf("%s: %d chosen, loss %v nested %v, grad_tol %v, max_gradient %v, converged %v", method, chosen, d.Loss, d.NestedLoss,
				d.Settings.GradTol, d.MaxGradient, d.Converged)
		}
		dir := filepath.Join(t.TempDir(), "fit")
		if err := irtfit.Write(dir, fits[0].Folder); err != nil {
			t.Fatal(err)
		}
		back, err := irtfit.Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back.Doc.Starts, d.Starts) || back.Doc.MaxGradient != d.MaxGradient || back.Doc.NestedLoss != d.NestedLoss {
			t.Errorf("%s: read back starts %+v, max_gradient %v", method, back.Doc.Starts, back.Doc.MaxGradient)
		}
	}
}
