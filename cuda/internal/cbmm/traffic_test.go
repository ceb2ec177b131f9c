package cbmm

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"unsafe"
)

// TestTraffic checks the bytes per cell that the bandwidth figures use
// against the layout's element sizes and against docs/gpu.md's table.
func TestTraffic(t *testing.T) {
	var l layout
	var y float64 // ỹ is float64 on the device
	tr := IterationTraffic()
	if a := int(unsafe.Sizeof(l.Cells[0])) + int(unsafe.Sizeof(y)); tr.A != a {
		t.Errorf("pass A: %d bytes per cell, the layout's cell entry and ỹ give %d", tr.A, a)
	}
	if b := int(unsafe.Sizeof(l.ModelItem[0])+unsafe.Sizeof(l.ModelCell[0])) + sector; tr.B != b {
		t.Errorf("pass B: %d bytes per cell, want %d", tr.B, b)
	}
	if tr.PerCell() != 52 {
		t.Errorf("%d bytes per cell, docs/gpu.md's estimates use 52", tr.PerCell())
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "gpu.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		pass string
		want int
	}{{"A", tr.A}, {"B", tr.B}} {
		m := regexp.MustCompile(`(?m)^\| ` + c.pass + `, [^\n]*\| (\d+) B \|$`).FindSubmatch(doc)
		if m == nil {
			t.Errorf("docs/gpu.md has no row for pass %s ending in its bytes per cell", c.pass)
			continue
		}
		if n, _ := strconv.Atoi(string(m[1])); n != c.want {
			t.Errorf("docs/gpu.md: pass %s %d B per cell, IterationTraffic %d", c.pass, n, c.want)
		}
	}
}
