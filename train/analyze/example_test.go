package analyze_test

import (
	"fmt"

	"github.com/jeirt/jeirt/train/analyze"
)

// Four questions in two subjects, their directions along two axes (lengths
// do not matter): spherical k-means finds the subjects exactly.
func ExampleDirections() {
	q := []float32{
		1, 0.1, // algebra
		3, 0.2, // algebra
		0.1, 2, // history
		-0.1, 0.5, // history
	}
	res, err := analyze.Directions{Seed: 1}.Run(q, 2, []string{"algebra", "algebra", "history", "history"})
	if err != nil {
		panic(err)
	}
	fmt.Printf("k = %d, ARI %.2f, NMI %.2f, cluster of the first item nearest %s\n", res.K, res.ARI, res.NMI, res.Clusters[res.Assign[0]].Nearest[0].Category)
	// Output: k = 2, ARI 1.00, NMI 1.00, cluster of the first item nearest algebra
}
