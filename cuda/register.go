//go:build jeirtcuda

package cuda

import (
	"github.com/jeirt/jeirt/cuda/internal/cbmm"
	"github.com/jeirt/jeirt/cuda/internal/gpu"
	"github.com/jeirt/jeirt/cuda/internal/jeirtstep"
	"github.com/jeirt/jeirt/train/backend"
)

// The GPU implementations of train's device seams, as device "cuda". The
// device is opened on first use, so registering costs nothing.
func init() {
	backend.Register(backend.CUDA, cbmm.Backend{Device: backend.CUDA, Open: gpu.Open})
	backend.Register(backend.CUDA, jeirtstep.Backend(gpu.Open))
	backend.Register(backend.CUDA, encoderSeam{open: gpu.Open, dense: gpuDense, reduced: gpuReducedDense})
}
