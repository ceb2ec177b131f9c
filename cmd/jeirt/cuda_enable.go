//go:build jeirtcuda

package main

// A jeirtcuda build registers the GPU as device "cuda" (see package cuda).
import _ "github.com/jeirt/jeirt/cuda"
