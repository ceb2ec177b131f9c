package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/irtfit"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/model/synth"
)

// TestIRTFitBatch fits two files in one batched cBMM run and checks that each
// folder holds exactly what a fit of that file alone writes.
func TestIRTFitBatch(t *testing.T) {
	dir := t.TempDir()
	// The same base name in two folders: the outputs take the folder names.
	files := []string{filepath.Join(dir, "alpha", "responses.csv"), filepath.Join(dir, "beta", "responses.csv")}
	for k, p := range files {
		r, _, err := synth.Generate(synth.Options{Kind: "2pl", Models: 25 + 10*k, Items: 60 + 30*k, Missing: 0.1, Seed: int64(11 + k)})
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := read.WriteLongCSV(p, r); err != nil {
			t.Fatal(err)
		}
	}
	for _, threads := range []string{"1", "3"} {
		batch := filepath.Join(dir, "batch"+threads)
		msg, err := runCmd(t, newIRTCmd(), "fit", "--data", files[0], "--data", files[1], "--tol", "1e-9", "--threads", threads, "--out", batch)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(msg, "fit: 2 files in one cbmm run") || !strings.Contains(msg, "wrote "+filepath.Join(batch, "beta")+": 35 models, 90 items") {
			t.Errorf("batch printed %q", msg)
		}
		for k, name := range []string{"alpha", "beta"} {
			alone := filepath.Join(dir, name+"-alone"+threads)
			if _, err := runCmd(t, newIRTCmd(), "fit", "--data", files[k], "--tol", "1e-9", "--threads", threads, "--out", alone); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{"abilities.csv", "items.csv"} {
				got, err := os.ReadFile(filepath.Join(batch, name, f))
				if err != nil {
					t.Fatal(err)
				}
				want, _ := os.ReadFile(filepath.Join(alone, f))
				// Floats are written in shortest round-trip form: equal bytes
				// are bit-identical parameters.
				if string(got) != string(want) || len(got) < 100 {
					t.Errorf("threads %s: %s/%s differs from the fit alone", threads, name, f)
				}
			}
			var b, a irtfit.Doc
			readJSONFile(t, filepath.Join(batch, name, "fit.json"), &b)
			readJSONFile(t, filepath.Join(alone, "fit.json"), &a)
			if b.Settings.Data != files[k] || b.BatchFits != 2 || a.BatchFits != 0 || b.Iterations != a.Iterations ||
				b.Loss != a.Loss || b.Models != 25+10*k || len(b.LossHistory) != len(a.LossHistory) {
				t.Errorf("threads %s: %s fit.json: data %q, batch %d/%d, iterations %d/%d, loss %v/%v, models %d",
					threads, name, b.Settings.Data, b.BatchFits, a.BatchFits, b.Iterations, a.Iterations, b.Loss, a.Loss, b.Models)
			}
		}
		entries, _ := os.ReadDir(batch)
		if len(entries) != 3 || entries[0].Name() != fileio.OutputMarker {
			t.Errorf("%s holds %d entries, want its marker, alpha and beta", batch, len(entries))
		}
	}
	// irt select reads a batch folder's fit back through its own file.
	if msg, err := runCmd(t, newIRTCmd(), "select", "--fit", filepath.Join(dir, "batch1", "beta"), "--keep", "0.5", "--out", filepath.Join(dir, "kept.csv")); err != nil ||
		!strings.Contains(msg, "kept 45 of 90 items") {
		t.Errorf("select on a batch folder: %v %q", err, msg)
	}

	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--name", "one"}, "--name given 1 time(s) for 2 --data file(s): give one per file, in the same order, or none"},
		{[]string{"--name", "x", "--name", "x"}, `--name "x" given twice`},
		{[]string{"--name", "x", "--name", "a/b"}, `--name "a/b": want a plain folder name`},
		{[]string{"--items", files[0]}, "--items names the item texts of one benchmark; it cannot go with several --data files"},
		{[]string{"--out", filepath.Join(dir, "batch1")}, filepath.Join(dir, "batch1") + " already exists; pass --force to replace it (only what jeirt wrote is ever replaced), or choose another output"},
	}
	for _, c := range cases {
		args := append([]string{"fit", "--data", files[0], "--data", files[1], "--out", filepath.Join(dir, "x")}, c.args...)
		if _, err := runCmd(t, newIRTCmd(), args...); err == nil || err.Error() != c.want {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); !os.IsNotExist(err) {
		t.Errorf("a refused batch left its output folder behind")
	}
	// A bad file fails the whole batch and writes nothing.
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("model,item,correct\nm1,q1,maybe\n"), 0o644)
	if _, err := runCmd(t, newIRTCmd(), "fit", "--data", files[0], "--data", bad, "--out", filepath.Join(dir, "x")); err == nil || !strings.Contains(err.Error(), "bad.csv") {
		t.Errorf("batch with a bad file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); !os.IsNotExist(err) {
		t.Errorf("a failed batch left its output folder behind")
	}
}

func readJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
