package estimate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/irt"
)

// rank2Responses are models of abilities (θ1, θ2) ~ N(0, I) answering J
// items of a rank-2 2PL bank, the first half measuring θ1 and the second
// θ2 (slopes 1.5, intercepts N(0, 1)): a bank that no rank-1 curve fits.
// full is each model's mean answer.
func rank2Responses(models, J int, rng *rand.Rand, prefix string) (r *model.Responses, full []float64) {
	r = &model.Responses{}
	for j := 0; j < J; j++ {
		r.Items = append(r.Items, fmt.Sprintf("q%d", j))
	}
	d := make([]float64, J)
	drng := rand.New(rand.NewPCG(41, 42)) // the same bank every call
	for j := range d {
		d[j] = drng.NormFloat64()
	}
	for m := 0; m < models; m++ {
		th := [2]float64{rng.NormFloat64(), rng.NormFloat64()}
		r.Models = append(r.Models, fmt.Sprintf("%s%d", prefix, m))
		var sum float64
		for j := 0; j < J; j++ {
			y := 0.0
			if rng.Float64() < model.Sigmoid(1.5*th[2*j/J]+d[j]) {
				y = 1
			}
			sum += y
			r.AppendCell(int32(m), int32(j), y, 1)
		}
		full = append(full, sum/float64(J))
	}
	return r, full
}

// TestMisfitCoverage: a rank-1 fit of answers from a rank-2 bank is wrong
// for most models, by how their two abilities differ. p-IRT from the
// first 40 items (of the first half (items that measure θ1 alone, as a
// selection unaware of the second dimension may choose them) then misses the
// full score by the model's θ2; its interval, widened by the misfit that
// the answered items show against the fitted curve beyond their binomial
// noise, covers at least 85% of the true scores (the interval of θ's
// posterior and the unanswered items' noise alone covers about half).
// gp-IRT and blend lean on the answered items, which are not a sample of
// the bank here: they are logged, not held to it.
func TestMisfitCoverage(t *testing.T) {
	const J, K = 120, 40
	rng := rand.New(rand.NewPCG(43, 44))
	train, _ := rank2Responses(150, J, rng, "m")
	fitter := irt.CBMM{Rank: 1, Prior: model.DefaultPrior, MaxIter: 300}
	fit, err := fitter.Fit(context.Background(), train)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewScorer(fit, 0.95, DefaultPriorDF)
	if err != nil {
		t.Fatal(err)
	}
	s.GPVar = AnswerVariance(train)
	if s.GPBias, s.ResidSD, err = ValidationBias(context.Background(), fitter, train, 0.95); err != nil {
		t.Fatal(err)
	}
	test, full := rank2Responses(200, J, rng, "new")
	cover := map[string]int{}
	for i := range test.Models {
		var a Answers
		for _, c := range test.ByModel().Row(i) {
			if j := int(test.Item[c]); j < K {
				a.Items, a.Y = append(a.Items, j), append(a.Y, test.ScoreAt(int(c)))
			}
		}
		for _, est := range []string{IRT, GPIRT, Blend} {
			sc, err := s.Estimate(est, a, nil)
			if err != nil {
				t.Fatal(err)
			}
			if sc[0].Lo <= full[i] && full[i] <= sc[0].Hi {
				cover[est]++
			}
		}
	}
	t.Logf("ResidSD %.4f; coverage of %d: %v", s.ResidSD, len(full), cover)
	if c := float64(cover[IRT]) / float64(len(full)); c < 0.85 || c > 0.995 {
		t.Errorf("p-IRT: 95%% intervals cover %.1f%% of the true scores, want 85-99.5%%", 100*c)
	}
}
