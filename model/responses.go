// Package model holds what jeirt learns from and what it learns, and the math
// every layer shares: item-level responses, IRT and JE-IRT parameters, the
// IRT response functions (Family: the 1PL, 2PL and 3PL, named only there),
// scores, typed setting errors, and the JE-IRT link, adapter forward and
// loss written once.
package model

import (
	"fmt"
	"sort"
)

// Responses is a set of observed (model, item) cells, each a number of
// successes out of a number of trials. Unobserved cells are simply absent: they
// are missing, never zero. Cells are stored compactly as int32 indices and one
// byte per label, so millions of cells cost a few bytes each.
//
// Cell c says that model Models[Model[c]] answered item Items[Item[c]] correctly
// when Label[c] == 1 and incorrectly when Label[c] == 0. That is all binary data
// (one 0/1 answer per cell) needs, and Trials and Successes are then nil.
// A cell of several trials (a question sampled n times, k of them correct) or
// a graded score (partial credit in [0, 1], a fraction of one trial's success)
// has its trials n_c = Trials[c] (1 when Trials is nil) and successes k_c =
// Successes[c] (Label[c] when Successes is nil), 0 ≤ k_c ≤ n_c; Label[c] is
// then the rounded outcome, 1 when k_c/n_c ≥ ½ (RoundedLabel).
type Responses struct {
	Models []string // model names, index = model id
	Items  []string // item ids, index = item index

	// ItemText and ItemGroup are optional: nil, or one entry per item ("" when unknown).
	ItemText  []string
	ItemGroup []string

	Model []int32 // per cell: model index
	Item  []int32 // per cell: item index
	Label []uint8 // per cell: 1 correct, 0 incorrect (the rounded outcome of a cell of several trials or a score)

	// Trials and Successes are nil for binary data (every cell one 0/1 trial).
	Trials    []int32   // per cell: trials n ≥ 1; nil: one trial per cell
	Successes []float64 // per cell: successes k in [0, n], fractional for a graded score; nil: Label

	byModel, byItem *Index
}

// Index groups cells by model or by item in compressed-row form: the cells of
// row r are Cells[Start[r]:Start[r+1]], in increasing cell order.
type Index struct {
	Start []int32
	Cells []int32
}

// Row returns the cells of row r.
func (ix *Index) Row(r int) []int32 { return ix.Cells[ix.Start[r]:ix.Start[r+1]] }

// NumModels is the number of models (rows of Y).
func (r *Responses) NumModels() int { return len(r.Models) }

// NumItems is the number of items (columns of Y).
func (r *Responses) NumItems() int { return len(r.Items) }

// Len is the number of observed cells.
func (r *Responses) Len() int { return len(r.Label) }

// Density is the fraction of the N x J cells that are observed.
func (r *Responses) Density() float64 {
	n := float64(r.NumModels()) * float64(r.NumItems())
	if n == 0 {
		return 0
	}
	return float64(r.Len()) / n
}

// MeanCorrect is the fraction of observed cells that are correct; with trials
// or scores, the successes over the trials of all cells (Σk/Σn).
func (r *Responses) MeanCorrect() float64 {
	if r.Len() == 0 {
		return 0
	}
	if r.Weighted() {
		var k, n float64
		for c := range r.Label {
			k += r.SuccessesAt(c)
			n += float64(r.TrialsAt(c))
		}
		return k / n
	}
	s := 0
	for _, l := range r.Label {
		s += int(l)
	}
	return float64(s) / float64(r.Len())
}

// ByModel returns the cells grouped by model, built on first use.
func (r *Responses) ByModel() *Index {
	if r.byModel == nil {
		r.byModel = buildIndex(r.Model, r.NumModels())
	}
	return r.byModel
}

// ByItem returns the cells grouped by item, built on first use.
func (r *Responses) ByItem() *Index {
	if r.byItem == nil {
		r.byItem = buildIndex(r.Item, r.NumItems())
	}
	return r.byItem
}

// Invalidate drops the cached indexes; call it after changing cells in place.
func (r *Responses) Invalidate() { r.byModel, r.byItem = nil, nil }

func buildIndex(key []int32, rows int) *Index {
	ix := &Index{Start: make([]int32, rows+1), Cells: make([]int32, len(key))}
	for _, k := range key {
		ix.Start[k+1]++
	}
	for i := 0; i < rows; i++ {
		ix.Start[i+1] += ix.Start[i]
	}
	next := make([]int32, rows)
	copy(next, ix.Start[:rows])
	for c, k := range key {
		ix.Cells[next[k]] = int32(c)
		next[k]++
	}
	return ix
}

// ModelAccuracy returns each model's fraction correct over its observed cells
// (NaN for a model with none); with trials or scores, its successes over its
// trials (Σk/Σn).
func (r *Responses) ModelAccuracy() []float64 { return r.rowMeans(r.ByModel()) }

