package encoder

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/jeirt/jeirt/model/checkpoint"
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

// FuzzLoadTFIDF feeds a checkpoint's fitted TF-IDF files (vocabulary JSON and
// weights safetensors) to LoadTFIDF: every input gives an encoder whose
// vectors have its width and are finite, or a short error.
func FuzzLoadTFIDF(f *testing.F) {
	e, err := NewTFIDF(2)
	if err != nil {
		f.Fatal(err)
	}
	texts := []string{"what is the capital of france", "how many legs does a spider have", "the capital city of spain", "a spider and a fly"}
	if err := e.Fit(context.Background(), texts); err != nil {
		f.Fatal(err)
	}
	st, err := e.State()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(st[checkpoint.TFIDFVocabFile], st[checkpoint.TFIDFWeightsFile])
	f.Add([]byte(`{"format":"jeirt-tfidf","version":"v1","dim":0,"vocabulary":[]}`), st[checkpoint.TFIDFWeightsFile])
	f.Fuzz(func(t *testing.T, vocab, weights []byte) {
		e, err := LoadTFIDF(map[string][]byte{checkpoint.TFIDFVocabFile: vocab, checkpoint.TFIDFWeightsFile: weights}, "ck")
		if err != nil {
			if len(err.Error()) > 4096 {
				t.Errorf("error of %d bytes", len(err.Error()))
			}
			return
		}
		v, err := e.Encode(context.Background(), texts[:2])
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range v {
			if len(x) != e.Dim() {
				t.Fatalf("vector of %d for width %d", len(x), e.Dim())
			}
			for _, y := range x {
				if math.IsNaN(float64(y)) || math.IsInf(float64(y), 0) {
					t.Fatalf("vector %v", x)
				}
			}
		}
	})
}

// FuzzReadTexts feeds a text-per-line file to ReadTexts (the texts of
// `jeirt encode`): every input gives as many ids as texts, or a short error.
func FuzzReadTexts(f *testing.F) {
	f.Add([]byte("What is 2+2?\nName the capital of France.\n"))
	f.Add([]byte("\xff\xfe\x00\r\n\n"))
	p := filepath.Join(f.TempDir(), "texts.txt")
	f.Fuzz(func(t *testing.T, raw []byte) {
		if err := os.WriteFile(p, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		ids, texts, err := ReadTexts(p)
		if err != nil {
			if len(err.Error()) > 4096 {
				t.Errorf("error of %d bytes", len(err.Error()))
			}
			return
		}
		if len(ids) != len(texts) {
			t.Fatalf("%d ids, %d texts", len(ids), len(texts))
		}
	})
}
