package model

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The readers must never panic, hang or allocate far beyond the input: every
// input gives responses or an error. Run one with
// go test -run '^$' -fuzz '^FuzzReadFile$' -fuzztime 60s ./model
// (scripts/fuzz.sh runs them all).

var layoutSeeds = []struct {
	format, body string
}{
	{"long", "model,item,label\nm1,q1,1\nm1,q2,0\nm2,q1,1\n"},
	{"wide", "model,q1,q2\nm1,1,0\nm2,0,1\n"},
	{"wide-items", "item,m1,m2\nq1,1,0\nq2,,1\n"},
	{"pyirt", `{"subject_id":"m1","responses":{"q1":1,"q2":0}}` + "\n"},
	{"patterns", "q1,q2,freq\n1,0,3\n0,1,2\n"},
	{"patterns", "q1,q2,freq\n1,0,100000000000\n"},
	{"patterns", "q1,q2,freq\n1,0,9223372036854775807\n0,1,9223372036854775807\n"},
	{"auto", "model\titem\tlabel\nm\tq\t-1\nm\tr\t1\n"},
	{"auto", "a,b\n\"x\n"},
	{"long", "model,item,label\nm,q,1.00\nm,q,1\n"},
}

func FuzzReadFile(f *testing.F) {
	for _, s := range layoutSeeds {
		for k, format := range []string{"auto", "long", "wide", "wide-items", "pyirt", "patterns"} {
			if format == s.format || format == "auto" {
				f.Add(uint8(k), []byte(s.body))
			}
		}
	}
	formats := append([]string{}, Formats...)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, format uint8, body []byte) {
		p := filepath.Join(dir, "r.csv")
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
		r, _, err := ReadFile(p, ReadOptions{Format: formats[int(format)%len(formats)], NoCache: true})
		if err != nil {
			if len(err.Error()) > 4096 {
				t.Errorf("error of %d bytes", len(err.Error()))
			}
			return
		}
		for c := range r.Label {
			if int(r.Model[c]) >= len(r.Models) || int(r.Item[c]) >= len(r.Items) || r.Label[c] > 1 {
				t.Fatalf("cell %d out of range: model %d item %d label %d", c, r.Model[c], r.Item[c], r.Label[c])
			}
		}
	})
}

func FuzzReadItems(f *testing.F) {
	f.Add([]byte("item_id,text\nq1,What is 2+2?\nq2,\"a, b\"\n"))
	f.Add([]byte("id,prompt\nq1,\n"))
	f.Add([]byte(`{"item_id":"q1","text":"x"}` + "\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, name := range []string{"items.csv", "items.jsonl"} {
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, body, 0o644); err != nil {
				t.Fatal(err)
			}
			if tab, err := ReadItems(p); err == nil && len(tab.IDs) != len(tab.Text) {
				t.Fatalf("%d ids, %d texts", len(tab.IDs), len(tab.Text))
			}
		}
	})
}

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
