//go:build cgo

package harness

import (
	"errors"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/cuda/internal/gpu"
)

// TestHarnessLaunchErrors: launches over sm_90's limits and with arguments
// of the wrong type fail before running, naming the kernel and the limit.
func TestHarnessLaunchErrors(t *testing.T) {
	g := NewGPU()
	for _, c := range []struct {
		name          string
		gridX, gridY  int
		block         int
		args          []any
		want          string
		checkLimitErr bool
	}{
		{"jeirt_fwd2", 1, 1, 2048, []any{gpu.Handle(0), gpu.Handle(0), gpu.Handle(0), gpu.Handle(0), gpu.Handle(0), gpu.Handle(0), 0, 0, 0}, "launching jeirt_fwd2 (grid 1 x 1, 2048 threads) on CPU harness: over sm_90's launch limits: blockDim.x 2048 is over sm_90's limit of 1024", true},
		{"sgemm", 1, 70000, 256, []any{gpu.Handle(0), gpu.Handle(0), gpu.Handle(0), 0, 0, 0, false, false, 1.0, 0.0}, "gridDim.y 70000 is over sm_90's limit of 65535", true},
		{"jeirt_fwd2", 1, 1, 32, []any{gpu.Handle(0), gpu.Handle(0), gpu.Handle(0), gpu.Handle(0), gpu.Handle(0), gpu.Handle(0), 1.5, 0, 0}, "launching jeirt_fwd2 on CPU harness: kernel jeirt_fwd2 argument 6 is a float64, the kernel takes a long long", false},
		{"jeirt_fwd2", 1, 1, 32, []any{gpu.Handle(0), 0, 0}, "kernel jeirt_fwd2 takes 9 arguments, got 3", false},
	} {
		err := g.Launch(c.name, c.gridX, c.gridY, c.block, c.args...)
		if !errors.Is(err, gpu.ErrLaunch) || !strings.Contains(err.Error(), c.want) || c.checkLimitErr != errors.Is(err, ErrLimit) && c.checkLimitErr {
			t.Errorf("err = %v\nwant %s", err, c.want)
		}
	}
	if n := StaticShared()["sgemm"]; n != 2*16*68*4 {
		t.Errorf("sgemm's static shared memory from the PTX: %d bytes, want %d", n, 2*16*68*4)
	}
	if n := StaticShared()["cbmm_item_pass_r1"]; n != 256 {
		t.Errorf("cbmm_item_pass_r1's static shared memory from the PTX: %d bytes, want 256", n)
	}
	// Rank 8: 32 warps' partial sums of 54 + 1 entries, the sums, and the
	// NNLS work space of 9 unknowns.
	if n, want := StaticShared()["cbmm_item_pass_r8"], int64(8*(33*55+2*81+6*9)); n != want {
		t.Errorf("cbmm_item_pass_r8's static shared memory from the PTX: %d bytes, want %d", n, want)
	}
}
