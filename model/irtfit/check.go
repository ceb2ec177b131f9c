package irtfit

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/limits"
)

// MaxParam bounds every θ, slope a and intercept d that Read accepts: far
// beyond any fit's (a slope run off under joint maximum likelihood stays in
// the hundreds), and small enough that the squares and sums the readers of a
// fit form (a population covariance, θ·a + d) stay finite.
const MaxParam = 1e6

// refit is the fix every damaged-folder message ends with.
const refit = "the fit folder was edited or damaged: restore it, or fit again with jeirt irt fit"

// present records which of fit.json's counts and settings the file holds:
// a key absent (a folder older than it, or a test's) keeps its default, a
// key present must hold a value that a fit writes.
type present struct {
	Models   *int `json:"models"`
	Items    *int `json:"items"`
	Settings struct {
		Sigma *float64 `json:"sigma"`
	} `json:"settings"`
}

// checkSettings refuses a fit.json (at p, raw its bytes) whose settings no
// fit writes: a logistic scale σ that is not a positive finite number, or
// tolerances and counts outside their ranges. Zero stays allowed
// where older folders wrote it (tol, max_iter, grad_tol), and σ and the
// counts may be absent. settings.level is checked where it is used (its
// error names the flag that overrides it).
func checkSettings(p string, raw []byte, d *Doc) (counted bool, err error) {
	var has present
	if err := json.Unmarshal(raw, &has); err != nil {
		return false, fmt.Errorf("%s: %w", p, err)
	}
	counted = has.Models != nil && has.Items != nil
	s := d.Settings
	bad := func(field string, v any, want string) error {
		return fmt.Errorf("%s: settings.%s %v: %s; %s", p, field, v, want, refit)
	}
	switch {
	case has.Settings.Sigma != nil && !(s.Sigma > 0 && s.Sigma <= MaxParam):
		err = bad("sigma", s.Sigma, fmt.Sprintf("the logistic scale must be positive and at most %g", MaxParam))
	case !(s.Tol >= 0) || math.IsInf(s.Tol, 0):
		err = bad("tol", s.Tol, "must be finite and not negative")
	case !(s.GradTol >= 0) || math.IsInf(s.GradTol, 0):
		err = bad("grad_tol", s.GradTol, "must be finite and not negative")
	case s.MaxIter < 0:
		err = bad("max_iter", s.MaxIter, "must not be negative")
	case s.Bootstrap < 0:
		err = bad("bootstrap", s.Bootstrap, "must not be negative")
	case s.MinAnswers < 0:
		err = bad("min_answers", s.MinAnswers, "must not be negative")
	case counted && d.Models < 1:
		err = fmt.Errorf("%s: models %d: a fit has at least one model; %s", p, d.Models, refit)
	case counted && d.Items < 1:
		err = fmt.Errorf("%s: items %d: a fit has at least one item; %s", p, d.Items, refit)
	}
	return counted, err
}

// param is one value of a row, for checkParams: its name in words (theta,
// slope, intercept, score), its column and its value.
type param struct {
	name, col string
	v         float64
}

// checkParams refuses a row of the file at path (on line; what and id name
// the row: model "m1", item "q1") whose values are not finite or exceed
// MaxParam in size, as irt cat's bank check words it (cat.ItemError).
func checkParams(path string, line int, what, id string, ps []param) error {
	for _, p := range ps {
		if math.IsNaN(p.v) || math.IsInf(p.v, 0) {
			return fmt.Errorf("%s:%d: %s %q: %s %v, not a finite number (column %q); %s", path, line, what, limits.Clip(id), p.name, p.v, p.col, refit)
		}
		if math.Abs(p.v) > MaxParam {
			return fmt.Errorf("%s:%d: %s %q: %s %v, beyond ±%g (column %q), a value no fit writes; %s", path, line, what, limits.Clip(id), p.name, p.v, MaxParam, p.col, refit)
		}
	}
	return nil
}

