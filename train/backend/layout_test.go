package backend

import (
	"slices"
	"testing"

	"github.com/jeirt/jeirt/model/synth"
)

// The blocked transpose for sorted cells gives the layout of the plain
// counting sort.
func TestNewCBMMProblemSortedEqualsScatter(t *testing.T) {
	r, _, err := synth.Generate(synth.Options{Kind: "2pl", Models: 37, Items: 5000, Missing: 0.3, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	r.SortCells()
	if modelRows(r) == nil {
		t.Fatal("sorted cells not recognised")
	}
	got := NewCBMMProblem(r)
	// Reverse the cells: no longer sorted, so laid out by the scatter; then
	// compare item by item as sets, since within an item the order follows r.
	rev := r.Subset(func() []int32 {
		p := make([]int32, r.Len())
		for k := range p {
			p[k] = int32(r.Len() - 1 - k)
		}
		return p
	}())
	if modelRows(rev) != nil {
		t.Fatal("reversed cells taken as sorted")
	}
	want := NewCBMMProblem(rev)
	if !slices.Equal(got.ItemStart, want.ItemStart) {
		t.Fatal("item starts differ")
	}
	for j := 0; j < got.J; j++ {
		a := got.Cells[got.ItemStart[j]:got.ItemStart[j+1]]
		b := slices.Clone(want.Cells[want.ItemStart[j]:want.ItemStart[j+1]])
		slices.Reverse(b)
		if !slices.Equal(a, b) {
			t.Fatalf("item %d: cells %v, want %v", j, a, b)
		}
	}
}
