package route_test

import (
	"fmt"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/route"
)

// Route a question to the model most likely to answer it: P(correct) =
// sigmoid(q·m/‖q‖ − ‖q‖) for each model row m of a JE-IRT checkpoint.
func ExampleRouter() {
	m := &model.JEIRT{Dim: 2, Models: []string{"coder", "writer"}, M: []float32{2, 0, 0, 2}}
	rt := &route.Router{Model: m}
	c := rt.Route([]float32{1, 0}) // a coding question: along the first axis, ‖q‖ = 1
	fmt.Printf("%s P = %.3f\n", m.Models[c.Model], c.P)
	// Output:
	// coder P = 0.731
}
