package eval

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
)

func benchResponses() *model.Responses {
	r := &model.Responses{Models: []string{"m0", "m1", "m2"}}
	for j := 0; j < 30; j++ {
		r.Items = append(r.Items, fmt.Sprintf("q%d", j))
		r.ItemGroup = append(r.ItemGroup, []string{"arc", "gsm", "mmlu"}[j%3])
	}
	for i := range r.Models {
		for j := range r.Items {
			r.Model, r.Item, r.Label = append(r.Model, int32(i)), append(r.Item, int32(j)), append(r.Label, uint8((i+j)%2))
		}
	}
	return r
}

func TestSplitByBenchmark(t *testing.T) {
	r := benchResponses()
	tr, va, te, err := Split(r, SplitOptions{By: "benchmark", Hold: []string{"gsm"}, Val: 0.1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := HeldBenchmarks(te); fmt.Sprint(got) != "[gsm]" || te.Len() != 30 {
		t.Errorf("test: benchmarks %v, %d cells (want [gsm], 30)", got, te.Len())
	}
	for _, part := range []*model.Responses{tr, va} {
		for _, j := range part.Item {
			if r.ItemGroup[j] == "gsm" {
				t.Fatalf("a held-out item %s in train or validation", r.Items[j])
			}
		}
	}
	// Validation: 10% of the 20 other items, whole (3 cells each).
	if va.Len() != 2*3 || tr.Len() != 18*3 {
		t.Errorf("val %d cells, train %d cells (want 6 and 54)", va.Len(), tr.Len())
	}
	// Drawn at random: one of three benchmarks, the same for the same seed.
	_, _, te1, err := Split(r, SplitOptions{By: "benchmark", Test: 0.3, Val: 0.1, Seed: 7})
	_, _, te2, _ := Split(r, SplitOptions{By: "benchmark", Test: 0.3, Val: 0.1, Seed: 7})
	if err != nil || len(HeldBenchmarks(te1)) != 1 || fmt.Sprint(HeldBenchmarks(te1)) != fmt.Sprint(HeldBenchmarks(te2)) {
		t.Errorf("random hold: %v %v (%v)", HeldBenchmarks(te1), HeldBenchmarks(te2), err)
	}
	for _, tc := range []struct {
		opt  SplitOptions
		want string
	}{
		{SplitOptions{By: "benchmark", Hold: []string{"nope"}, Val: 0.1}, `hold "nope" is not a benchmark of the data (have arc, gsm, mmlu)`},
		{SplitOptions{By: "benchmark", Hold: []string{"arc", "gsm", "mmlu"}, Val: 0.1}, "leaves nothing"},
	} {
		if _, _, _, err := Split(r, tc.opt); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.opt, err, tc.want)
		}
	}
	r.ItemGroup = nil
	if _, _, _, err := Split(r, SplitOptions{By: "benchmark", Hold: []string{"gsm"}}); err == nil || !strings.Contains(err.Error(), "category or benchmark column") {
		t.Errorf("no groups: %v", err)
	}
}
