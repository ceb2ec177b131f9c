package irtguard_test

import (
	"context"
	"fmt"

	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/irt"
	"github.com/jeirt/jeirt/train/irtguard"
)

// A guarded 2PL fit: it also starts from its 1PL's fit, so its loss is
// never above the 1PL's, and converged means the certificate held.
func ExampleGuard() {
	r, _, _ := synth.Generate(synth.Options{Kind: "2pl", Models: 50, Items: 100, Seed: 1})
	res, err := irtguard.Guard{CBMM: irt.CBMM{Accelerate: true}}.Fit(context.Background(), r)
	if err != nil {
		panic(err)
	}
	loss := res.Fit.LossHistory[len(res.Fit.LossHistory)-1]
	for _, s := range res.Starts {
		fmt.Printf("start %s, at or above the written loss: %v\n", s.Name, s.Loss >= loss)
	}
	fmt.Println("nested:", res.Nested, "- no worse than it:", loss <= res.NestedLoss)
	fmt.Println("certified:", !res.Fit.Converged || res.Certificate.MaxGradient <= res.GradTol)
	// Output:
	// start svd, at or above the written loss: true
	// start 1pl, at or above the written loss: true
	// nested: 1pl - no worse than it: true
	// certified: true
}
