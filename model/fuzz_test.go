package model

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func FuzzParseSafetensors(f *testing.F) {
	var b bytes.Buffer
	WriteSafetensors(&b, map[string]Tensor{"a": {Shape: []int{2, 2}, Data: []float32{1, 2, 3, 4}}, "c": {Shape: []int{}, Data: []float32{5}}}, map[string]string{"k": "v"})
	f.Add(b.Bytes())
	f.Add(safetensorsBytes(`{"a":{"dtype":"F32","shape":[4611686018427387904],"data_offsets":[0,0]}}`, 0))
	f.Add(safetensorsBytes(`{"a":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]},"__metadata__":{"x":"y"}}`, 4))
	f.Add(safetensorsBytes(`{"a":{"dtype":"F64","shape":[1,1],"data_offsets":[0,8]}}`, 8))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := ParseSafetensors("f", data)
		if err != nil {
			return
		}
		for name, tt := range st.Tensors {
			n := 1
			for _, d := range tt.Shape {
				n *= d
			}
			if n != len(tt.Data) || len(tt.Data)*2 > len(data) {
				t.Fatalf("tensor %s: shape %v, %d values from %d bytes", name, tt.Shape, len(tt.Data), len(data))
			}
		}
	})
}

func FuzzReadNPY(f *testing.F) {
	f.Add(npyBytes("2, 2", 16))
	f.Add(npyBytes("-1, -4", 16))
	f.Add(npyBytes("4611686018427387904, 4", 0))
	f.Add(npyBytes("0, 3", 0))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "a.npy")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		rows, err := ReadNPY(p)
		if err != nil {
			return
		}
		total := 0
		for _, r := range rows {
			total += len(r)
		}
		if total*4 > len(data) {
			t.Fatalf("%d values from %d bytes", total, len(data))
		}
	})
}

// FuzzLoadCheckpoint fuzzes manifest.json and model.safetensors of a
// checkpoint folder.
func FuzzLoadCheckpoint(f *testing.F) {
	seed := filepath.Join(f.TempDir(), "ck")
	if err := (&Checkpoint{Model: smallJEIRT()}).Write(seed, false); err != nil {
		f.Fatal(err)
	}
	man, _ := os.ReadFile(filepath.Join(seed, CheckpointManifest))
	w, _ := os.ReadFile(filepath.Join(seed, CheckpointWeights))
	f.Add(man, w)
	f.Add([]byte(strings.Replace(string(man), `"llama"`, `"gpt"`, 1)), w)
	f.Add([]byte(strings.Replace(string(man), `"dim": 2`, `"dim": 1000000000`, 1)), w)
	nan := bytes.Clone(w)
	binary.LittleEndian.PutUint32(nan[len(nan)-4:], math.Float32bits(float32(math.NaN())))
	f.Add(man, nan)
	// Format version 2 binds the files: names swapped, a hash that points
	// outside the folder; version 1 (no hashes) with and without a NaN.
	f.Add([]byte(strings.NewReplacer(`"gpt"`, `"llama"`, `"llama"`, `"gpt"`).Replace(string(man))), w)
	f.Add(regexp.MustCompile(`"model.safetensors"`).ReplaceAll(man, []byte(`"../model.safetensors"`)), w)
	v1 := regexp.MustCompile(`(?s),\s*"sha256": \{[^}]*\}`).ReplaceAll(man, nil)
	v1 = bytes.Replace(v1, []byte(`"format_version": 2`), []byte(`"format_version": 1`), 1)
	f.Add(v1, w)
	f.Add(v1, nan)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, manifest, weights []byte) {
		ck := filepath.Join(dir, "ck")
		os.MkdirAll(ck, 0o755)
		os.WriteFile(filepath.Join(ck, CheckpointManifest), manifest, 0o644)
		os.WriteFile(filepath.Join(ck, CheckpointWeights), weights, 0o644)
		c, err := LoadCheckpoint(ck)
		if err != nil {
			return
		}
		if c.Manifest.FormatVersion >= 2 {
			// A loaded version-2 checkpoint is the one Write wrote: its
			// weights are the bytes the manifest names, for its identity.
			sum := sha256.Sum256(weights)
			if hex.EncodeToString(sum[:]) != c.Manifest.SHA256[CheckpointWeights] {
				t.Fatal("weights loaded whose hash the manifest does not record")
			}
		} else if len(c.Warnings) == 0 {
			t.Fatal("a version-1 checkpoint loaded without a warning")
		}
		m := c.Model
		for _, v := range m.M {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatal("non-finite weight loaded")
			}
		}
		if m.NumModels() > 0 && m.NumItems() > 0 {
			p := m.Prob(0, m.ItemEmbedding(0))
			if math.IsNaN(p) {
				t.Fatalf("P is NaN")
			}
		}
	})
}

// FuzzParseDomain feeds a checkpoint's out-of-domain reference (domain.safetensors)
// to ParseDomain: every input gives a domain whose vectors match its shape, or
// an error.
func FuzzParseDomain(f *testing.F) {
	d, err := NewDomain([]float32{1, 0, 0, 1, 0.6, 0.8}, 2, []int{0, 1, 2}, 0)
	if err != nil {
		f.Fatal(err)
	}
	b, err := d.Marshal()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(safetensorsBytes(`{"reference":{"dtype":"F32","shape":[1,1],"data_offsets":[0,4]},"__metadata__":{"threshold":"NaN","quantile":"2"}}`, 4))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ParseDomain("domain.safetensors", data)
		if err != nil {
			if len(err.Error()) > 4096 {
				t.Errorf("error of %d bytes", len(err.Error()))
			}
			return
		}
		if d.Dim < 1 || len(d.Vectors) != d.NumReference()*d.Dim || !(d.Threshold >= 0) || math.IsInf(d.Threshold, 0) || !(d.Quantile >= 0 && d.Quantile <= 1) {
			t.Fatalf("dim %d, %d values for %d references, threshold %v, quantile %v", d.Dim, len(d.Vectors), d.NumReference(), d.Threshold, d.Quantile)
		}
	})
}
