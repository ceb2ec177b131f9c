package onboard

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/progress"
	"github.com/jeirt/jeirt/train/eval"
	"github.com/jeirt/jeirt/train/jeirt"
)

// AddModelsOptions configures AddModels.
type AddModelsOptions struct {
	Onboard
	// Models are the models of the responses to place on the map; nil means
	// every model with at least one cell.
	Models []string
	// Fraction of each model's cells used for the fit, drawn at random
	// (seeded by Seed and the model's name); the rest are held out and scored.
	// 0 means 1 (all cells, nothing held out).
	Fraction float64
	Seed     int64
	// Replace allows refitting a model the checkpoint already has; its old
	// row is then scored on the same held-out cells as the "joint" reference.
	Replace bool
	// ScoreOwnItems scores each model on the items of its cells in the
	// responses (fitted and held out), so that its score is comparable with
	// its mean over them, instead of on all of the map's items.
	ScoreOwnItems bool
	Log           progress.Logf // progress lines; nil is silent
}

// AddModelsResult is the new checkpoint and what went into it.
type AddModelsResult struct {
	Checkpoint *checkpoint.Checkpoint
	Added      []checkpoint.AddedModel
	NewItems   int // items of the fitted cells the checkpoint had not seen, now added to it
}

// AddModels fits a row of M for each chosen model of r with everything else
// of ck frozen (see Onboard) and returns a new checkpoint with those rows
// appended (or, with Replace, overwritten in place). Items of the fitted
// cells that ck has never seen are encoded with ck's encoder (its
// fingerprint must match the manifest) and added to the checkpoint's items.
// ck itself is not modified.
func AddModels(ctx context.Context, ck *checkpoint.Checkpoint, r *model.Responses, opt AddModelsOptions) (*AddModelsResult, error) {
	log := opt.Log
	f := opt.Fraction
	if f == 0 {
		f = 1
	}
	if !(f > 0 && f <= 1) {
		return nil, fmt.Errorf("add-model: fraction %v is not in (0, 1]", opt.Fraction)
	}
	m := ck.Model
	modelRow := nameIndex(m.Models)
	byModel := r.ByModel()

	// The models to fit, in the order given (or of the file).
	var todo []int
	if opt.Models == nil {
		for i := range r.Models {
			if len(byModel.Row(i)) > 0 {
				todo = append(todo, i)
			}
		}
		if len(todo) == 0 {
			return nil, fmt.Errorf("add-model: the responses have no cells")
		}
	} else {
		seen := map[string]bool{}
		for _, name := range opt.Models {
			i := r.ModelIndex(name)
			if i < 0 || len(byModel.Row(i)) == 0 {
				return nil, fmt.Errorf("add-model: model %q has no responses in the file", name)
			}
			if seen[name] {
				return nil, fmt.Errorf("add-model: model %q is named twice", name)
			}
			seen[name] = true
			todo = append(todo, i)
		}
	}
	if !opt.Replace {
		var dup []string
		for _, i := range todo {
			if _, ok := modelRow[r.Models[i]]; ok {
				dup = append(dup, r.Models[i])
			}
		}
		if len(dup) > 0 {
			return nil, model.FieldErrorf("Replace", "add-model: %s already in the checkpoint (pass {Replace} to refit, or {Models} to choose others): %s",
				plural(len(dup), "model is", "models are"), quoteList(dup, 5))
		}
	}

	// Cells to fit and to hold out, per model.
	fitCells := make([][]int32, len(todo))
	heldCells := make([][]int32, len(todo))
	usedItem := make([]bool, r.NumItems())
	for k, i := range todo {
		fitCells[k], heldCells[k] = fractionSplit(byModel.Row(i), f, opt.Seed, r.Models[i])
		for _, c := range byModel.Row(i) {
			usedItem[r.Item[c]] = true
		}
	}
	q, newItems, _, err := jeirt.Questions(ctx, ck, r, usedItem, log)
	if err != nil {
		return nil, err
	}
	prior, err := opt.Onboard.PriorFor(m)
	if err != nil {
		return nil, err
	}

	// The new model: a copy of ck's with rows and items appended.
	out := cloneJEIRT(m)
	res := &AddModelsResult{NewItems: len(newItems)}
	for _, j := range newItems {
		out.Items = append(out.Items, r.Items[j])
		out.Q = append(out.Q, q[j]...)
		if out.R != nil {
			out.R = append(out.R, make([]float32, m.Dim)...)
		}
	}
	outItem := nameIndex(out.Items)
	for k, i := range todo {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		name := r.Models[i]
		data := &RowData{Dim: m.Dim}
		for _, c := range fitCells[k] {
			data.AddCell(q[r.Item[c]], r, int(c))
		}
		row, info, err := opt.Onboard.FitRow(data, prior)
		if err != nil {
			return nil, fmt.Errorf("add-model: %s: %w", name, err)
		}
		a := checkpoint.AddedModel{Name: name, FitCells: len(fitCells[k]), HeldCells: len(heldCells[k]), Iterations: info.Iterations, Converged: info.Converged}
		row32 := float32Row(row)
		for _, v := range row32 {
			if v-v != 0 {
				return nil, fmt.Errorf("add-model: %s: the fitted row of M holds %v after %d Newton iterations: the fit diverged on %d answers (a stronger prior keeps it finite)",
					name, v, info.Iterations, len(fitCells[k]))
			}
		}
		answered := make(map[int]float64, len(fitCells[k]))
		for _, c := range fitCells[k] {
			answered[outItem[r.Items[r.Item[c]]]] = r.ScoreAt(int(c))
		}
		var on []int // nil: all of the map's items
		if opt.ScoreOwnItems {
			for _, c := range byModel.Row(i) {
				on = append(on, outItem[r.Items[r.Item[c]]])
			}
		}
		if a.Score, err = opt.Onboard.Score(out, on, data, prior, answered, 0.95); err != nil {
			return nil, fmt.Errorf("add-model: %s: %w", name, err)
		}
		old, had := modelRow[name]
		if len(heldCells[k]) > 0 {
			held := r.Subset(heldCells[k])
			s := eval.ScoreResponses(rowProbs(row32, q, held), held).Scores()
			a.Heldout = &s
			mm := eval.ScoreResponses(meanRate(r, fitCells[k], held.Len()), held).Scores()
			a.ModelMean = &mm
			if had {
				js := eval.ScoreResponses(rowProbs(m.ModelEmbedding(old), q, held), held).Scores()
				a.Joint = &js
			}
		}
		if had {
			a.Replaced = true
			copy(out.M[old*m.Dim:(old+1)*m.Dim], row32)
		} else {
			out.Models = append(out.Models, name)
			out.M = append(out.M, row32...)
		}
		res.Added = append(res.Added, a)
		log.Printf("add-model: %s: %d cells fitted, %d held out, Newton %d iterations (converged %v)",
			name, a.FitCells, a.HeldCells, info.Iterations, info.Converged)
	}
	man := ck.Manifest
	res.Checkpoint = &checkpoint.Checkpoint{Manifest: man, Model: out}
	return res, out.Check()
}

