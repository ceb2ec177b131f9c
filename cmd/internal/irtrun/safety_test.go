package irtrun

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/irtfit"
	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/estimate"
	"github.com/jeirt/jeirt/train/irt/irttest"
)

// safetyFit writes a small fit folder (4 models x 6 items, rank 1) and its
// data file (wide CSV), and returns the folder and the file.
func safetyFit(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	data := filepath.Join(dir, "r.csv")
	rows := "model,q1,q2,q3,q4,q5,q6\nm1,1,1,1,1,1,0\nm2,1,1,1,0,0,1\nm3,1,0,1,0,1,0\nm4,0,1,0,0,0,0\n"
	if err := os.WriteFile(data, []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	f := &irtfit.Folder{Doc: irtfit.Doc{Settings: irtfit.Settings{Method: "cbmm", Data: data, Rank: 1, Sigma: 1, MaxIter: 1000, Level: 0.95},
		Models: 4, Items: 6, LossHistory: []float64{1}, RankMoves: []irtfit.RankMove{}}}
	for i, name := range []string{"m1", "m2", "m3", "m4"} {
		f.Models = append(f.Models, irtfit.Model{Name: name, Theta: []float64{1.5 - float64(i)}, Score: 1.5 - float64(i), Accuracy: 0.5, NObs: 6})
	}
	for j := 0; j < 6; j++ {
		f.Items = append(f.Items, irtfit.Item{ID: fmt.Sprintf("q%d", j+1), A: []float64{0.5 + 0.25*float64(j)}, D: 1 - 0.4*float64(j), NObs: 4,
			PCorrect: math.NaN(), SED: math.NaN(), SEB: math.NaN(), C: math.NaN(), Trials: math.NaN()})
	}
	fit := filepath.Join(dir, "fit")
	if err := os.Mkdir(fit, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := f.Doc.Settings.RecordSources(); err != nil { // as FitJob.Analyze does: the data's SHA-256
		t.Fatal(err)
	}
	if err := irtfit.Write(fit, f); err != nil {
		t.Fatal(err)
	}
	return fit, data
}

// Numbers at the edges: every numeric setting of jeirt irt select and irt
// estimate is refused where no run can use it, by the rule of its flag, with
// the flag named (model.FieldError) and nothing written.
func TestSafetyNumbersAtEdges(t *testing.T) {
	fit, data := safetyFit(t)
	ctx := context.Background()
	nan, inf := math.NaN(), math.Inf(1)
	type tc struct {
		name, field, want string
		run               func(out string) error
	}
	var cases []tc
	for _, rule := range []string{estimate.Anchor, estimate.AnchorRank, estimate.Random, "info"} {
		for _, keep := range []float64{nan, 0, -1, inf, 1.5} {
			cases = append(cases, tc{name: fmt.Sprintf("select --rule %s --keep %v", rule, keep), field: "Keep",
				want: fmt.Sprintf("keep: keep %v must be in (0, 1]", keep),
				run: func(out string) error {
					_, err := Select{Fit: fit, Out: out, Rule: rule, Keep: keep, Seed: 1}.Run(ctx, "cpu", nil)
					return err
				}})
		}
	}
	cases = append(cases, tc{name: "select --rule benchmirt --bins -2", field: "Bins", want: "bins -2: must be at least 1 (0: 10)",
		run: func(out string) error {
			_, err := Select{Fit: fit, Out: out, Rule: "benchmirt", Keep: 0.5, Bins: -2}.Run(ctx, "cpu", nil)
			return err
		}})
	eval := func(mod func(e *Estimate)) func(string) error {
		return func(out string) error {
			e := Estimate{Eval: true, Data: data, Level: 0.95, PriorDF: 4, Log: nil,
				Fitting: irtfit.Settings{Rank: 1, Model: "2pl", Prior: "default"}, Eval1: estimate.Eval{Seeds: 2, TestFraction: 0.2, Budget: 2}}
			mod(&e)
			return e.Run(ctx, &strings.Builder{})
		}
	}
	cases = append(cases,
		tc{"estimate --eval --seeds -1", "Seeds", "seeds -1: must be at least 1 (the number of model splits)", eval(func(e *Estimate) { e.Eval1.Seeds = -1 })},
		tc{"estimate --eval --rank 1000", "Rank", data + ": rank 1000 needs at least 1000 models and 1000 items; the data has 4 models and 6 items", eval(func(e *Estimate) { e.Fitting.Rank = 1000 })},
		tc{"estimate --eval --rank 0", "Rank", "rank 0: must be at least 1", eval(func(e *Estimate) { e.Fitting.Rank = 0 })},
		tc{"estimate --eval --model 1pl --rank 2", "Model", "model 1pl is unidimensional (one common discrimination): it needs rank 1 (got rank 2)", eval(func(e *Estimate) { e.Fitting.Rank, e.Fitting.Model = 2, "1pl" })},
		tc{"estimate --eval --budget -3", "Budget", "budget -3: must not be negative (0: min(100, 10% of the items))", eval(func(e *Estimate) { e.Eval1.Budget = -3 })},
		tc{"estimate --eval --test-fraction NaN", "TestFraction", "test-fraction NaN: must be in (0, 1)", eval(func(e *Estimate) { e.Eval1.TestFraction = nan })},
		tc{"estimate --eval --test-fraction 1", "TestFraction", "test-fraction 1: must be in (0, 1)", eval(func(e *Estimate) { e.Eval1.TestFraction = 1 })},
		tc{"estimate --level 1.5", "Level", "level 1.5: must be in (0, 1)", eval(func(e *Estimate) { e.Eval, e.Level = false, 1.5 })},
		tc{"estimate --level NaN", "Level", "level NaN: must be in (0, 1)", eval(func(e *Estimate) { e.Level = nan })},
		tc{"estimate --prior-df -1", "PriorDF", "prior-df -1: must be finite and not negative (0: normal priors)", eval(func(e *Estimate) { e.PriorDF = -1 })},
		tc{"estimate --prior-df +Inf", "PriorDF", "prior-df +Inf: must be finite and not negative (0: normal priors)", eval(func(e *Estimate) { e.PriorDF = inf })},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.csv")
			err := c.run(out)
			var fe *model.FieldError
			if err == nil || err.Error() != c.want || !errors.As(err, &fe) || fe.Field != c.field {
				t.Errorf("got  %v\nwant %s (field %s)", err, c.want, c.field)
			}
			if _, serr := os.Stat(out); serr == nil {
				t.Errorf("%s written", out)
			}
		})
	}
	// The edges themselves are accepted: --keep 1 keeps every item.
	out := filepath.Join(t.TempDir(), "all.csv")
	if msg, err := (Select{Fit: fit, Out: out, Rule: estimate.Anchor, Keep: 1, Seed: 1}).Run(ctx, "cpu", nil); err != nil || !strings.HasPrefix(msg, "kept 6 of 6 items") {
		t.Errorf("--keep 1: %q %v", msg, err)
	}
}

