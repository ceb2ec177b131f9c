// Package catbank reads a fit folder (package model/irtfit) as the item
// bank of package train/cat, with the prior its abilities give, and reads
// new models' answers to the bank's items: what jeirt irt cat, add-model
// --fit and irt estimate share.
package catbank

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/catfile"
	"github.com/jeirt/jeirt/model/irtfit"
	"github.com/jeirt/jeirt/model/limits"
	"github.com/jeirt/jeirt/model/progress"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/train/cat"
	"github.com/jeirt/jeirt/train/irt"
)

// Fit is a fit folder read as an item bank, with its prior.
type Fit struct {
	Dir    string
	Folder *irtfit.Folder
	Bank   *cat.Bank
	Prior  cat.Prior
	// PriorText says which prior it is, in words.
	PriorText string
	item      map[string]int
	// Usable, when not nil, marks the items that may be asked.
	Usable []bool
}

// Load reads the fit folder dir as a bank of its items. The prior is the
// fit's: N(0, I) for a marginal-ML fit (its θ ~ N(0, 1)), otherwise the
// normal with the mean and population covariance of the fitted models'
// abilities (models without an observed cell left out): N(0, 1) at rank 1
// in the standard gauge of joint ML.
func Load(dir string) (*Fit, error) { return load(dir, false) }

// LoadScoring is Load that also takes a 3PL fit, whose lower
// asymptotes the bank does not carry: for jeirt irt estimate, which scores
// from the fit's items (package train/estimate), not from the bank.
func LoadScoring(dir string) (*Fit, error) { return load(dir, true) }

