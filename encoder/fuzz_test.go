package encoder

import (
	"os"
	"path/filepath"
	"testing"
)

func FuzzReadVectors(f *testing.F) {
	f.Add("v.json", []byte(`{"q1":[1,2],"q2":[3,4]}`))
	f.Add("v.jsonl", []byte(`{"id":"q1","vector":[1,2]}`+"\n"))
	f.Add("v.csv", []byte("id,v0,v1\nq1,1,2\n"))
	f.Add("v.npy", []byte("\x93NUMPY\x01\x00\x46\x00{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 4611686018427387904), }\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, name string, raw []byte) {
		ext := filepath.Ext(name)
		switch ext {
		case ".json", ".jsonl", ".csv", ".npy":
		default:
			ext = ".json"
		}
		p := filepath.Join(dir, "v"+ext)
		if err := os.WriteFile(p, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		if ext == ".npy" {
			os.WriteFile(IDsPath(p), []byte("q1\nq2\n"), 0o644)
		}
		ReadVectors(p)
	})
}
