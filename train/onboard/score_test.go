package onboard

import (
	"context"
	"math"
	"testing"

	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/synth"
)

// Models onboarded from 10% of their answers get a score on all 800 items
// near their true one (their mean over all 800), nearer than the mean of
// the answers they were fitted on, with intervals that cover it.
func TestAddModelsScore(t *testing.T) {
	r, truth, err := synth.Generate(synth.Options{Kind: "jeirt", Models: 90, Items: 800, Seed: 4, EmbedDim: 8})
	if err != nil {
		t.Fatal(err)
	}
	var keep []int
	for i := 40; i < 90; i++ {
		keep = append(keep, i)
	}
	ck := &checkpoint.Checkpoint{Model: checkpointFromTruth(r, truth, keep)}
	res, err := AddModels(context.Background(), ck, r, AddModelsOptions{Models: r.Models[:40], Fraction: 0.1, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	acc := r.ModelAccuracy()
	var maeScore, maeMean float64
	cover := 0
	for k, a := range res.Added {
		s := a.Score
		if s == nil || s.Items != 800 || s.Answered != 80 || !(s.Lo <= s.Score && s.Score <= s.Hi) {
			t.Fatalf("%s: score %+v", a.Name, s)
		}
		fit, _ := fractionSplit(r.ByModel().Row(k), 0.1, 3, a.Name)
		var m float64
		for _, c := range fit {
			m += r.ScoreAt(int(c)) / float64(len(fit))
		}
		maeScore += math.Abs(s.Score-acc[k]) / 40
		maeMean += math.Abs(m-acc[k]) / 40
		if s.Lo <= acc[k] && acc[k] <= s.Hi {
			cover++
		}
	}
	t.Logf("MAE: score %.4f, the fitted answers' mean %.4f; %d of 40 intervals cover", maeScore, maeMean, cover)
	if maeScore > 0.9*maeMean || cover < 34 {
		t.Errorf("score MAE %.4f (answers' mean %.4f), coverage %d of 40", maeScore, maeMean, cover)
	}
}

// With ScoreOwnItems a model that answered only some of the map's items is
// scored on those (comparable with its mean over them); without, on all.
func TestAddModelsScoreOwnItems(t *testing.T) {
	r, truth, err := synth.Generate(synth.Options{Kind: "jeirt", Models: 30, Items: 200, Missing: 0.5, Seed: 6, EmbedDim: 8})
	if err != nil {
		t.Fatal(err)
	}
	ck := &checkpoint.Checkpoint{Model: checkpointFromTruth(r, truth, []int{5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19})}
	byModel := r.ByModel()
	for _, own := range []bool{false, true} {
		res, err := AddModels(context.Background(), ck, r, AddModelsOptions{Models: r.Models[:5], Fraction: 0.2, Seed: 1, ScoreOwnItems: own})
		if err != nil {
			t.Fatal(err)
		}
		for k, a := range res.Added {
			want := 200
			if own {
				want = len(byModel.Row(k))
			}
			if a.Score.Items != want || a.Score.Answered != a.FitCells || want == 200 && own {
				t.Errorf("own items %v: %s scored on %d items (%d answered), want %d (%d)", own, a.Name, a.Score.Items, a.Score.Answered, want, a.FitCells)
			}
		}
	}
}
