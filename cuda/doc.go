// Package cuda runs jeirt's hot loops on NVIDIA GPUs through gorgonia.org/cu's
// driver API: batched cBMM (backend.CBMMDevice; Qu, Heng, Zeng and Liu 2026,
// arXiv:2605.07046) and the JE-IRT training step (backend.NewJEIRTStepper; Yao et al.
// 2025, arXiv:2509.22888), registered as device "cuda".
//
// Everything that touches the GPU is behind the jeirtcuda build tag. (Not
// "cuda": that tag also switches gorgonia.org/gorgonia, which train and
// encoder import, to its own CUDA engine, which needs cuDNN.) gorgonia.org/cu
// exits the process in its package init when no GPU is present, so no file of
// the default build imports it. What is left in the default build is pure
// Go: the buffer layouts, the batched cBMM and JE-IRT step code written
// against a small device interface (gpu), and the host's small solves. The
// tests run all of it on the real kernel sources compiled for the CPU
// (internal/harness), against train's CPU implementations. The default
// jeirt binary reaches the GPU by running jeirt-cuda, the jeirtcuda build, as
// a runner process (package runner).
//
// The kernels are CUDA C in kernels/*.cu, compiled to PTX for compute_70 (so
// the driver JIT-compiles them for any newer GPU, the H200's sm_90 included)
// and committed, so building with -tags jeirtcuda needs only the CUDA
// headers and the libcuda link stub, not nvcc:
//
//	CGO_LDFLAGS=-L/usr/lib/x86_64-linux-gnu/stubs go build -tags jeirtcuda ./cmd/jeirt
//
// Regenerate the PTX after editing a kernel (needs nvcc 11.8 or newer), and
// check that no kernel uses local memory with scripts/ptxas-report.sh:
//
//	go generate ./cuda/
//
// cbmm.cu is compiled with -fmad=false: its small solves must take the CPU
// fitter's branches (active sets, pivot signs), so they must see its values.
package cuda

//go:generate nvcc -ptx -arch=compute_70 -fmad=false -o kernels/cbmm.ptx kernels/cbmm.cu
//go:generate nvcc -ptx -arch=compute_70 -o kernels/jeirt.ptx kernels/jeirt.cu
//go:generate nvcc -ptx -arch=compute_70 -o kernels/encoder.ptx kernels/encoder.cu
