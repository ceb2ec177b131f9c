package eval

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/jeirt/jeirt/model"
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

// NCF's hand-written backward pass (LayerNorm, GELU, the split first layer)
// agrees with central differences of its forward pass on every tensor.
func TestNCFGradient(t *testing.T) {
	const N, J, D, dm = 3, 4, 5, 2
	rng := rand.New(rand.NewPCG(1, 2))
	r := &model.Responses{Models: []string{"a", "b", "c"}, Items: []string{"q0", "q1", "q2", "q3"}}
	for i := 0; i < N; i++ {
		for j := 0; j < J; j++ {
			r.Model, r.Item, r.Label = append(r.Model, int32(i)), append(r.Item, int32(j)), append(r.Label, uint8((i+j)%2))
		}
	}
	feat := make([]float32, J*D)
	for k := range feat {
		feat[k] = float32(rng.NormFloat64())
	}
	net := newNCFNet(N, J, D, dm)
	for k := range net.theta {
		net.theta[k] = float32(0.5 * rng.NormFloat64())
	}
	c := make([]float32, r.Len()) // f(θ) = Σ_b c_b z_b
	for k := range c {
		c[k] = float32(rng.NormFloat64())
	}
	items, cells, crow := []int{0, 1, 2, 3}, make([]int32, r.Len()), []int32{0, 1, 2, 3}
	for k := range cells {
		cells[k] = int32(k)
	}
	var p ncfPass
	f := func() float64 {
		A, dA := make([]float32, N*ncfH1), make([]float32, N*ncfH1)
		var s float64
		net.batchGrad(&p, net.like(nil), feat, items, cells, r, crow, A, dA, nil, func(z, dz []float32) {
			for b := range z {
				s += float64(c[b] * z[b])
			}
		})
		return s
	}
	grad := net.like(nil)
	A, dA := make([]float32, N*ncfH1), make([]float32, N*ncfH1)
	net.batchGrad(&p, grad, feat, items, cells, r, crow, A, dA, nil, func(z, dz []float32) { copy(dz, c) })
	for name, off := range map[string]int{"E": 0, "We": N * dm, "Wx": N*dm + ncfH1*dm, "b1": N*dm + ncfH1*(dm+D), "g1": N*dm + ncfH1*(dm+D+1),
		"W2": N*dm + ncfH1*(dm+D+3), "g2": N*dm + ncfH1*(dm+D+3) + ncfH2*ncfH1 + ncfH2, "w3": len(net.theta) - ncfH2 - 1, "b3": len(net.theta) - 1} {
		for _, k := range []int{off, min(off+1, len(net.theta)-1)} {
			const h = 1e-2
			v := net.theta[k]
			net.theta[k] = v + h
			up := f()
			net.theta[k] = v - h
			down := f()
			net.theta[k] = v
			num, ana := (up-down)/(2*h), float64(grad.theta[k])
			if math.Abs(num-ana) > 2e-2*math.Max(math.Abs(num), math.Abs(ana))+2e-3 {
				t.Errorf("%s[%d]: analytic %.5f, central difference %.5f", name, k-off, ana, num)
			}
		}
	}
}
