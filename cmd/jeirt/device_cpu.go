//go:build !jeirtcuda

package main

import "errors"

// cudaBuilt says whether this binary has the GPU backend compiled in.
const cudaBuilt = false

func probeDevice() (string, error) {
	return "", errors.New("this jeirt was built without CUDA (the CUDA runner is jeirt-cuda, built by scripts/build-cuda.sh)")
}