func load(dir string, guessing bool) (*Fit, error) {
	folder, err := irtfit.Read(dir)
	if err != nil {
		return nil, err
	}
	fit := folder.IRT()
	if fit.C != nil && !guessing {
		return nil, fmt.Errorf("%s is a 3PL fit: adaptive testing and placing models (irt cat, add-model --fit) take 1PL and 2PL fits", dir)
	}
	f := &Fit{Dir: dir, Folder: folder, Bank: &cat.Bank{Rank: fit.Rank, Sigma: fit.Sigma, A: fit.A, D: fit.B},
		item: make(map[string]int, len(fit.Items))}
	itemsCSV := filepath.Join(dir, "items.csv")
	for j, id := range fit.Items { // irtfit.Read refuses an item twice
		f.item[id] = j
	}
	if err := f.Bank.Check(); err != nil {
		var ie *cat.ItemError
		if errors.As(err, &ie) {
			// items.csv's records are the fit's items in order, after the header.
			return nil, fmt.Errorf("%s:%d: item %q: %s", itemsCSV, ie.Item+2, limits.Clip(fit.Items[ie.Item]), ie.Reason())
		}
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	rk := fit.Rank
	if irt.Method(folder.Doc.Settings.Method) == irt.MethodMML {
		f.Prior, f.PriorText = cat.StandardPrior(rk), "N(0, 1), the latent distribution of the marginal-ML fit"
		return f, nil
	}
	var theta, all []float64
	for _, m := range folder.Models {
		all = append(all, m.Theta...)
		if m.Rank > 0 {
			theta = append(theta, m.Theta...)
		}
	}
	if len(theta) < 2*rk {
		theta = all // a folder without ranks: every model
	}
	if f.Prior, err = cat.PopulationPrior(theta, rk); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	f.PriorText = fmt.Sprintf("normal with the mean and covariance of the %d fitted models' abilities: N(%s, %s)", len(theta)/rk, FormatVector(f.Prior.Mean), FormatVector(f.Prior.Cov))
	return f, nil
}

// FormatVector writes θ, an SE or a prior's mean or covariance as the
// commands print them: each entry to 3 significant digits, a vector in
// brackets.
func FormatVector(v []float64) string {
	// θ and SE to 4 decimals first: the prior mean's rounding noise
	// (-5.95e-16) prints as 0.
	g := func(x float64) string { return fmt.Sprintf("%.3g", math.Round(x*1e4)/1e4+0) }
	if len(v) == 1 {
		return g(v[0])
	}
	s := make([]string, len(v))
	for k, x := range v {
		s[k] = g(x)
	}
	return "[" + strings.Join(s, " ") + "]"
}

// EstimatorText states how θ and its standard error are estimated.
func (f *Fit) EstimatorText(estimator string) string {
	if estimator == cat.EAP {
		return "EAP: the posterior mean of theta under the fit's prior (" + f.PriorText + "), on 241 points of the prior mean +- 6 sd; SE: the posterior sd. Not maximum likelihood."
	}
	return "MAP: the posterior mode of theta under the fit's prior (" + f.PriorText + "), by Newton's method; SE: the square root of the diagonal of the inverse posterior information at the mode. Not maximum likelihood: ML has no finite value while every answer so far is right, or every one wrong."
}

// AnswersOf gives each chosen model of r its answers to the fit's items
// (item index -> answer), in the file's item order, and says on log how
// many answers it had to leave out (items the fit does not have).
func (f *Fit) AnswersOf(r *model.Responses, path string, models []string, log progress.Logf) ([]string, [][]int, [][]uint8, error) {
	models, items, cells, err := f.cellsOf(r, path, models, log)
	if err != nil {
		return nil, nil, nil, err
	}
	ys := make([][]uint8, len(models))
	for k, cs := range cells {
		for _, c := range cs {
			ys[k] = append(ys[k], r.Label[c])
		}
	}
	return models, items, ys, nil
}

// cellsOf is AnswersOf's models and items with the cells of r that hold
// each answer.
func (f *Fit) cellsOf(r *model.Responses, path string, models []string, log progress.Logf) ([]string, [][]int, [][]int32, error) {
	if len(models) == 0 {
		for i, m := range r.Models {
			if len(r.ByModel().Row(i)) > 0 {
				models = append(models, m)
			}
		}
	}
	items := make([][]int, len(models))
	cells := make([][]int32, len(models))
	unknown := 0
	seen := map[string]bool{}
	for k, name := range models {
		if seen[name] {
			return nil, nil, nil, model.FieldErrorf("Models", "{Models}: %q is named twice", name)
		}
		seen[name] = true
		i := r.ModelIndex(name)
		if i < 0 || len(r.ByModel().Row(i)) == 0 {
			return nil, nil, nil, fmt.Errorf("%s: no answers of model %q", path, name)
		}
		for _, c := range r.ByModel().Row(i) {
			j, ok := f.item[r.Items[r.Item[c]]]
			if !ok {
				unknown++
				continue
			}
			items[k] = append(items[k], j)
			cells[k] = append(cells[k], c)
		}
		if len(items[k]) == 0 {
			return nil, nil, nil, fmt.Errorf("%s: model %q answered none of the fit's %d items", path, name, f.Bank.NumItems())
		}
	}
	if unknown > 0 {
		log.Printf("%s: %d answers are to items the fit %s does not have; they are left out", path, unknown, f.Dir)
	}
	return models, items, cells, nil
}

// SetGroups gives the bank the groups of the item-group file path (column
// col, see catfile.ReadGroups); every item of the fit needs one.
func (f *Fit) SetGroups(path, col string) error {
	g, err := catfile.ReadGroups(path, col)
	if err != nil {
		return err
	}
	idx := map[string]int{}
	var missing []string
	f.Bank.Group = make([]int, f.Bank.NumItems())
	for j, it := range f.Folder.Items {
		name, ok := g[it.ID]
		if !ok {
			missing = append(missing, it.ID)
			continue
		}
		k, ok := idx[name]
		if !ok {
			k = len(f.Bank.Groups)
			idx[name] = k
			f.Bank.Groups = append(f.Bank.Groups, name)
		}
		f.Bank.Group[j] = k
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s: %d of the fit's %d items have no group (first: %s)", path, len(missing), f.Bank.NumItems(), limits.Clip(missing[0]))
	}
	return nil
}

// GroupOf is item j's group name ("" without groups).
func (f *Fit) GroupOf(j int) string {
	if f.Bank.Group == nil {
		return ""
	}
	return f.Bank.Groups[f.Bank.Group[j]]
}

// ReadResponses reads a responses file as the commands do.
func ReadResponses(path string, opt read.Options, log progress.Logf) (*model.Responses, error) {
	r, rep, err := read.File(path, opt)
	if err != nil {
		return nil, err
	}
	log.Printf("read %s: %d models x %d items, %d answers (%s)", path, r.NumModels(), r.NumItems(), r.Len(), rep.Format)
	return r, nil
}

// ReadAnswers reads the responses file path as the commands do and gives
// each chosen model (default: every model with an answer) its answers to
// f's items: the models, and for each the item indices, the scores (the
// fraction correct: 0 or 1, k/n of k-of-n cells, or a graded score read
// with opt.Graded) and the trials behind each (nil when the file has one
// trial per cell).
func (f *Fit) ReadAnswers(path string, opt read.Options, models []string, log progress.Logf) ([]string, [][]int, [][]float64, [][]float64, error) {
	r, err := ReadResponses(path, opt, log)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	models, items, cells, err := f.cellsOf(r, path, models, log)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	ys, trials := make([][]float64, len(models)), make([][]float64, len(models))
	for k, cs := range cells {
		for _, c := range cs {
			ys[k] = append(ys[k], r.ScoreAt(int(c)))
			if r.Weighted() {
				trials[k] = append(trials[k], float64(r.TrialsAt(int(c))))
			}
		}
	}
	if !r.Weighted() {
		trials = nil
	}
	return models, items, ys, trials, nil
}
