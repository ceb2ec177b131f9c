package irt_test

import (
	"context"
	"fmt"

	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/eval"
	"github.com/jeirt/jeirt/train/irt"
)

// Fit a 2PL model to simulated results of 50 models on 400 items with 20% of
// the cells missing, and compare the ability ranking with raw accuracy.
func ExampleCBMM() {
	r, truth, _ := synth.Generate(synth.Options{Kind: "2pl", Models: 50, Items: 400, Missing: 0.2, Seed: 1})
	fit, err := irt.CBMM{Accelerate: true}.Fit(context.Background(), r)
	if err != nil {
		panic(err)
	}
	h := fit.LossHistory
	fmt.Println("converged:", fit.Converged, "loss fell:", h[len(h)-1] < h[0])
	fmt.Printf("Spearman(θ, true θ) > 0.95: %v\n", eval.Spearman(fit.Theta, truth.Theta) > 0.95)
	fmt.Printf("Kendall τ(θ, accuracy) > 0.8: %v\n", eval.KendallTau(fit.Theta, r.ModelAccuracy()) > 0.8)
	// Output:
	// converged: true loss fell: true
	// Spearman(θ, true θ) > 0.95: true
	// Kendall τ(θ, accuracy) > 0.8: true
}
