package irtrun

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/irtfit"
	"github.com/jeirt/jeirt/train/irt"
	"github.com/jeirt/jeirt/train/irt/irttest"
)

// TestSpecFor: fit.json's settings become the specification field by
// field, the 3PL's lower asymptotes as settings.guess says (a number, 0
// fixed per item, a column of the items file), and CheckSettings refuses
// through one path what the settings or the specification cannot be.
func TestSpecFor(t *testing.T) {
	r := irttest.Guttman(4, 3)
	set := irtfit.Settings{Method: "lbfgs", Rank: 1, Sigma: 1, Tol: 1e-7, MaxIter: 50, Threads: 2, Accelerate: true,
		Device: "cpu", Model: string(model.ThreePL), GuessPrior: []float64{2, 9}, Guess: "0.2", GradTol: 1e-4, Prior: "none"}
	sp, err := SpecFor(set, r)
	if err != nil {
		t.Fatal(err)
	}
	want := irt.Spec{Method: irt.MethodLBFGS, GradTol: 1e-4, CBMM: irt.CBMM{Sigma: 1, Rank: 1, Tol: 1e-7, MaxIter: 50, Threads: 2,
		Accelerate: true, Device: "cpu", Model: model.ThreePL, GuessPrior: [2]float64{2, 9}, Guess: 0.2}}
	if !reflect.DeepEqual(sp, want) {
		t.Errorf("SpecFor = %+v, want %+v", sp, want)
	}
	set.Guess = "0"
	if sp, _ = SpecFor(set, r); sp.CBMM.Guess != 0 || !reflect.DeepEqual(sp.CBMM.ItemGuess, [][]float64{{0, 0, 0}}) {
		t.Errorf("guess 0: %v, %v", sp.CBMM.Guess, sp.CBMM.ItemGuess)
	}
	dir := t.TempDir()
	items := filepath.Join(dir, "items.csv")
	if err := os.WriteFile(items, []byte("item,options\nq0,4\nq1,2\nq2,5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	set.Guess, set.Items = "options", items
	if sp, err = SpecFor(set, r); err != nil || !reflect.DeepEqual(sp.CBMM.ItemGuess, [][]float64{{0.25, 0.5, 0.2}}) {
		t.Errorf("guess from a column: %v, %v", sp.CBMM.ItemGuess, err)
	}
	set.Items = ""
	var fe *model.FieldError
	if _, err = SpecFor(set, r); !errors.As(err, &fe) || fe.Field != "Guess" {
		t.Errorf("a column without an items file: %v", err)
	}
	// One path for every check: the settings' own, then the specification's.
	base := irtfit.Settings{Rank: 1, Sigma: 1, Method: "cbmm", MaxIter: 10, Level: 0.95}
	for _, tc := range []struct {
		edit  func(*irtfit.Settings)
		field string
		msg   string
	}{
		{func(s *irtfit.Settings) { s.Prior = "theta=normal(0,-1)" }, "Prior", ""},
		{func(s *irtfit.Settings) { s.Level = 1 }, "Level", "level 1: must be in (0, 1)"},
		{func(s *irtfit.Settings) { s.Guess = "0.2" }, "Guess", "guess 0.2: lower asymptotes need model 3pl"},
		{func(s *irtfit.Settings) { s.Method, s.Rank = "mml", 2 }, "Method", "method mml fits rank 1 only (got rank 2)"},
		{func(s *irtfit.Settings) { s.Method, s.Sigma = "mml", 2 }, "Method", "method mml uses sigma 1 (got sigma 2)"},
		{func(s *irtfit.Settings) { s.Method, s.Bootstrap = "lbfgs", 10 }, "Bootstrap", "bootstrap needs method cbmm"},
	} {
		s := base
		tc.edit(&s)
		err := CheckSettings(s)
		if !errors.As(err, &fe) || fe.Field != tc.field || (tc.msg != "" && err.Error() != tc.msg) {
			t.Errorf("%+v: got %v, want %s: %q", s, err, tc.field, tc.msg)
		}
	}
	if err := CheckSettings(base); err != nil {
		t.Errorf("valid settings refused: %v", err)
	}
}
