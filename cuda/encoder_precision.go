package cuda

import (
	"fmt"
	"math"

	"github.com/jeirt/jeirt/cuda/internal/gpu"
)

// Precision is the arithmetic of the GPU encoder's linear layers, which
// hold nearly all of its FLOPs. Everything else (attention, norms, GELU,
// pooling) stays float32 with double reductions whatever the precision.
type Precision string

const (
	// FP32, the default: float32 inputs, float32 accumulation. The vectors
	// agree with the CPU encoder within float32 rounding and share its
	// fingerprint and cache.
	FP32 Precision = "fp32"
	// TF32: float32 inputs rounded to TF32 (a 10-bit mantissa) on the tensor
	// cores, float32 accumulation (cublasGemmEx, CUBLAS_COMPUTE_32F_FAST_TF32).
	TF32 Precision = "tf32"
	// BF16: inputs rounded to bfloat16 (a 7-bit mantissa, round to nearest
	// even) and stored as such, float32 accumulation (cublasGemmEx on
	// CUDA_R_16BF inputs, CUBLAS_COMPUTE_32F).
	BF16 Precision = "bf16"
)

// ParsePrecision reads fp32, tf32 or bf16 ("" is fp32).
func ParsePrecision(s string) (Precision, error) {
	switch Precision(s) {
	case "", FP32:
		return FP32, nil
	case TF32, BF16:
		return Precision(s), nil
	}
	return "", fmt.Errorf("cuda: precision %q: want fp32, tf32 or bf16", s)
}

// fingerprintSuffix is what a reduced precision adds to the CPU encoder's
// fingerprint: its vectors differ from the CPU's by more than float32
// rounding, so they must not share a cache entry with them.
func (p Precision) fingerprintSuffix() string {
	if p == "" || p == FP32 {
		return ""
	}
	return "/precision=" + string(p)
}

// roundTF32 rounds x to the nearest TF32 value (10 explicit mantissa bits,
// ties to even), as the harness emulates the tensor cores' inputs.
func roundTF32(x float32) float32 { return roundMantissa(x, 13) }

// roundBF16 rounds x to the nearest bfloat16 (7 explicit mantissa bits,
// ties to even): the to_bf16 kernel's rounding.
func roundBF16(x float32) float32 { return roundMantissa(x, 16) }

// roundMantissa drops the low drop bits of x's mantissa, rounding to nearest
// even; NaN and ±Inf are kept.
func roundMantissa(x float32, drop uint) float32 {
	u := math.Float32bits(x)
	if u&0x7f800000 == 0x7f800000 {
		return x
	}
	half := uint32(1)<<(drop-1) - 1
	u += half + (u>>drop)&1
	return math.Float32frombits(u &^ (uint32(1)<<drop - 1))
}

// gemmBF16 is a dense product on bfloat16 inputs with float32 accumulation:
// y (float32, n × out) = x·wᵀ, x (n × in) and w (out × in) bfloat16 arrays
// as to_bf16 writes them.
type gemmBF16 interface {
	linearBF16(y, x16, w16 gpu.Handle, n, out, in int) error
	describe() string
}

// bf16Dense runs the linear layers on bfloat16 inputs: each weight matrix
// is rounded to a bfloat16 copy on the device at its first use (kept until
// close), each activation into a scratch buffer before its product.
type bf16Dense struct {
	g       gpu.GPU
	mm      gemmBF16
	weights map[gpu.Handle]gpu.Handle
	x16     gpu.Handle
	x16n    int // bfloat16 values x16 holds
}

func newBF16Dense(g gpu.GPU, mm gemmBF16) *bf16Dense {
	return &bf16Dense{g: g, mm: mm, weights: map[gpu.Handle]gpu.Handle{}}
}

func (d *bf16Dense) precision() Precision { return BF16 }

func (d *bf16Dense) describe() string { return d.mm.describe() }

// toBF16 launches to_bf16 for n values of src into dst.
func (d *bf16Dense) toBF16(dst, src gpu.Handle, n int) error {
	return d.g.Launch("to_bf16", gpu.Blocks(gpu.Blocks(n, 2), 256), 1, 256, dst, src, n)
}

func (d *bf16Dense) linear(y, x, w gpu.Handle, n, out, in int) error {
	if n == 0 || out == 0 || in == 0 {
		return nil
	}
	w16, ok := d.weights[w]
	if !ok {
		h, err := d.g.Alloc("bfloat16 weights", int64(2*gpu.Blocks(out*in, 2)*2))
		if err != nil {
			return err
		}
		if err := d.toBF16(h, w, out*in); err != nil {
			d.g.Free(h)
			return err
		}
		d.weights[w], w16 = h, h
	}
	if n*in > d.x16n {
		if d.x16 != 0 {
			if err := d.g.Free(d.x16); err != nil {
				return err
			}
			d.x16, d.x16n = 0, 0
		}
		h, err := d.g.Alloc("bfloat16 activations", int64(2*gpu.Blocks(n*in, 2)*2))
		if err != nil {
			return err
		}
		d.x16, d.x16n = h, n*in
	}
	if err := d.toBF16(d.x16, x, n*in); err != nil {
		return err
	}
	return d.mm.linearBF16(y, d.x16, w16, n, out, in)
}

// close frees the bfloat16 copies; inside do.
func (d *bf16Dense) close() error {
	var first error
	for w, h := range d.weights {
		if err := d.g.Free(h); err != nil && first == nil {
			first = err
		}
		delete(d.weights, w)
	}
	if d.x16 != 0 {
		if err := d.g.Free(d.x16); err != nil && first == nil {
			first = err
		}
		d.x16, d.x16n = 0, 0
	}
	return first
}
