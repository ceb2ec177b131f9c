package irt

import (
	"slices"
	"testing"

	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/backend"
)

// TestLayoutCellsEqualsSerial checks the parallel layout against
// backend.NewCBMMProblem on sorted cells, for several thread counts.
func TestLayoutCellsEqualsSerial(t *testing.T) {
	r, _, err := synth.Generate(synth.Options{Kind: "2pl", Models: 53, Items: 9000, Missing: 0.3, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	r.SortCells()
	want := backend.NewCBMMProblem(r)
	for _, threads := range []int{1, 2, 3, 8} {
		got, err := layoutCells(r, threads)
		if err != nil {
			t.Fatal(err)
		}
		if got.N != want.N || got.J != want.J || !slices.Equal(got.ItemStart, want.ItemStart) || !slices.Equal(got.Cells, want.Cells) {
			t.Fatalf("%d threads: layout differs from backend.NewCBMMProblem", threads)
		}
	}
	// A cell out of range is the same error as Validate's.
	r.Item[r.Len()/2] = int32(r.NumItems())
	if _, err := layoutCells(r, 2); err == nil || err.Error() != r.Validate().Error() {
		t.Fatalf("out-of-range cell: got %v, want %v", err, r.Validate())
	}
}
