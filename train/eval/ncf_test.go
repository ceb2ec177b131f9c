package eval

import (
	"context"
	"slices"
	"testing"
)

// On new questions whose answers follow their text, NCF's log loss is
// below the model mean's (all that item_mean and the 2PL can offer there),
// and a second fit with the same seed predicts the same, bit for bit.
func TestNCFNewQuestions(t *testing.T) {
	r, feat := textLowRank(30, 100, 12, 3)
	trainR, valR, testR, err := Split(r, SplitOptions{Val: 0.15, Test: 0.2, Seed: 7, By: "item"})
	if err != nil {
		t.Fatal(err)
	}
	nc := NCF{Features: feat, FeatDim: 12, Seed: 1, MaxEpochs: 8, BatchCells: 128}
	res, err := nc.Fit(context.Background(), trainR, valR, testR)
	if err != nil {
		t.Fatal(err)
	}
	got := ScoreResponses(res.Pred, testR)
	mean := ScoreResponses(ModelMeanPredict(trainR, testR), testR)
	t.Logf("ncf: %d epochs, best %d (val loss %.4f): log loss %.4f accuracy %.4f; model_mean %.4f %.4f", res.Epochs, res.BestEpoch, res.ValLoss, got.LogLoss, got.Accuracy, mean.LogLoss, mean.Accuracy)
	if !(got.LogLoss < mean.LogLoss-0.05) {
		t.Errorf("ncf log loss %.4f is not below model_mean's %.4f", got.LogLoss, mean.LogLoss)
	}
	again, err := nc.Fit(context.Background(), trainR, valR, testR)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Pred, again.Pred) {
		t.Errorf("two fits with seed 1 differ")
	}
	if _, err := (NCF{Features: feat[:10], FeatDim: 12}).Fit(context.Background(), trainR, valR, testR); err == nil || err.Error() != "ncf: 10 feature values for 100 items of width 12" {
		t.Errorf("short features: %v", err)
	}
}
