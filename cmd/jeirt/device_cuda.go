//go:build jeirtcuda

package main

import "github.com/jeirt/jeirt/cuda"

const cudaBuilt = true

func probeDevice() (string, error) { return cuda.Name() }
