package gpu

import (
	"errors"
	"strings"
	"testing"
)

// TestCheckGrid: launches over sm_90's limits are refused before they reach
// the driver.
func TestCheckGrid(t *testing.T) {
	for _, c := range []struct {
		x, y, block int
		want        string
	}{
		{1 << 31, 1, 256, "gridDim.x 2147483648 is over the limit of 2147483647"},
		{1, 65536, 256, "gridDim.y 65536 is over the limit of 65535"},
		{1, 1, 2048, "2048 threads per block is over the limit of 1024"},
		{0, 1, 256, "empty grid"},
	} {
		err := CheckGrid("k", c.x, c.y, c.block)
		if !errors.Is(err, ErrLaunch) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("grid %d x %d, %d threads: %v; want %q", c.x, c.y, c.block, err, c.want)
		}
	}
	if err := CheckGrid("k", 1<<31-1, 65535, 1024); err != nil {
		t.Errorf("at the limits: %v", err)
	}
}
