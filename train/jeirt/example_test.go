package jeirt_test

import (
	"context"
	"fmt"

	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/eval"
	"github.com/jeirt/jeirt/train/jeirt"
)

// Train JE-IRT on responses simulated from the JE-IRT model itself (40
// models, 300 items with 16-dimensional features) and score the held-out
// cells.
func ExampleTrainer() {
	r, truth, err := synth.Generate(synth.Options{Kind: "jeirt", Models: 40, Items: 300, FeatureDim: 16, EmbedDim: 4, Seed: 1})
	if err != nil {
		panic(err)
	}
	var features []float32
	for _, x := range truth.Features {
		features = append(features, x...)
	}
	train, val, test, err := eval.Split(r, eval.SplitOptions{Val: 0.1, Test: 0.1, Seed: 42})
	if err != nil {
		panic(err)
	}
	fit, err := jeirt.Trainer{Dim: 4, Epochs: 20, LR: 1e-2, Seed: 1}.Fit(context.Background(), train, val, features, 16)
	if err != nil {
		panic(err)
	}
	h := fit.History
	fmt.Println("validation loss fell:", h[len(h)-1].ValLoss < h[0].ValLoss)
	m := eval.Score(jeirt.PredictJEIRT(fit.Model, test), test.Label)
	fmt.Println("test accuracy above the majority label:", m.Accuracy > eval.Score(eval.MajorityPredict(train, test), test.Label).Accuracy)
	// Output:
	// validation loss fell: true
	// test accuracy above the majority label: true
}
