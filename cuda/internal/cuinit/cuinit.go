//go:build jeirtcuda

// Package cuinit initialises the CUDA driver before gorgonia.org/cu does, to
// say clearly what is wrong when it cannot: cu's package init prints a terse
// message and exits when cuInit fails (no GPU, no driver), and nothing can
// recover from that. By the Go spec's initialisation order (of the packages
// whose imports are initialised, the first by import path goes first) this
// package, "github.com/jeirt/...", runs before "gorgonia.org/cu".
package cuinit

/*
#cgo LDFLAGS: -lcuda
#include <cuda.h>

static const char *cuinit_name(CUresult r) {
	const char *s = 0;
	if (cuGetErrorName(r, &s) != CUDA_SUCCESS || s == 0) return "unknown error";
	return s;
}
static const char *cuinit_text(CUresult r) {
	const char *s = 0;
	if (cuGetErrorString(r, &s) != CUDA_SUCCESS || s == 0) return "";
	return s;
}
*/
import "C"

import (
	"fmt"
	"os"
)

// message is what the process prints before exiting when cuInit fails.
func message(name, text string) string {
	return fmt.Sprintf("jeirt: this binary was built with -tags jeirtcuda and needs an NVIDIA GPU and driver, "+
		"but the CUDA driver did not initialise: %s (%s).\n"+
		"Run jeirt, the default build, instead: it starts anywhere and runs --device cuda|auto commands here only when a GPU is usable.\n", name, text)
}

func init() {
	r := C.cuInit(0)
	if r == C.CUDA_SUCCESS {
		return
	}
	fmt.Fprint(os.Stderr, message(C.GoString(C.cuinit_name(r)), C.GoString(C.cuinit_text(r))))
	os.Exit(1)
}
