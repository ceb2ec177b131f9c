package estimate

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/cat"
)

// TestFloorCeiling: models far below and far above the fitted ones (θ = ∓3
// where the fit's population prior is N(0, 0.5²)), 40 random answers of
// 300: the prior pulls their θ toward the middle, and so each model-based
// estimate up from a near-0 answered mean or down from a near-1 one. The
// estimate never moves that way beyond the one-standard-error Wilson
// bound of the answered mean (the evidence), its error is at most twice
// the answered mean's (without the bound p-IRT's was 4.5 times, 0.11), and
// its interval covers at least 90% of the true scores (without: 0-7%).
func TestFloorCeiling(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	f := simBank(300, rng)
	prior := cat.Prior{Mean: []float64{0}, Cov: []float64{0.25}}
	s := &Scorer{Fit: f, Prior: prior, PriorDF: DefaultPriorDF, ResidSD: 0.03, GPBias: 0.03, GPVar: 0.2}
	if err := s.Prepare(); err != nil {
		t.Fatal(err)
	}
	const models, K = 100, 40
	for _, th := range []float64{-3, 3} {
		mae := map[string]float64{}
		cover := map[string]int{}
		var meanErr float64
		for m := 0; m < models; m++ {
			y := make([]float64, len(f.B))
			var full float64
			for j := range y {
				if rng.Float64() < model.Sigmoid(th*f.A[j]+f.B[j]) {
					y[j] = 1
				}
				full += y[j] / float64(len(y))
			}
			var a Answers
			var obs float64
			for _, j := range rng.Perm(len(y))[:K] {
				a.Items, a.Y = append(a.Items, j), append(a.Y, y[j])
				obs += y[j]
			}
			meanErr += math.Abs(obs/K-full) / models
			lo, hi := wilson(obs/K, K, 1)
			N := float64(len(y))
			for _, est := range []string{IRT, GPIRT, Blend} {
				sc, err := s.Estimate(est, a, nil)
				if err != nil {
					t.Fatal(err)
				}
				x := sc[0].Score
				if th < 0 && x > (obs+(N-K)*hi)/N+1e-12 || th > 0 && x < (obs+(N-K)*lo)/N-1e-12 {
					t.Errorf("θ %v, %s: %.4f from %v of %d answered, beyond the Wilson bound [%.4f, %.4f]", th, est, x, obs, K, lo, hi)
				}
				mae[est] += math.Abs(x-full) / models
				if sc[0].Lo <= full && full <= sc[0].Hi {
					cover[est]++
				}
			}
		}
		t.Logf("θ %v: answered mean's MAE %.4f; MAE %v; coverage of %d %v", th, meanErr, mae, models, cover)
		for _, est := range []string{IRT, GPIRT, Blend} {
			if mae[est] > 2*meanErr {
				t.Errorf("θ %v, %s: MAE %.4f, the answered mean's %.4f", th, est, mae[est], meanErr)
			}
			if cover[est] < 90 {
				t.Errorf("θ %v, %s: intervals cover %d of %d true scores, want at least 90", th, est, cover[est], models)
			}
		}
	}
}