// fractionSplit shuffles a model's cells with a generator seeded by seed and
// the model's name, and returns the first round(f·n) (at least one) to fit
// and the rest to hold out, each in cell order.
func fractionSplit(cells []int32, f float64, seed int64, name string) (fit, held []int32) {
	n := len(cells)
	k := int(math.Round(f * float64(n)))
	k = max(min(k, n), 1)
	if k == n {
		return append([]int32(nil), cells...), nil
	}
	h := fnv.New64a()
	h.Write([]byte(name))
	rng := rand.New(rand.NewPCG(uint64(seed), h.Sum64()))
	perm := rng.Perm(n)
	fit, held = make([]int32, 0, k), make([]int32, 0, n-k)
	inFit := make([]bool, n)
	for _, p := range perm[:k] {
		inFit[p] = true
	}
	for t, c := range cells {
		if inFit[t] {
			fit = append(fit, c)
		} else {
			held = append(held, c)
		}
	}
	return fit, held
}

// rowProbs predicts the cells of r with model row m, from the item embeddings q.
func rowProbs(m []float32, q [][]float32, r *model.Responses) []float64 {
	p := make([]float64, r.Len())
	for c := range p {
		p[c] = model.Sigmoid(model.Logit(q[r.Item[c]], m))
	}
	return p
}

// meanRate predicts n cells with the smoothed accuracy (correct+1)/(n+2) of
// cells (successes and trials for cells of several trials or graded scores).
func meanRate(r *model.Responses, cells []int32, n int) []float64 {
	var s, t float64
	for _, c := range cells {
		s += r.SuccessesAt(int(c))
		t += float64(r.TrialsAt(int(c)))
	}
	rate := (s + 1) / (t + 2)
	p := make([]float64, n)
	for k := range p {
		p[k] = rate
	}
	return p
}

func cloneJEIRT(m *model.JEIRT) *model.JEIRT {
	c := *m
	c.M = append([]float32(nil), m.M...)
	c.Q = append([]float32(nil), m.Q...)
	c.Models = append([]string(nil), m.Models...)
	c.Items = append([]string(nil), m.Items...)
	if m.R != nil {
		c.R = append([]float32(nil), m.R...)
	}
	return &c
}

func nameIndex(names []string) map[string]int {
	ix := make(map[string]int, len(names))
	for i, n := range names {
		ix[n] = i
	}
	return ix
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// quoteList renders up to max names quoted, then "and N more".
func quoteList(names []string, limit int) string {
	s := append([]string(nil), names...)
	sort.Strings(s)
	var b strings.Builder
	for k, n := range s {
		if k == limit {
			fmt.Fprintf(&b, " and %d more", len(s)-limit)
			break
		}
		if k > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", n)
	}
	return b.String()
}
