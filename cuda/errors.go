package cuda

import "github.com/jeirt/jeirt/cuda/internal/gpu"

// Errors a caller can test for with errors.Is; the wrapping message says
// which allocation, kernel or copy failed.
var (
	ErrNoDevice    = gpu.ErrNoDevice
	ErrOutOfMemory = gpu.ErrOutOfMemory
	ErrLaunch      = gpu.ErrLaunch
)
