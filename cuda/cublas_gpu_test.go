//go:build jeirtcuda

package cuda

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestCuBLASLoads reports the libcublas the GPU encoder uses (scripts/gpu-check.sh
// prints the line): its file, version and how it was found. A machine
// without cuBLAS skips, saying why; the sgemm kernel then runs the products.
func TestCuBLASLoads(t *testing.T) {
	g := mustDevice(t)
	lib, err := loadCuBLAS(g)
	if err != nil {
		t.Skipf("cuBLAS: none: %v", err)
	}
	t.Logf("cuBLAS: %s", lib)
	// The version must be the soname's: a libcublas.so.13 says 13.x.y.
	name := filepath.Base(lib.Path)
	if i := strings.Index(name, ".so."); i >= 0 {
		major := strings.SplitN(name[i+4:], ".", 2)[0]
		if got := lib.Version / 10000; major != "" && strconv.Itoa(got) != major {
			t.Errorf("%s reports version %d (major %d)", lib.Path, lib.Version, got)
		}
	}
	if _, err := openCuBLAS(g); err != nil {
		t.Fatal(err)
	}
}