// Every method carries the certificate: an mml fit's folder records its
// max_gradient and the tolerance it was judged by, converged false when
// EM was stopped early, true only with max_gradient at most grad_tol; and
// fit.json read back keeps it (not null).
func TestSafetyMMLCertified(t *testing.T) {
	r, _ := irttest.Gen(t, synth.Options{Kind: "2pl", Models: 300, Items: 8, Seed: 11})
	for _, tc := range []struct {
		maxIter   int
		converged bool
	}{{2, false}, {1000, true}} {
		set := irtfit.Settings{Method: "mml", Rank: 1, Sigma: 1, MaxIter: tc.maxIter, Level: 0.95, Prior: "a=normal(1,1),d=normal(0,3)", Threads: 1}
		job := FitJob{Settings: set, Data: []string{"sim.csv"}}
		fits, secs, err := job.Run(context.Background(), []*model.Responses{r})
		if err != nil {
			t.Fatal(err)
		}
		if err := job.Analyze(context.Background(), 0, r, fits[0], secs); err != nil {
			t.Fatal(err)
		}
		d := fits[0].Folder.Doc
		g := float64(d.MaxGradient)
		if d.Converged != tc.converged || d.Settings.GradTol != 1e-3 || math.IsNaN(g) || (g <= 1e-3) != tc.converged {
			t.Errorf("max-iter %d: converged %v (%s), max_gradient %v, grad_tol %v", tc.maxIter, d.Converged, d.ConvergenceNote, g, d.Settings.GradTol)
		}
		dir := t.TempDir()
		if err := irtfit.Write(dir, fits[0].Folder); err != nil {
			t.Fatal(err)
		}
		back, err := irtfit.Read(dir)
		if err != nil || float64(back.Doc.MaxGradient) != g || back.Doc.Converged != tc.converged {
			t.Errorf("max-iter %d read back: %v, max_gradient %v", tc.maxIter, err, back.Doc.MaxGradient)
		}
	}
}

// A fit folder's data file is read again only with the bytes fitted: irt
// select --rule anchor-correct and irt estimate with gp-irt or blend check
// the SHA-256 fit.json recorded, as --rule info does, and a changed file is
// an error naming it (blend no longer falls back silently).
func TestSafetyFitDataChanged(t *testing.T) {
	fit, data := safetyFit(t)
	ctx := context.Background()
	answers := filepath.Join(t.TempDir(), "new.csv")
	if err := os.WriteFile(answers, []byte("model,q1,q2,q3\nnew,1,0,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sel := func() error {
		_, err := Select{Fit: fit, Out: filepath.Join(t.TempDir(), "kept.csv"), Rule: estimate.AnchorCorrect, Keep: 0.5, Seed: 1}.Run(ctx, "cpu", nil)
		return err
	}
	est := func(name string) func() error {
		return func() error {
			return Estimate{Fit: fit, Answers: answers, Estimators: []string{name}, Level: 0.95, PriorDF: 4}.Run(ctx, &strings.Builder{})
		}
	}
	runs := []struct {
		name string
		run  func() error
	}{{"select --rule anchor-correct", sel}, {"estimate --estimator gp-irt", est(estimate.GPIRT)}, {"estimate --estimator blend", est(estimate.Blend)}}
	// Unchanged, the data are read (anchor-correct keeps 3 of 6 items).
	if err := sel(); err != nil {
		t.Fatalf("unchanged data: %v", err)
	}
	old, err := os.ReadFile(data)
	if err != nil {
		t.Fatal(err)
	}
	// One answer changed: same size, same models and items.
	if err := os.WriteFile(data, []byte(strings.Replace(string(old), "m4,0,1,0", "m4,1,1,0", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	want := fit + ": the fit's data file has changed since the fit: " + data + " (SHA-256 "
	for _, tc := range runs {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "restore it, or refit") || !errors.Is(err, irtfit.ErrDataChanged) {
				t.Errorf("got  %v\nwant %s…", err, want)
			}
		})
	}
}
