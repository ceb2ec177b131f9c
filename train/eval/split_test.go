package eval

import (
	"reflect"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/synth"
)

func splitData(t *testing.T) *model.Responses {
	t.Helper()
	r, _, err := synth.Generate(synth.Options{Kind: "2pl", Models: 40, Items: 250, Missing: 0.2, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func cellKeys(r *model.Responses) []int64 {
	out := make([]int64, r.Len())
	for c := range out {
		out[c] = int64(r.Model[c])<<32 | int64(r.Item[c])
	}
	return out
}

func TestSplitDisjointAndComplete(t *testing.T) {
	r := splitData(t)
	for _, by := range []string{"cell", "model", "item"} {
		tr, va, te, err := Split(r, SplitOptions{Val: 0.1, Test: 0.2, Seed: 1, By: by})
		if err != nil {
			t.Fatal(err)
		}
		if tr.Len()+va.Len()+te.Len() != r.Len() {
			t.Errorf("%s: %d+%d+%d cells, want %d", by, tr.Len(), va.Len(), te.Len(), r.Len())
		}
		seen := map[int64]int{}
		for k, s := range []*model.Responses{tr, va, te} {
			if !reflect.DeepEqual(s.Models, r.Models) || !reflect.DeepEqual(s.Items, r.Items) {
				t.Errorf("%s: split %d lost the full name lists", by, k)
			}
			for c, key := range cellKeys(s) {
				if _, dup := seen[key]; dup {
					t.Fatalf("%s: cell %d of split %d is also in split %d", by, c, k, seen[key])
				}
				seen[key] = k
				if want := r.Label[findCell(r, s.Model[c], s.Item[c])]; s.Label[c] != want {
					t.Fatalf("%s: label changed", by)
				}
			}
		}
		// Held-out units are whole: no model (item) has cells in two splits.
		if by != "cell" {
			owner := map[int32]int{}
			for k, s := range []*model.Responses{tr, va, te} {
				for c := range s.Label {
					u := s.Model[c]
					if by == "item" {
						u = s.Item[c]
					}
					if o, ok := owner[u]; ok && o != k {
						t.Fatalf("%s %d has cells in splits %d and %d", by, u, o, k)
					}
					owner[u] = k
				}
			}
			units := map[int]int{}
			for _, k := range owner {
				units[k]++
			}
			total := 40
			if by == "item" {
				total = 250
			}
			if units[2] != int(0.2*float64(total)+0.5) || units[1] != int(0.1*float64(total)+0.5) {
				t.Errorf("%s: %d val and %d test units of %d", by, units[1], units[2], total)
			}
		} else if te.Len() != int(0.2*float64(r.Len())+0.5) || va.Len() != int(0.1*float64(r.Len())+0.5) {
			t.Errorf("cell: %d val, %d test of %d", va.Len(), te.Len(), r.Len())
		}
	}
}

func findCell(r *model.Responses, m, i int32) int {
	for c := range r.Label {
		if r.Model[c] == m && r.Item[c] == i {
			return c
		}
	}
	return -1
}

func TestSplitReproducible(t *testing.T) {
	r := splitData(t)
	a, _, at, _ := Split(r, SplitOptions{Val: 0.1, Test: 0.1, Seed: 42, By: "item"})
	b, _, bt, _ := Split(r, SplitOptions{Val: 0.1, Test: 0.1, Seed: 42, By: "item"})
	c, _, _, _ := Split(r, SplitOptions{Val: 0.1, Test: 0.1, Seed: 43, By: "item"})
	if !reflect.DeepEqual(cellKeys(a), cellKeys(b)) || !reflect.DeepEqual(cellKeys(at), cellKeys(bt)) {
		t.Error("same seed gave different splits")
	}
	if reflect.DeepEqual(cellKeys(a), cellKeys(c)) {
		t.Error("seeds 42 and 43 gave the same split")
	}
}

func TestSplitErrors(t *testing.T) {
	r := splitData(t)
	cases := []struct {
		opt  SplitOptions
		want string
	}{
		{SplitOptions{Val: 0.5, Test: 0.5}, "split: val 0.5 and test 0.5 must be non-negative with val+test < 1"},
		{SplitOptions{Val: -0.1}, "split: val -0.1 and test 0 must be non-negative with val+test < 1"},
		{SplitOptions{Test: 0.1, By: "row"}, `split: unknown by "row" (want cell, model, item or benchmark)`},
	}
	for _, c := range cases {
		if _, _, _, err := Split(r, c.opt); err == nil || err.Error() != c.want {
			t.Errorf("%+v: %v, want %s", c.opt, err, c.want)
		}
	}
	tiny := &model.Responses{Models: []string{"a", "b"}, Items: []string{"q"}, Model: []int32{0, 1}, Item: []int32{0, 0}, Label: []uint8{1, 0}}
	_, _, _, err := Split(tiny, SplitOptions{Val: 0.3, Test: 0.3, By: "model"})
	if want := "split: 2 models are too few to hold out 1 for validation and 1 for test and still train"; err == nil || err.Error() != want {
		t.Errorf("tiny: %v", err)
	}
}

// A split holds out cells, never trials: each cell of several trials (or a
// graded score) lands whole in one part, and the parts add up to the data.
func TestSplitKeepsTrials(t *testing.T) {
	r, _, err := synth.Generate(synth.Options{Kind: "2pl", Models: 30, Items: 40, Trials: 6, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, by := range []string{"cell", "model", "item"} {
		tr, va, te, err := Split(r, SplitOptions{Val: 0.2, Test: 0.2, Seed: 1, By: by})
		if err != nil {
			t.Fatal(err)
		}
		type key struct{ m, i int32 }
		seen := map[key]bool{}
		var trials int64
		for _, p := range []*model.Responses{tr, va, te} {
			if p.Trials == nil {
				t.Fatalf("by %s: a part lost its trials", by)
			}
			trials += p.TotalTrials()
			for c := range p.Label {
				k := key{p.Model[c], p.Item[c]}
				if seen[k] {
					t.Fatalf("by %s: cell (%d, %d) in two parts", by, k.m, k.i)
				}
				seen[k] = true
			}
			if err := p.Validate(); err != nil {
				t.Fatal(err)
			}
		}
		if len(seen) != r.Len() || trials != r.TotalTrials() {
			t.Errorf("by %s: %d cells, %d trials in the parts; the data have %d and %d", by, len(seen), trials, r.Len(), r.TotalTrials())
		}
	}
}
