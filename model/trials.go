package model

import "math"

// Cells of several trials and graded scores (see Responses).

// Weighted reports whether some cell is not one 0/1 trial: r has trials or
// successes of its own. Binary data is never weighted.
func (r *Responses) Weighted() bool { return r.Trials != nil || r.Successes != nil }

// TrialsAt is the number of trials n of cell c (1 for binary data).
func (r *Responses) TrialsAt(c int) int {
	if r.Trials == nil {
		return 1
	}
	return int(r.Trials[c])
}

// SuccessesAt is the successes k of cell c (its label for binary data).
func (r *Responses) SuccessesAt(c int) float64 {
	if r.Successes == nil {
		return float64(r.Label[c])
	}
	return r.Successes[c]
}

// ScoreAt is the observed fraction k/n of cell c, in [0, 1] (its label for
// binary data).
func (r *Responses) ScoreAt(c int) float64 {
	if !r.Weighted() {
		return float64(r.Label[c])
	}
	return r.SuccessesAt(c) / float64(r.TrialsAt(c))
}

// RoundedLabel is the rounded outcome of k successes in n trials: 1 when
// k/n ≥ ½ (at least half the trials, or a score of at least 0.5), else 0.
// It is the label binary metrics (accuracy, AUC) and binary-only methods see.
func RoundedLabel(k float64, n int) uint8 {
	if 2*k >= float64(n) {
		return 1
	}
	return 0
}

// TotalTrials is Σn over the cells.
func (r *Responses) TotalTrials() int64 {
	if r.Trials == nil {
		return int64(r.Len())
	}
	var t int64
	for _, n := range r.Trials {
		t += int64(n)
	}
	return t
}

// GradedCells counts the cells whose successes are not a whole number (a
// score strictly between 0 and 1 of one trial, or a fractional total).
func (r *Responses) GradedCells() int {
	g := 0
	for _, k := range r.Successes {
		if k != math.Trunc(k) {
			g++
		}
	}
	return g
}

// AppendCell appends a cell (m, i) with k successes of n trials, allocating
// Trials and Successes (filled for the cells before it) the first time a
// cell is not one 0/1 trial. The label is the rounded outcome.
func (r *Responses) AppendCell(m, i int32, k float64, n int) {
	binary := n == 1 && (k == 0 || k == 1)
	if !binary && r.Trials == nil && r.Successes == nil {
		r.Trials = make([]int32, len(r.Label), cap(r.Label))
		r.Successes = make([]float64, len(r.Label), cap(r.Label))
		for c, y := range r.Label {
			r.Trials[c], r.Successes[c] = 1, float64(y)
		}
	}
	if !binary && r.Trials == nil {
		r.Trials = make([]int32, len(r.Label), cap(r.Label))
		for c := range r.Trials {
			r.Trials[c] = 1
		}
	}
	if !binary && r.Successes == nil {
		r.Successes = make([]float64, len(r.Label), cap(r.Label))
		for c, y := range r.Label {
			r.Successes[c] = float64(y)
		}
	}
	r.Model = append(r.Model, m)
	r.Item = append(r.Item, i)
	r.Label = append(r.Label, RoundedLabel(k, n))
	if r.Trials != nil {
		r.Trials = append(r.Trials, int32(n))
	}
	if r.Successes != nil {
		r.Successes = append(r.Successes, k)
	}
}

// AppendFrom appends cell c of src as cell (m, i) of r, with its trials and
// successes.
func (r *Responses) AppendFrom(m, i int32, src *Responses, c int) {
	if !src.Weighted() && !r.Weighted() {
		r.Model = append(r.Model, m)
		r.Item = append(r.Item, i)
		r.Label = append(r.Label, src.Label[c])
		return
	}
	r.AppendCell(m, i, src.SuccessesAt(c), src.TrialsAt(c))
}

// Normalize drops Trials when every cell has one trial, and Successes as
// well when every cell is then a 0/1 answer, so that data that are binary
// after all are stored (and fitted) as binary data; Label is set to each
// cell's rounded outcome.
func (r *Responses) Normalize() {
	if !r.Weighted() {
		return
	}
	one, whole := true, true
	for c := range r.Label {
		n, k := r.TrialsAt(c), r.SuccessesAt(c)
		r.Label[c] = RoundedLabel(k, n)
		one = one && n == 1
		whole = whole && (k == 0 || k == float64(n))
	}
	if one {
		r.Trials = nil
		if whole {
			r.Successes = nil
		}
	}
}