// checkModel checks abilities.csv's row of m (on line): θ (and the score
// of a multidimensional fit) finite and bounded.
func checkModel(dir string, line, rk int, m Model) error {
	var ps []param
	for d, c := range cols("theta", rk) {
		ps = append(ps, param{"theta", c, m.Theta[d]})
	}
	if rk > 1 {
		ps = append(ps, param{"score", "score", m.Score})
	}
	return checkParams(filepath.Join(dir, "abilities.csv"), line, "model", m.Name, ps)
}

// checkItem checks items.csv's row of it (on line): a and d (in column
// dcol) finite and bounded.
func checkItem(dir string, line, rk int, it Item, dcol string) error {
	var ps []param
	for d, c := range cols("a", rk) {
		ps = append(ps, param{"slope", c, it.A[d]})
	}
	ps = append(ps, param{"intercept", dcol, it.D})
	return checkParams(filepath.Join(dir, "items.csv"), line, "item", it.ID, ps)
}

// checkCounts refuses a folder whose abilities.csv and items.csv do not
// hold the models and items fit.json counts (when it counts them).
func checkCounts(dir string, f *Folder, counted bool) error {
	p := filepath.Join(dir, "fit.json")
	if !counted {
		return nil
	}
	if n := len(f.Models); n != f.Doc.Models {
		return fmt.Errorf("%s has %d model rows, and %s says models %d: the files are not one fit; %s",
			filepath.Join(dir, "abilities.csv"), n, p, f.Doc.Models, refit)
	}
	if n := len(f.Items); n != f.Doc.Items {
		return fmt.Errorf("%s has %d item rows, and %s says items %d: the files are not one fit; %s",
			filepath.Join(dir, "items.csv"), n, p, f.Doc.Items, refit)
	}
	return nil
}

// Check refuses settings no fit can have, as model.FieldErrors on the
// fields of Settings: a prior, family or guessing that does not parse or
// does not go together, and the analysis's thresholds, the bootstrap's
// count and the level out of range. What a fit of them can be (the
// method, rank, σ, tolerances) train/irt's Spec.Validate checks, which
// cannot live here (model does not import train).
func (s Settings) Check() error {
	if _, err := s.PriorSpec(); err != nil {
		return model.FieldErrorf("Prior", "{Prior}: %v", err)
	}
	fam, famErr := model.ParseFamily(s.Model)
	switch {
	case !(s.MinA >= 0) || math.IsInf(s.MinA, 0):
		return model.FieldErrorf("MinA", "{MinA} %v: must be finite and not negative", s.MinA)
	case famErr != nil:
		return model.FieldErrorf("Model", "{Model} %q: want %s", s.Model, model.FamilyNames())
	case s.Guess != "" && !fam.HasAsymptote():
		return model.FieldErrorf("Guess", "{Guess} %s: lower asymptotes need {Model} %s", limits.Clip(s.Guess), model.ThreePL)
	case len(s.GuessPrior) != 0 && (len(s.GuessPrior) != 2 || !(s.GuessPrior[0] >= 1 && s.GuessPrior[1] >= 1) || math.IsInf(s.GuessPrior[0]+s.GuessPrior[1], 0)):
		return model.FieldErrorf("GuessPrior", "{GuessPrior} %v: want two numbers α,β of at least 1 (1,1: no prior)", s.GuessPrior)
	case s.MinAnswers < 0:
		return model.FieldErrorf("MinAnswers", "{MinAnswers} %d: must not be negative (0: no threshold)", s.MinAnswers)
	case s.Bootstrap < 0 || s.Bootstrap == 1:
		return model.FieldErrorf("Bootstrap", "{Bootstrap} %d: must be 0 (none) or at least 2", s.Bootstrap)
	case !(s.Level > 0 && s.Level < 1):
		return model.FieldErrorf("Level", "{Level} %v: must be in (0, 1)", s.Level)
	}
	return nil
}
