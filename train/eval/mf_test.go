package eval

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/synth"
)

func splitSynth(t *testing.T, opt synth.Options, by string) (trainR, valR, testR *model.Responses, truth *synth.Truth) {
	t.Helper()
	r, truth, err := synth.Generate(opt)
	if err != nil {
		t.Fatal(err)
	}
	trainR, valR, testR, err = Split(r, SplitOptions{Val: 0.15, Test: 0.2, Seed: 7, By: by})
	if err != nil {
		t.Fatal(err)
	}
	return trainR, valR, testR, truth
}

// On rank-3 data MF recovers what the means cannot: its test log loss is
// below item_mean's and model_mean's, and a second fit with the same seed
// predicts the same, bit for bit.
func TestMFLowRank(t *testing.T) {
	trainR, valR, testR, _ := splitSynth(t, synth.Options{Kind: "mirt", Rank: 3, Models: 80, Items: 60, Seed: 5}, "cell")
	mf := MF{Seed: 1}
	res, err := mf.Fit(context.Background(), trainR, valR, testR)
	if err != nil {
		t.Fatal(err)
	}
	got := ScoreResponses(res.Pred, testR)
	item := ScoreResponses(ItemMeanPredict(trainR, testR), testR)
	mean := ScoreResponses(ModelMeanPredict(trainR, testR), testR)
	t.Logf("mf d=%d λ=%g (%d steps): log loss %.4f, accuracy %.4f; item_mean %.4f, %.4f; model_mean %.4f", res.Dim, res.Decay, res.Steps, got.LogLoss, got.Accuracy, item.LogLoss, item.Accuracy, mean.LogLoss)
	if !(got.LogLoss < item.LogLoss-0.02 && got.LogLoss < mean.LogLoss-0.02) {
		t.Errorf("mf log loss %.4f is not below item_mean's %.4f and model_mean's %.4f", got.LogLoss, item.LogLoss, mean.LogLoss)
	}
	again, err := mf.Fit(context.Background(), trainR, valR, testR)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Pred, again.Pred) || again.Dim != res.Dim || again.Decay != res.Decay {
		t.Errorf("two fits with seed 1 differ (d %d, %d)", res.Dim, again.Dim)
	}
	other, err := MF{Seed: 2}.Fit(context.Background(), trainR, valR, testR)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(res.Pred, other.Pred) {
		t.Errorf("seeds 1 and 2 predict the same")
	}
}

// textLowRank simulates answers that follow the questions' text: features
// x_j ~ N(0, I_D), question vectors v_j = A·x_j of rank 3, model vectors
// u_i ~ N(0, I_3), P = σ(u_i·v_j), every cell observed.
func textLowRank(N, J, D int, seed uint64) (*model.Responses, []float32) {
	rng := rand.New(rand.NewPCG(seed, 1))
	const r = 3
	A := make([]float64, r*D)
	for k := range A {
		A[k] = rng.NormFloat64() / math.Sqrt(float64(D)) * 1.5
	}
	feat := make([]float32, J*D)
	v := make([]float64, J*r)
	for j := 0; j < J; j++ {
		for k := 0; k < D; k++ {
			feat[j*D+k] = float32(rng.NormFloat64())
		}
		for a := 0; a < r; a++ {
			for k := 0; k < D; k++ {
				v[j*r+a] += A[a*D+k] * float64(feat[j*D+k])
			}
		}
	}
	resp := &model.Responses{}
	for i := 0; i < N; i++ {
		resp.Models = append(resp.Models, fmt.Sprintf("m%d", i))
	}
	for j := 0; j < J; j++ {
		resp.Items = append(resp.Items, fmt.Sprintf("q%d", j))
	}
	for i := 0; i < N; i++ {
		u := [r]float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
		for j := 0; j < J; j++ {
			z := u[0]*v[j*r] + u[1]*v[j*r+1] + u[2]*v[j*r+2]
			var y uint8
			if rng.Float64() < model.Sigmoid(z) {
				y = 1
			}
			resp.Model, resp.Item, resp.Label = append(resp.Model, int32(i)), append(resp.Item, int32(j)), append(resp.Label, y)
		}
	}
	return resp, feat
}

// On new questions (a split by item) MF's text form predicts from the
// question's encoder vector: on answers that follow the text, its log loss
// is below the model mean's, which is all item_mean and the 2PL can offer
// there.
func TestMFTextNewQuestions(t *testing.T) {
	r, feat := textLowRank(40, 150, 12, 3)
	trainR, valR, testR, err := Split(r, SplitOptions{Val: 0.15, Test: 0.2, Seed: 7, By: "item"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := MF{Text: true, Features: feat, FeatDim: 12, Seed: 1}.Fit(context.Background(), trainR, valR, testR)
	if err != nil {
		t.Fatal(err)
	}
	got := ScoreResponses(res.Pred, testR)
	mean := ScoreResponses(ModelMeanPredict(trainR, testR), testR)
	t.Logf("mf text d=%d λ=%g (%d steps): log loss %.4f accuracy %.4f; model_mean %.4f %.4f", res.Dim, res.Decay, res.Steps, got.LogLoss, got.Accuracy, mean.LogLoss, mean.Accuracy)
	if !(got.LogLoss < mean.LogLoss-0.05) {
		t.Errorf("mf (text) log loss %.4f is not below model_mean's %.4f", got.LogLoss, mean.LogLoss)
	}
	if _, err := (MF{Text: true, Features: feat[:10], FeatDim: 12}).Fit(context.Background(), trainR, valR, testR); err == nil || err.Error() != "mf: 10 feature values for 150 items of width 12" {
		t.Errorf("short features: %v", err)
	}
}
