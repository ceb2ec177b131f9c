//go:build jeirtcuda

package cuda

import "github.com/jeirt/jeirt/train"

// The GPU implementations of train's device seams, as device "cuda". The
// device is opened on first use, so registering costs nothing.
func init() {
	train.RegisterCBMMBackend(cbmmBackend{device: "cuda", open: openDevice})
	train.RegisterJEIRTBackend("cuda", jeirtBackend(openDevice))
}
