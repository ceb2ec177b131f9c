//go:build cgo

package cuda

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/jeirt/jeirt/cuda/internal/cbmm"
	"github.com/jeirt/jeirt/cuda/internal/gpu"
	"github.com/jeirt/jeirt/cuda/internal/harness"
	"github.com/jeirt/jeirt/cuda/internal/jeirtstep"
	"github.com/jeirt/jeirt/cuda/kernels"
	"github.com/jeirt/jeirt/train/backend"
)

// The test binary registers the GPU code on the CPU harness (the kernel
// sources compiled for the host, package harness) as device "cuda-harness",
// so the GPU acceptance tests (agreement_test.go) run on the real kernel
// sources without a GPU. host is its device.
var host = harness.NewGPU()

func openHost() (gpu.GPU, error) { return host, nil }

func init() {
	backend.Register("cuda-harness", cbmm.Backend{Device: "cuda-harness", Open: openHost})
	backend.Register("cuda-harness", jeirtstep.Backend(openHost))
	backend.Register("cuda-harness", encoderSeam{open: openHost, dense: func(gpu.GPU) dense { return hostDense{} }})
}

func TestMain(m *testing.M) { harness.Main(m) }

// TestHarnessCoversEveryKernel: the harness compiles every __global__ of
// kernels/*.cu, the Go side launches exactly those (kernels.Names), and the kernels' argument
// types as the compiler sees them match the PTX's parameter counts.
func TestHarnessCoversEveryKernel(t *testing.T) {
	var inSource []string
	for _, f := range []string{"cbmm", "jeirt", "encoder"} {
		src, err := os.ReadFile(filepath.Join("kernels", f+".cu"))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`__global__ void (\w+)\(`).FindAllStringSubmatch(string(src), -1) {
			inSource = append(inSource, m[1])
		}
	}
	var compiled []string
	for _, k := range harness.Kernels() {
		compiled = append(compiled, k.Name)
	}
	launched := kernels.Names()
	for _, s := range [][]string{inSource, compiled, launched} {
		slices.Sort(s)
	}
	if !slices.Equal(inSource, compiled) || !slices.Equal(inSource, launched) {
		t.Fatalf("kernels in the .cu sources %v, compiled into the harness %v, launched by Go %v", inSource, compiled, launched)
	}
}

func TestHarnessSgemm(t *testing.T) { checkSgemm(t, harness.NewGPU()) }

// TestHarnessStepsMatchCPU: the kernels' iteration and the CPU's, step by
// step, on shapes whose items and models are not multiples of a warp.
func TestHarnessStepsMatchCPU(t *testing.T) { checkStepsMatchCPU(t, "cuda-harness", 1e-11, 10) }

// TestHarnessCBMMAgreesWithCPU is the acceptance test of batched cBMM on the
// real kernel sources.
func TestHarnessCBMMAgreesWithCPU(t *testing.T) {
	checkCBMMAgreement(t, "cuda-harness", 1e-10, 15)
}

// TestHarnessJEIRTAgreesWithCPU is the acceptance test of the JE-IRT step on
// the real kernel sources (float32 with atomic gradient sums).
func TestHarnessJEIRTAgreesWithCPU(t *testing.T) {
	checkJEIRTAgreement(t, "cuda-harness", 1e-4)
}
