//go:build jeirtcuda

package cuda

import (
	"github.com/jeirt/jeirt/cuda/internal/gpu"
	"github.com/jeirt/jeirt/encoder"
)

// OpenEncoder moves the forward pass of enc (a *transformer.BERT, MPNet or
// ModernBERT, as encoder.Open returns for a model folder) to the GPU: tokens,
// batches, pooling and fingerprint stay the CPU encoder's; the linear layers
// run in float32 on cuBLAS (loaded at run time) or, without it, on the sgemm
// kernel (see DenseProducts), everything else on the kernels of
// kernels/encoder.cu. SetPrecision switches the linear layers to TF32 or
// bfloat16 tensor cores. Close frees its device memory.
func OpenEncoder(enc encoder.Encoder) (*Encoder, error) {
	g, err := gpu.Open()
	if err != nil {
		return nil, err
	}
	e, err := newEncoder(g, gpuDense(g), enc)
	if err != nil {
		return nil, err
	}
	e.reduced = func(p Precision) (dense, error) { return gpuReducedDense(g, p) }
	return e, nil
}

// Name describes the GPU the cuda device runs on: "NVIDIA H200 (139.8 GiB)".
func Name() (string, error) { return gpu.Describe() }
