// Package cuda runs jeirt's hot loops on NVIDIA GPUs through gorgonia.org/cu's
// driver API, registered as device "cuda": batched cBMM (backend.CBMMDevice,
// package cuda/internal/cbmm), the JE-IRT training step
// (backend.NewJEIRTStepper, package cuda/internal/jeirtstep) and the text
// encoder's forward pass (backend.Encoders; Encoder, here), each written
// against the device interface of package cuda/internal/gpu. cBMM is Qu,
// Heng, Zeng and Liu's (2026, arXiv:2605.07046), JE-IRT Yao et al.'s (2025,
// arXiv:2509.22888).
//
// Everything that touches the GPU is behind the jeirtcuda build tag. (Not
// "cuda": that tag also switches gorgonia.org/gorgonia, which train and
// encoder import, to its own CUDA engine, which needs cuDNN.) gorgonia.org/cu
// exits the process in its package init when no GPU is present, so no file of
// the default build imports it. What is left in the default build is pure
// Go: the buffer layouts, the batched cBMM, JE-IRT step and encoder code
// written against the device interface, and the host's small solves. The
// tests run all of it on the real kernel sources compiled for the CPU
// (package cuda/internal/harness), against train's CPU implementations. The
// default jeirt binary reaches the GPU by running jeirt-cuda, the jeirtcuda
// build, as a runner process (package runner).
//
// The kernels are CUDA C in kernels/*.cu (package cuda/kernels), compiled to
// PTX for compute_70 and committed, so building with -tags jeirtcuda needs
// only the CUDA headers and the libcuda link stub, not nvcc:
//
//	CGO_LDFLAGS=-L/usr/lib/x86_64-linux-gnu/stubs go build -tags jeirtcuda ./cmd/jeirt
package cuda
