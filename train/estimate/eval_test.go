package estimate

import (
	"context"
	"sort"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/irt"
)

// TestEvalTailsAndSplits: Eval reports each split's held-out models to
// OnSplit (the same models in every split count: 20% of 40), and its
// lowest and highest tenths pool exactly the held-out estimates of the 4
// least and 4 most accurate models, each counted once per split it is
// held out in and per estimate.
func TestEvalTailsAndSplits(t *testing.T) {
	r, _, err := synth.Generate(synth.Options{Kind: "2pl", Models: 40, Items: 120, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	acc := make(map[string]float64, len(r.Models))
	for i, m := range r.Models {
		row := r.ByModel().Row(i)
		for _, c := range row {
			acc[m] += r.ScoreAt(int(c)) / float64(len(row))
		}
	}
	byAcc := append([]string(nil), r.Models...)
	sort.SliceStable(byAcc, func(a, b int) bool { return acc[byAcc[a]] < acc[byAcc[b]] })
	low, high := map[string]bool{}, map[string]bool{}
	for k := 0; k < 4; k++ {
		low[byAcc[k]], high[byAcc[len(byAcc)-1-k]] = true, true
	}
	var wantLow, wantHigh, splits int
	ev := Eval{Fitter: irt.CBMM{Prior: model.DefaultPrior}, Budget: 12, Rules: []string{Random}, Estimators: []string{Mean, IRT}, Seeds: 3, Seed: 7,
		OnSplit: func(split int, held []string) error {
			if split != splits || len(held) != 8 {
				t.Errorf("split %d: told split %d with %d held-out models, want split %d with 8", splits, split, len(held), splits)
			}
			splits++
			seen := map[string]bool{}
			for _, m := range held {
				if seen[m] {
					t.Errorf("split %d: model %s held out twice", split, m)
				}
				seen[m] = true
				if low[m] {
					wantLow++
				}
				if high[m] {
					wantHigh++
				}
			}
			return nil
		}}
	cells, _, err := ev.Run(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if splits != 3 {
		t.Fatalf("OnSplit called %d times, want 3", splits)
	}
	for _, c := range cells {
		if c.Low.N != wantLow || c.High.N != wantHigh {
			t.Errorf("%s/%s: tails of %d and %d estimates, want %d and %d", c.Rule, c.Estimator, c.Low.N, c.High.N, wantLow, wantHigh)
		}
		for _, tl := range []Tail{c.Low, c.High} {
			if tl.N > 0 && !(tl.MAE >= 0 && tl.MAE < 0.5 && tl.Coverage >= 0 && tl.Coverage <= 1) {
				t.Errorf("%s/%s: tail MAE %v coverage %v out of range", c.Rule, c.Estimator, tl.MAE, tl.Coverage)
			}
		}
	}
}
