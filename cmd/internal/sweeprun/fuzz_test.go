package sweeprun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/train/sweep"
)

// FuzzParseSweep feeds sweep files (seeded with the shipped ones) to
// ParseSweep: every input gives a sweep of 1 to sweep.MaxRuns runs whose keys the
// trainer knows, or a short error.
func FuzzParseSweep(f *testing.F) {
	for _, name := range []string{"swebench.yaml", "swebench-dims.yaml"} {
		if b, err := os.ReadFile("../../../configs/sweeps/" + name); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("base: b.yaml\nseeds: [1, 2]\ngrid: {model.dim: [8, 16], train.lr: 0.1}\n"))
	f.Add([]byte("base: b.yaml\ngrid:\n  model.dim: [1,2,3,4,5,6,7,8,9,10]\n  model.hidden: [1,2,3,4,5,6,7,8,9,10]\n  train.epochs: [1,2,3,4,5,6,7,8,9,10]\n" +
		"  train.patience: [1,2,3,4,5,6,7,8,9,10]\n  train.batch_size: [1,2,3,4,5,6,7,8,9,10]\n  train.seed: [1,2,3,4,5,6,7,8,9,10]\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		s, err := ParseSweep(raw, "sweep.yaml")
		if err != nil {
			if len(err.Error()) > 4096 {
				t.Errorf("error of %d bytes", len(err.Error()))
			}
			return
		}
		if n := s.Size(); n < 1 || n > sweep.MaxRuns {
			t.Fatalf("%d runs", n)
		}
		if strings.TrimSpace(s.Base) == "" {
			t.Fatal("no base")
		}
	})
}

// FuzzReadSweepManifest feeds sweep.json contents to sweep.ReadManifest: every
// input gives runs whose folders lie inside the sweep folder, or a short
// error.
func FuzzReadSweepManifest(f *testing.F) {
	f.Add([]byte(`{"format":"jeirt-sweep","format_version":1,"keys":["model.dim"],"runs":[{"id":"000","dir":"runs/000","settings":[{"key":"model.dim","value":"8"}]}]}`))
	f.Add([]byte(`{"format":"jeirt-sweep","runs":[{"id":"000","dir":"../../etc"}]}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, raw []byte) {
		if err := os.WriteFile(filepath.Join(dir, sweep.ManifestFile), raw, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := sweep.ReadManifest(dir)
		if err != nil {
			if len(err.Error()) > 4096 {
				t.Errorf("error of %d bytes", len(err.Error()))
			}
			return
		}
		for _, r := range m.Runs {
			if !filepath.IsLocal(r.Dir) {
				t.Fatalf("run dir %q", r.Dir)
			}
		}
	})
}
