//go:build jeirtcuda

package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sync"

	"github.com/jeirt/jeirt/cuda/internal/cublasdl"
	"github.com/jeirt/jeirt/cuda/internal/gpu"
)

// cublasDense runs the linear layers with cuBLAS's cublasSgemm in
// CUBLAS_DEFAULT_MATH: float32 inputs, float32 accumulation.
type cublasDense struct {
	g gpu.GPU
	h uintptr // the cublasHandle_t (package cublasdl)
}

func (cublasDense) describe() string { return "cuBLAS cublasSgemm (float32, no TF32)" }

func (cublasDense) precision() Precision { return FP32 }

func (c cublasDense) linear(y, x, w gpu.Handle, n, out, in int) error {
	if n == 0 || out == 0 || in == 0 {
		return nil
	}
	if rc := cublasdl.Sgemm(c.h, uint64(y), uint64(x), uint64(w), n, out, in); rc != 0 {
		return fmt.Errorf("%w: cublasSgemm_v2 (%d x %d -> %d) on %s: status %d", gpu.ErrLaunch, n, in, out, c.g.Name(), int(rc))
	}
	return nil
}

// cuBLAS's enums for cublasGemmEx (library_types.h, cublas_api.h).
const (
	cudaR32F             = 0
	cudaR16BF            = 14
	cublasCompute32F     = 68
	cublasCompute32FTF32 = 77
)

// cublasTF32 runs the linear layers with cublasGemmEx on float32 inputs in
// CUBLAS_COMPUTE_32F_FAST_TF32: the tensor cores read the inputs as TF32,
// accumulate in float32.
type cublasTF32 struct{ cublasDense }

func (cublasTF32) describe() string {
	return "cuBLAS cublasGemmEx (TF32 tensor cores, float32 accumulation)"
}

func (cublasTF32) precision() Precision { return TF32 }

func (c cublasTF32) linear(y, x, w gpu.Handle, n, out, in int) error {
	return c.gemmEx(y, x, w, n, out, in, cudaR32F, cublasCompute32FTF32)
}

// linearBF16 implements gemmBF16: cublasGemmEx on bfloat16 inputs
// (CUDA_R_16BF) with float32 output and CUBLAS_COMPUTE_32F.
func (c cublasDense) linearBF16(y, x16, w16 gpu.Handle, n, out, in int) error {
	return c.gemmEx(y, x16, w16, n, out, in, cudaR16BF, cublasCompute32F)
}

func (c cublasDense) gemmEx(y, x, w gpu.Handle, n, out, in, ab, compute int) error {
	if n == 0 || out == 0 || in == 0 {
		return nil
	}
	if rc := cublasdl.GemmEx(c.h, uint64(y), uint64(x), uint64(w), n, out, in, ab, compute); rc != 0 {
		return fmt.Errorf("%w: cublasGemmEx (%d x %d -> %d, inputs type %d, compute type %d) on %s: status %d", gpu.ErrLaunch, n, in, out, ab, compute, c.g.Name(), int(rc))
	}
	return nil
}

// cublasBF16 is cuBLAS's bfloat16 product for bf16Dense.
type cublasBF16 struct{ cublasDense }

func (cublasBF16) describe() string {
	return "cuBLAS cublasGemmEx (bfloat16 inputs, float32 accumulation)"
}

// gpuReducedDense returns the GPU's dense products for a precision: FP32 as
// gpuDense, TF32 and BF16 through cublasGemmEx, after a test product agrees
// with the float32 sgemm kernel within that precision's input rounding. A
// reduced precision without cuBLAS is an error, not a silent float32: the
// fingerprint would not say what made the vectors.
func gpuReducedDense(g gpu.GPU, p Precision) (dense, error) {
	if p == FP32 {
		return gpuDense(g), nil
	}
	c, err := sharedCuBLAS(g)
	if err != nil {
		return nil, fmt.Errorf("cuda: precision %s needs cuBLAS: %w", p, err)
	}
	var d dense
	var tol float64
	switch p {
	case TF32:
		// Two inputs each rounded by up to 2⁻¹¹ relative.
		d, tol = cublasTF32{c}, 2*0x1p-11+1e-5
	case BF16:
		d, tol = newBF16Dense(g, cublasBF16{c}), 2*0x1p-8+1e-5
	default:
		return nil, fmt.Errorf("cuda: precision %q: want fp32, tf32 or bf16", p)
	}
	err = agree(g, d, kernelDense{g: g}, tol)
	if c, ok := d.(interface{ close() error }); ok {
		// Drop the test product's bfloat16 weights: its buffers are freed,
		// and their addresses may come back for other weights.
		err = gpu.FirstErr(err, g.Do(c.close))
	}
	if err != nil {
		return nil, fmt.Errorf("cuda: precision %s: %v", p, err)
	}
	return d, nil
}

var (
	cublasOnce   sync.Once
	cublasShared cublasDense
	cublasErr    error
)

// sharedCuBLAS returns one cuBLAS gpu.Handle for the reduced-precision products.
func sharedCuBLAS(g gpu.GPU) (cublasDense, error) {
	cublasOnce.Do(func() { cublasShared, cublasErr = openCuBLAS(g) })
	return cublasShared, cublasErr
}

