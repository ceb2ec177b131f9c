package kernels

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestPTXExportsKernels checks that the committed PTX, which the package
// embeds, exports every kernel of its module's Names, with its argument
// count, and was generated from the current .cu sources for compute_70.
func TestPTXExportsKernels(t *testing.T) {
	for _, mod := range Modules() {
		file, names, ptx := mod.File, mod.Names, mod.PTX
		src, err := os.ReadFile(file + ".cu")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(ptx, ".target sm_70") {
			t.Errorf("%s.ptx is not compiled for compute_70", file)
		}
		entries := regexp.MustCompile(`\.entry (\w+)\(([^)]*)\)`).FindAllStringSubmatch(ptx, -1)
		params := map[string]int{}
		for _, e := range entries {
			params[e[1]] = strings.Count(e[2], ".param")
		}
		for _, n := range names {
			m := regexp.MustCompile(`__global__ void ` + n + `\(([^)]*)\)`).FindStringSubmatch(string(src))
			if m == nil {
				t.Errorf("%s.cu has no kernel %s", file, n)
				continue
			}
			ps := m[1]
			if regexp.MustCompile(`^\w+$`).MatchString(ps) {
				// A parameter-list macro (the per-rank cBMM kernels).
				d := regexp.MustCompile(`(?m)^#define ` + ps + ` ((?:.*\\\n)*.*)$`).FindStringSubmatch(string(src))
				if d == nil {
					t.Errorf("%s.cu: kernel %s's parameters %s are not a #define", file, n, ps)
					continue
				}
				ps = d[1]
			}
			want := strings.Count(ps, ",") + 1
			if params[n] != want {
				t.Errorf("%s.ptx: kernel %s has %d parameters, the source %d (run go generate ./cuda/kernels)", file, n, params[n], want)
			}
		}
		if len(params) != len(names) {
			t.Errorf("%s.ptx exports %d kernels, its Names %d", file, len(params), len(names))
		}
	}
}
