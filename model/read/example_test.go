package read_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/jeirt/jeirt/model/read"
)

// Read a long CSV of item-level results; the format is decided from the header.
func ExampleFile() {
	dir, _ := os.MkdirTemp("", "jeirt-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "responses.csv")
	os.WriteFile(path, []byte("model,item,correct\ngpt-a,q1,1\ngpt-a,q2,0\nclaude-b,q1,1\n"), 0o644)
	r, rep, err := read.File(path, read.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println(rep.Format, r.Models, r.Items, r.Len(), "cells")
	fmt.Printf("accuracy of %s: %.2f\n", r.Models[0], r.ModelAccuracy()[0])
	// Output:
	// long [gpt-a claude-b] [q1 q2] 3 cells
	// accuracy of gpt-a: 0.50
}