var (
	denseOnce sync.Once
	denseImpl dense
)

// gpuDense returns the GPU's dense products: cuBLAS when libcublas loads and
// agrees with the sgemm kernel on a test product (within float32 rounding),
// else the sgemm kernel. JEIRT_GEMM=kernel forces the kernel.
func gpuDense(g gpu.GPU) dense {
	denseOnce.Do(func() {
		if os.Getenv("JEIRT_GEMM") == "kernel" {
			denseImpl = kernelDense{g, ", as JEIRT_GEMM=kernel asks"}
			return
		}
		c, err := openCuBLAS(g)
		if err != nil {
			denseImpl = kernelDense{g, "; cuBLAS unavailable: " + err.Error()}
			return
		}
		if err := agree(g, c, kernelDense{g: g}, 1e-5); err != nil {
			denseImpl = kernelDense{g, "; cuBLAS not used: " + err.Error()}
			return
		}
		denseImpl = c
	})
	return denseImpl
}

// cublasLib is the libcublas that loaded.
type cublasLib struct {
	Path    string // the file the loader opened
	Where   string // how it was found (cublasdl.Search)
	Version int    // cublasGetVersion: major·10000 + minor·100 + patch
}

func (l cublasLib) String() string {
	return fmt.Sprintf("%s, cuBLAS %d.%d.%d, from %s", l.Path, l.Version/10000, l.Version/100%100, l.Version%100, l.Where)
}

var (
	cublasLoadOnce sync.Once
	cublasLoaded   cublasLib
	cublasLoadErr  error
)

// loadCuBLAS loads libcublas once per process: the first candidate of the
// search (cublasdl.DefaultSearch) that loads and makes a gpu.Handle on g.
func loadCuBLAS(g gpu.GPU) (cublasLib, error) {
	cublasLoadOnce.Do(func() {
		cands, looked := cublasdl.DefaultSearch().Candidates()
		_, cublasLoadErr = cublasdl.LoadFirst(cands, looked, func(c cublasdl.Candidate) error {
			if err := cublasdl.Open(c); err != nil {
				return err
			}
			var v int
			if err := g.Do(func() error {
				var rc int
				if v, rc = cublasdl.Probe(); rc != 0 {
					return fmt.Errorf("cublasCreate on %s: status %d", g.Name(), rc)
				}
				return nil
			}); err != nil {
				cublasdl.Close()
				return err
			}
			cublasLoaded = cublasLib{Path: cublasdl.Where(), Where: c.Where, Version: v}
			cublasdl.MarkInUse()
			return nil
		})
	})
	return cublasLoaded, cublasLoadErr
}

func openCuBLAS(g gpu.GPU) (cublasDense, error) {
	if _, err := loadCuBLAS(g); err != nil {
		return cublasDense{}, fmt.Errorf("loading libcublas: %w", err)
	}
	c := cublasDense{g: g}
	err := g.Do(func() error {
		var rc int
		if c.h, rc = cublasdl.Create(); rc != 0 {
			return fmt.Errorf("cublasCreate on %s: status %d", g.Name(), int(rc))
		}
		return nil
	})
	return c, err
}

// agree runs one product whose shape is no multiple of any tile on a and b:
// they must agree within tol·Σ|x||w| per output.
func agree(g gpu.GPU, a, b dense, tol float64) error {
	const n, out, in = 67, 45, 131
	rng := rand.New(rand.NewPCG(7, 8))
	x, w := make([]float32, n*in), make([]float32, out*in)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	for i := range w {
		w[i] = float32(rng.NormFloat64())
	}
	ya, yb := make([]float32, n*out), make([]float32, n*out)
	bufs := gpu.Buffers{G: g}
	defer g.Do(bufs.Free)
	return g.Do(func() error {
		hx, hw, ha, hb := bufs.Alloc("test x", n*in, 4), bufs.Alloc("test w", out*in, 4), bufs.Alloc("test y", n*out, 4), bufs.Alloc("test y", n*out, 4)
		if bufs.Err != nil {
			return bufs.Err
		}
		if err := gpu.FirstErr(g.HtoD(hx, x), g.HtoD(hw, w), a.linear(ha, hx, hw, n, out, in), b.linear(hb, hx, hw, n, out, in),
			g.DtoH(ya, ha), g.DtoH(yb, hb)); err != nil {
			return err
		}
		// Both sum in float32 in different orders: each may be off by about
		// in·2⁻²⁴·Σ|x||w| (tol 1e-5); rounded inputs add their rounding,
		// 2⁻¹¹ relative for TF32, 2⁻⁸ for bfloat16, per factor.
		for r := range n {
			for o := range out {
				var mag float64
				for k := range in {
					mag += math.Abs(float64(x[r*in+k]) * float64(w[o*in+k]))
				}
				i := r*out + o
				if d := math.Abs(float64(ya[i]) - float64(yb[i])); !(d <= tol*mag) {
					return fmt.Errorf("a %d x %d x %d test product differs from the sgemm kernel's by %.3g (of %.3g) at row %d, column %d", n, in, out, d, mag, r, o)
				}
			}
		}
		return nil
	})
}
