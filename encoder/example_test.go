package encoder_test

import (
	"context"
	"fmt"

	"github.com/jeirt/jeirt/encoder"
)

// Open picks an encoder from a spec; the weightless hash encoder needs no files.
func ExampleOpen() {
	enc, err := encoder.Open("hash")
	if err != nil {
		panic(err)
	}
	v, err := enc.Encode(context.Background(), []string{
		"What is the capital city of France?",
		"Which city is the capital of France?",
		"How many legs does a spider have?",
	})
	if err != nil {
		panic(err)
	}
	dot := func(a, b []float32) (s float32) {
		for i := range a {
			s += a[i] * b[i]
		}
		return s
	}
	fmt.Println(enc.Dim(), enc.Fingerprint())
	fmt.Printf("paraphrase %.2f, unrelated %.2f\n", dot(v[0], v[1]), dot(v[0], v[2]))
	// Output:
	// 384 hash/v1/fnv1a64/dim=384
	// paraphrase 0.75, unrelated 0.03
}
