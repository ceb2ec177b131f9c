// Package kernels holds jeirt's CUDA kernels: the CUDA C sources (cbmm.cu,
// jeirt.cu, encoder.cu), the PTX that nvcc compiles them to for compute_70
// (committed and embedded here, so that building with -tags jeirtcuda needs
// no nvcc, and the driver JIT-compiles them for any newer GPU, the H200's
// sm_90 included), and the names of the kernels each module exports.
//
// Regenerate the PTX after editing a kernel (needs nvcc 11.8 or newer), and
// check that no kernel uses local memory with scripts/ptxas-report.sh:
//
//	go generate ./cuda/kernels
//
// cbmm.cu is compiled with -fmad=false: its small solves must take the CPU
// fitter's branches (active sets, pivot signs), so they must see its values.
package kernels

//go:generate nvcc -ptx -arch=compute_70 -fmad=false -o cbmm.ptx cbmm.cu
//go:generate nvcc -ptx -arch=compute_70 -o jeirt.ptx jeirt.cu
//go:generate nvcc -ptx -arch=compute_70 -o encoder.ptx encoder.cu

import (
	_ "embed"
	"fmt"
)

//go:embed cbmm.ptx
var cbmmPTX string

//go:embed jeirt.ptx
var jeirtPTX string

//go:embed encoder.ptx
var encoderPTX string

// MaxRank is the largest cBMM rank the kernels handle: cbmm.cu instantiates
// its passes once per rank, so that the accumulators stay in registers.
const MaxRank = 8

// Module is one PTX module: its file (without .ptx), its text, and the
// kernels it exports, as the Go code launches them.
type Module struct {
	File, PTX string
	Names     []string
}

var (
	// CBMM is batched cBMM: the per-rank passes (cbmm_item_pass_r1 to _r8,
	// cbmm_model_pass_r1 to _r8), cbmm_sum_loss, and the fit's control
	// (cbmm_sum_decide, cbmm_extrapolate).
	CBMM = Module{"cbmm", cbmmPTX, cbmmNames()}
	// JEIRT is the JE-IRT training step and its validation; its sgemm also
	// serves the text encoder's dense products when cuBLAS does not.
	JEIRT = Module{"jeirt", jeirtPTX, []string{"sgemm", "jeirt_fwd1", "jeirt_fwd2", "pair_link", "jeirt_bwd1", "jeirt_bwd2",
		"jeirt_eval_cells", "jeirt_eval_sum", "adamw"}}
	// Encoder is the text encoder's forward pass but for its dense products.
	Encoder = Module{"encoder", encoderPTX, []string{"embed", "layer_norm", "bias_act", "geglu", "residual_add", "mpnet_rel_bias",
		"rope", "attention_dh32", "attention_dh64", "attention_dh96", "attention_dh128", "pool", "l2_normalize", "to_bf16"}}
)

// Modules lists the three modules, which the device loads together.
func Modules() []Module { return []Module{CBMM, JEIRT, Encoder} }

// Names lists every kernel of every module.
func Names() []string {
	var names []string
	for _, m := range Modules() {
		names = append(names, m.Names...)
	}
	return names
}

func cbmmNames() []string {
	var names []string
	for _, pass := range []string{"item", "model"} {
		for r := 1; r <= MaxRank; r++ {
			names = append(names, fmt.Sprintf("cbmm_%s_pass_r%d", pass, r))
		}
	}
	return append(names, "cbmm_sum_loss", "cbmm_sum_decide", "cbmm_extrapolate")
}
