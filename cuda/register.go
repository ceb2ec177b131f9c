//go:build jeirtcuda

package cuda

import "github.com/jeirt/jeirt/train/backend"

// The GPU implementations of train's device seams, as device "cuda". The
// device is opened on first use, so registering costs nothing.
func init() {
	backend.Register(backend.CUDA, cbmmBackend{device: backend.CUDA, open: openDevice})
	backend.Register(backend.CUDA, jeirtBackend(openDevice))
	backend.Register(backend.CUDA, encoderSeam{open: openDevice, dense: gpuDense, reduced: gpuReducedDense})
}
