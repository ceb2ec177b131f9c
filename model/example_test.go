package model_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/jeirt/jeirt/model"
)

// Read a long CSV of item-level results; the format is decided from the header.
func ExampleReadFile() {
	dir, _ := os.MkdirTemp("", "jeirt-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "responses.csv")
	os.WriteFile(path, []byte("model,item,correct\ngpt-a,q1,1\ngpt-a,q2,0\nclaude-b,q1,1\n"), 0o644)
	r, rep, err := model.ReadFile(path, model.ReadOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println(rep.Format, r.Models, r.Items, r.Len(), "cells")
	fmt.Printf("accuracy of %s: %.2f\n", r.Models[0], r.ModelAccuracy()[0])
	// Output:
	// long [gpt-a claude-b] [q1 q2] 3 cells
	// accuracy of gpt-a: 0.50
}

// Route a question to the model most likely to answer it: P(correct) =
// sigmoid(q·m/‖q‖ − ‖q‖) for each model row m of a JE-IRT checkpoint.
func ExampleRouter() {
	m := &model.JEIRT{Dim: 2, Models: []string{"coder", "writer"}, M: []float32{2, 0, 0, 2}}
	rt := &model.Router{Model: m}
	c := rt.Route([]float32{1, 0}) // a coding question: along the first axis, ‖q‖ = 1
	fmt.Printf("%s P = %.3f\n", m.Models[c.Model], c.P)
	// Output:
	// coder P = 0.731
}
