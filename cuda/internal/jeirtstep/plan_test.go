package jeirtstep

import (
	"slices"
	"testing"

	"github.com/jeirt/jeirt/train/backend"
)

// TestPlanResidualWeights: a step's residual penalty is weighted
// λ·(pairs of item j)/B once per item slot, slots in order of first
// appearance, so that the device adds λ·mean over pairs of ‖r_j‖² once per
// item, as train's CPU step does.
func TestPlanResidualWeights(t *testing.T) {
	// Rows 0 and 2 are item 5 (per-pair batching repeats a question), row 1
	// item 7; the pairs use rows 0, 1, 2, 2 and 1.
	p := &backend.JEIRTParams{NumModels: 1, NumItems: 8, ResidualL2: 0.5, R: make([]float32, 8)}
	var pl jeirtPlan
	pl.add(p, []int32{5, 7, 5}, nil, []int32{0, 1, 2, 2, 1}, make([]int32, 5), make([]float32, 5), 0)
	st := pl.steps[0]
	if st.slots != 2 || !slices.Equal(pl.ints[st.itemOf:st.itemOf+2], []int32{5, 7}) {
		t.Fatalf("%d slots, items %v; want 2, [5 7]", st.slots, pl.ints[st.itemOf:st.itemOf+st.slots])
	}
	if got, want := pl.floats[st.coef:st.coef+2], []float32{0.5 * 3 / 5, 0.5 * 2 / 5}; !slices.Equal(got, want) {
		t.Fatalf("weights %v, want %v", got, want)
	}
}