// ItemAccuracy returns each item's fraction correct over its observed cells
// (NaN for an item with none); with trials or scores, Σk/Σn over its cells.
func (r *Responses) ItemAccuracy() []float64 { return r.rowMeans(r.ByItem()) }

func (r *Responses) rowMeans(ix *Index) []float64 {
	out := make([]float64, len(ix.Start)-1)
	weighted := r.Weighted()
	for i := range out {
		row := ix.Row(i)
		if len(row) == 0 {
			out[i] = nan()
			continue
		}
		if weighted {
			var k, n float64
			for _, c := range row {
				k += r.SuccessesAt(int(c))
				n += float64(r.TrialsAt(int(c)))
			}
			out[i] = k / n
			continue
		}
		s := 0
		for _, c := range row {
			s += int(r.Label[c])
		}
		out[i] = float64(s) / float64(len(row))
	}
	return out
}

// Subset returns the responses restricted to the given cells, keeping every
// model and item name (so indices stay comparable with r).
func (r *Responses) Subset(cells []int32) *Responses {
	s := &Responses{Models: r.Models, Items: r.Items, ItemText: r.ItemText, ItemGroup: r.ItemGroup,
		Model: make([]int32, len(cells)), Item: make([]int32, len(cells)), Label: make([]uint8, len(cells))}
	for k, c := range cells {
		s.Model[k], s.Item[k], s.Label[k] = r.Model[c], r.Item[c], r.Label[c]
	}
	if r.Trials != nil {
		s.Trials = make([]int32, len(cells))
		for k, c := range cells {
			s.Trials[k] = r.Trials[c]
		}
	}
	if r.Successes != nil {
		s.Successes = make([]float64, len(cells))
		for k, c := range cells {
			s.Successes[k] = r.Successes[c]
		}
	}
	return s
}

// ModelIndex returns the index of a model name, or -1.
func (r *Responses) ModelIndex(name string) int { return indexOf(r.Models, name) }

// ItemIndex returns the index of an item id, or -1.
func (r *Responses) ItemIndex(id string) int { return indexOf(r.Items, id) }

func indexOf(names []string, name string) int {
	for i, n := range names {
		if n == name {
			return i
		}
	}
	return -1
}

// Validate checks that every cell refers to a known model and item and has a
// 0/1 label, and that trials and successes, where given, are possible (n ≥ 1,
// 0 ≤ k ≤ n, finite) with the label their rounded outcome.
func (r *Responses) Validate() error {
	if len(r.Model) != len(r.Item) || len(r.Item) != len(r.Label) {
		return fmt.Errorf("responses: %d model, %d item and %d label entries", len(r.Model), len(r.Item), len(r.Label))
	}
	if r.Trials != nil && len(r.Trials) != len(r.Label) || r.Successes != nil && len(r.Successes) != len(r.Label) {
		return fmt.Errorf("responses: %d trial and %d success entries for %d cells", len(r.Trials), len(r.Successes), len(r.Label))
	}
	for c := 0; r.Weighted() && c < len(r.Label); c++ {
		n, k := r.TrialsAt(c), r.SuccessesAt(c)
		if n < 1 || !(k >= 0 && k <= float64(n)) || r.Label[c] != RoundedLabel(k, n) {
			return fmt.Errorf("responses: cell %d has %v successes of %d trials and label %d (want 1 ≤ trials, 0 ≤ successes ≤ trials, label the rounded outcome)", c, k, n, r.Label[c])
		}
	}
	if r.ItemText != nil && len(r.ItemText) != len(r.Items) {
		return fmt.Errorf("responses: %d item texts for %d items", len(r.ItemText), len(r.Items))
	}
	if r.ItemGroup != nil && len(r.ItemGroup) != len(r.Items) {
		return fmt.Errorf("responses: %d item groups for %d items", len(r.ItemGroup), len(r.Items))
	}
	for c := range r.Label {
		if r.Model[c] < 0 || int(r.Model[c]) >= len(r.Models) || r.Item[c] < 0 || int(r.Item[c]) >= len(r.Items) || r.Label[c] > 1 {
			return fmt.Errorf("responses: cell %d (model %d, item %d, label %d) is out of range", c, r.Model[c], r.Item[c], r.Label[c])
		}
	}
	return nil
}

// SortCells orders cells by (model, item); readers call it so that output is
// deterministic whatever the input order.
func (r *Responses) SortCells() {
	perm := make([]int32, r.Len())
	for i := range perm {
		perm[i] = int32(i)
	}
	sort.Slice(perm, func(a, b int) bool {
		ca, cb := perm[a], perm[b]
		if r.Model[ca] != r.Model[cb] {
			return r.Model[ca] < r.Model[cb]
		}
		return r.Item[ca] < r.Item[cb]
	})
	s := r.Subset(perm)
	r.Model, r.Item, r.Label, r.Trials, r.Successes = s.Model, s.Item, s.Label, s.Trials, s.Successes
	r.Invalidate()
}
