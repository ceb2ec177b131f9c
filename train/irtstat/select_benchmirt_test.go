package irtstat

import (
	"fmt"
	"math"
	"testing"

	"github.com/jeirt/jeirt/model"
)

// 40 items at four difficulty levels (−3, −1, 1, 3), ten each, with
// discrimination rising with the item index within a level: keeping 20%
// with 4 bins takes the two sharpest items of every level.
func TestBenchMIRTSelect(t *testing.T) {
	fit := &model.IRT{Rank: 1, Sigma: 1}
	for j := 0; j < 40; j++ {
		level, k := j/10, j%10
		a := 0.5 + 0.1*float64(k)
		b := -3 + 2*float64(level) + 0.01*float64(k) // difficulty; d = −a·b
		fit.Items = append(fit.Items, fmt.Sprintf("q%02d", j))
		fit.A = append(fit.A, a)
		fit.B = append(fit.B, -a*b)
	}
	items, at, err := BenchMIRTSelect(fit, 0.2, 4)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(items) != "[9 8 19 18 29 28 39 38]" {
		t.Errorf("kept %v, want the two sharpest of each level", items)
	}
	if math.Abs(at[0]-(-3+0.09)) > 1e-12 {
		t.Errorf("difficulty of the first kept item %v", at[0])
	}
	// A zero slope has no difficulty and is never kept.
	fit.A[9] = 0
	items, _, _ = BenchMIRTSelect(fit, 1, 4)
	for _, j := range items {
		if j == 9 {
			t.Error("kept an item with a = 0")
		}
	}
	if len(items) != 39 {
		t.Errorf("keep 1: %d items, want 39", len(items))
	}
	if _, _, err := BenchMIRTSelect(fit, 0, 4); err == nil {
		t.Error("keep 0: no error")
	}
}
