package model

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func safetensorsBytes(header string, data int) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, uint64(len(header)))
	b.WriteString(header)
	b.Write(make([]byte, data))
	return b.Bytes()
}

// A shape of 2^62 with empty offsets made count*size wrap to 0.
func TestSafetensorsShapeOverflow(t *testing.T) {
	for _, h := range []string{
		`{"a":{"dtype":"F32","shape":[4611686018427387904],"data_offsets":[0,0]}}`,
		`{"a":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,0]}}`,
		`{"a":{"dtype":"F64","shape":[2305843009213693952],"data_offsets":[0,0]}}`,
		`{"a":{"dtype":"F32","shape":[65536,65536,65536,65536],"data_offsets":[0,0]}}`,
	} {
		if _, err := ParseSafetensors("f", safetensorsBytes(h, 0)); err == nil {
			t.Errorf("%s: accepted", h)
		}
	}
	// A zero dimension next to a huge one is an empty tensor, not an error.
	st, err := ParseSafetensors("f", safetensorsBytes(`{"a":{"dtype":"F32","shape":[0,4611686018427387904],"data_offsets":[0,0]}}`, 0))
	if err != nil || len(st.Tensors["a"].Data) != 0 {
		t.Errorf("empty tensor: %v", err)
	}
}

func writeTemp(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func npyBytes(shape string, data int) []byte {
	hdr := "{'descr': '<f4', 'fortran_order': False, 'shape': (" + shape + "), }\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&b, binary.LittleEndian, uint16(len(hdr)))
	b.WriteString(hdr)
	b.Write(make([]byte, data))
	return b.Bytes()
}

func TestNPYBadDims(t *testing.T) {
	for _, shape := range []string{"-1, -4", "-2, 2", "4611686018427387904, 4", "2, 4611686018427387904", "4611686018427387904, 0", "99999999999999999999, 1"} {
		if _, err := ReadNPY(writeTemp(t, "a.npy", npyBytes(shape, 16))); err == nil {
			t.Errorf("shape (%s) accepted", shape)
		}
	}
	rows, err := ReadNPY(writeTemp(t, "a.npy", npyBytes("2, 2", 16)))
	if err != nil || len(rows) != 2 || len(rows[1]) != 2 {
		t.Errorf("(2, 2): %v", err)
	}
}

func TestClip(t *testing.T) {
	if Clip("abc") != "abc" {
		t.Error("short string changed")
	}
	s := Clip(strings.Repeat("é", 1000))
	if len(s) > MaxQuote+30 || !strings.HasSuffix(s, "(2000 bytes)") || !strings.HasPrefix(s, "éé") {
		t.Errorf("Clip: %q", s)
	}
}

func TestCheckpointRefusesNaNAndBadManifest(t *testing.T) {
	write := func(t *testing.T, m *JEIRT) string {
		dir := filepath.Join(t.TempDir(), "ck")
		if err := (&Checkpoint{Model: m}).Write(dir, false); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	m := smallJEIRT()
	m.M[0] = float32(math.NaN())
	if err := (&Checkpoint{Model: m}).Write(filepath.Join(t.TempDir(), "ck"), false); err == nil || !strings.Contains(err.Error(), "non-finite") {
		t.Errorf("writing a NaN model table: %v", err)
	}
	// A NaN written by another program, with the manifest's hash made to match.
	dir := write(t, smallJEIRT())
	wpath := filepath.Join(dir, CheckpointWeights)
	w, _ := os.ReadFile(wpath)
	binary.LittleEndian.PutUint32(w[len(w)-4:], math.Float32bits(float32(math.NaN())))
	os.WriteFile(wpath, w, 0o644)
	rehash(t, dir)
	if _, err := LoadCheckpoint(dir); err == nil || !strings.Contains(err.Error(), "non-finite") {
		t.Errorf("NaN model table: %v", err)
	}
	edit := func(t *testing.T, f func(*Manifest)) string {
		dir := write(t, smallJEIRT())
		p := filepath.Join(dir, CheckpointManifest)
		raw, _ := os.ReadFile(p)
		var man Manifest
		if err := json.Unmarshal(raw, &man); err != nil {
			t.Fatal(err)
		}
		f(&man)
		raw, _ = json.Marshal(&man)
		os.WriteFile(p, raw, 0o644)
		return dir
	}
	if _, err := LoadCheckpoint(edit(t, func(m *Manifest) { m.Models[1] = m.Models[0] })); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("duplicate model names: %v", err)
	}
	if _, err := LoadCheckpoint(edit(t, func(m *Manifest) { m.Model.Dim = 1e9 })); err == nil || !strings.Contains(err.Error(), "model.dim") {
		t.Errorf("model.dim 1e9: %v", err)
	}
}

// rehash makes the manifest of the checkpoint in dir record the SHA-256 of
// its files as they are now, as a writer other than jeirt might.
func rehash(t *testing.T, dir string) {
	t.Helper()
	p := filepath.Join(dir, CheckpointManifest)
	raw, _ := os.ReadFile(p)
	var man map[string]any
	if err := json.Unmarshal(raw, &man); err != nil {
		t.Fatal(err)
	}
	sums := man["sha256"].(map[string]any)
	for name := range sums {
		b, _ := os.ReadFile(filepath.Join(dir, name))
		sum := sha256.Sum256(b)
		sums[name] = hex.EncodeToString(sum[:])
	}
	raw, _ = json.Marshal(man)
	os.WriteFile(p, raw, 0o644)
}
