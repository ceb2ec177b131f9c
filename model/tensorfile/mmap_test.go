package tensorfile

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestMapSafetensorsAgreesWithRead maps the fixtures' F32 weights and
// compares every tensor with ReadSafetensors's decoded copy.
// fixture is a tiny encoder folder of ../shared/fixtures, or skips the
// test when ../shared is absent.
func fixture(t *testing.T, name string) string {
	dir := filepath.Join("..", "..", "..", "shared", "fixtures", name)
	if _, err := os.Stat(filepath.Join(dir, "model.safetensors")); err != nil {
		t.Skipf("%s fixture not found: %v", name, err)
	}
	return dir
}

func TestMapSafetensorsAgreesWithRead(t *testing.T) {
	for _, name := range []string{"tiny-bert", "tiny-mpnet", "tiny-modernbert"} {
		path := filepath.Join(fixture(t, name), "model.safetensors")
		m, ok, err := MapSafetensors(path)
		if err != nil || !ok {
			t.Fatalf("%s: mapped %v, %v", name, ok, err)
		}
		r, err := ReadSafetensors(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Tensors) != len(r.Tensors) {
			t.Fatalf("%s: %d tensors mapped, %d read", name, len(m.Tensors), len(r.Tensors))
		}
		for k, want := range r.Tensors {
			got := m.Tensors[k]
			if !slices.Equal(got.Shape, want.Shape) || !slices.Equal(got.Data, want.Data) {
				t.Fatalf("%s: tensor %q differs", name, k)
			}
		}
	}
}
