// Package catrun runs jeirt irt cat and jeirt add-model --fit end to end:
// read a fit folder and answers, run adaptive tests (train/cat) or place
// models from their answers, write the folder of package model/catfile or
// rows of the fit's abilities.csv, and the lines the commands print.
package catrun

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strings"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/catfile"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/irtfit"
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
	// usable, when not nil, marks the items that may be asked.
	usable []bool
}

// LoadFit reads the fit folder dir as a bank of its items. The prior is the
// fit's: N(0, I) for a marginal-ML fit (its θ ~ N(0, 1)), otherwise the
// normal with the mean and population covariance of the fitted models'
// abilities (models without an observed cell left out): N(0, 1) at rank 1
// in the standard gauge of joint ML.
func LoadFit(dir string) (*Fit, error) { return loadFit(dir, false) }

// LoadScoringFit is LoadFit that also takes a 3PL fit, whose lower
// asymptotes the bank does not carry: for jeirt irt estimate, which scores
// from the fit's items (package train/estimate), not from the bank.
func LoadScoringFit(dir string) (*Fit, error) { return loadFit(dir, true) }

func loadFit(dir string, guessing bool) (*Fit, error) {
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
			return nil, fmt.Errorf("%s:%d: item %q: %s", itemsCSV, ie.Item+2, model.Clip(fit.Items[ie.Item]), ie.Reason())
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
	f.PriorText = fmt.Sprintf("normal with the mean and covariance of the %d fitted models' abilities: N(%s, %s)", len(theta)/rk, vecText(f.Prior.Mean), vecText(f.Prior.Cov))
	return f, nil
}

func vecText(v []float64) string {
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

// answersOf gives each chosen model of r its answers to the fit's items
// (item index -> answer), in the file's item order, and says on log how
// many answers it had to leave out (items the fit does not have).
func (f *Fit) answersOf(r *model.Responses, path string, models []string, log model.Logf) ([]string, [][]int, [][]uint8, error) {
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

// cellsOf is answersOf's models and items with the cells of r that hold
// each answer.
func (f *Fit) cellsOf(r *model.Responses, path string, models []string, log model.Logf) ([]string, [][]int, [][]int32, error) {
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
		return fmt.Errorf("%s: %d of the fit's %d items have no group (first: %s)", path, len(missing), f.Bank.NumItems(), model.Clip(missing[0]))
	}
	return nil
}

// groupOf is item j's group name ("" without groups).
func (f *Fit) groupOf(j int) string {
	if f.Bank.Group == nil {
		return ""
	}
	return f.Bank.Groups[f.Bank.Group[j]]
}

// modelSeed is the Random rule's seed for a model: the run's seed and the
// model's name, so a model's draw does not depend on the others.
func modelSeed(seed int64, name string) uint64 {
	h := fnv.New64a()
	io.WriteString(h, name)
	return h.Sum64() ^ uint64(seed)
}

// checkOut refuses an existing output unless force.
func checkOut(out string, force bool) error {
	if out == "" {
		return nil
	}
	// The output rule's own check: an empty folder counts as absent.
	_, err := fileio.CheckOutput(fileio.Output{Path: out, Folder: true, Force: force})
	return err
}

// readAnswers reads a responses file as the commands do.
func readAnswers(path string, opt read.Options, log model.Logf) (*model.Responses, error) {
	r, rep, err := read.File(path, opt)
	if err != nil {
		return nil, err
	}
	log.Printf("read %s: %d models x %d items, %d answers (%s)", path, r.NumModels(), r.NumItems(), r.Len(), rep.Format)
	return r, nil
}

// sortedKeys lists a count map as "a 3, b 1".
func sortedKeys(m map[string]int) string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
