package encoder_test

import (
	"context"
	"fmt"

	"github.com/jeirt/jeirt/encoder"
)

// A tfidf encoder is fitted on the training questions, then projects any
// text into the same space: questions on one topic land close together.
func ExampleTFIDF() {
	ctx := context.Background()
	train := []string{
		"sort a list of integers in python",
		"python list index out of range error",
		"reverse a python list in place",
		"the court heard the contract appeal",
		"appeal of a contract ruling in court",
		"the judge dismissed the court appeal",
	}
	enc := &encoder.TFIDF{Width: 2}
	if err := enc.Fit(ctx, train); err != nil {
		fmt.Println(err)
		return
	}
	v, _ := enc.Encode(ctx, []string{"how to sort a python list", "a contract appeal", "reverse a list in python"})
	cos := func(a, b []float32) float32 { return a[0]*b[0] + a[1]*b[1] }
	fmt.Printf("dim %d\n", enc.Dim())
	fmt.Printf("python vs contract: %.2f\n", cos(v[0], v[1]))
	fmt.Printf("python vs python:   %.2f\n", cos(v[0], v[2]))
	// Output:
	// dim 2
	// python vs contract: 0.02
	// python vs python:   1.00
}
