package checkpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
)

func smallJEIRT() *model.JEIRT {
	m := &model.JEIRT{InputDim: 3, Hidden: 2, Dim: 2,
		W1: []float32{1, 0, -1, 0.5, 0.5, 0.5}, C1: []float32{0.1, -2},
		W2: []float32{1, 2, -1, 0.5}, C2: []float32{0, 1},
		M:      []float32{1, 0, -0.5, 2},
		Models: []string{"gpt", "llama"}, Items: []string{"q1", "q2", "q3"},
		R: []float32{0, 0, 0.5, -0.5, 0, 0},
	}
	x := []float32{1, 2, 3, 0, 1, 0, -1, -1, -1}
	m.Q = m.QuestionEmbeddings(x, 3)
	for k := range m.Q {
		m.Q[k] += m.R[k]
	}
	return m
}

func TestQuestionEmbeddingByHand(t *testing.T) {
	m := smallJEIRT()
	// x = (1,2,3): W1·x + c1 = (1-3+0.1, 3-2) = (-1.9, 1) -> relu (0, 1);
	// W2·h + c2 = (2, 0.5) + (0, 1) = (2, 1.5).
	q := m.QuestionEmbedding([]float32{1, 2, 3})
	if !reflect.DeepEqual(q, []float32{2, 1.5}) {
		t.Fatalf("q = %v, want [2 1.5]", q)
	}
	// model 1: q·m/|q| - |q| = (-1 + 3)/2.5 - 2.5 = -1.7
	if got := m.Logit(1, q); math.Abs(got+1.7) > 1e-6 {
		t.Errorf("logit %v, want -1.7", got)
	}
	if got, want := m.Prob(1, q), 1/(1+math.Exp(1.7)); math.Abs(got-want) > 1e-9 {
		t.Errorf("prob %v, want %v", got, want)
	}
	if got := m.Projection(1, q); math.Abs(got-0.8) > 1e-6 {
		t.Errorf("projection %v, want 0.8", got)
	}
}

func TestCheckpointRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ckpt")
	m := smallJEIRT()
	c := &Checkpoint{Model: m, Manifest: Manifest{JEIRTVersion: "0.1.0",
		Encoder: EncoderInfo{Spec: "hash:3", Fingerprint: "hash/v1/3", Dim: 3},
		Model:   ModelInfo{Dropout: 0.5, Residual: 0.01},
		Config:  []byte(`{"output":"x"}`), Metrics: []byte(`{"test":{"accuracy":0.5}}`)}}
	if err := c.Write(dir, false); err != nil {
		t.Fatal(err)
	}
	if err := c.Write(dir, false); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("second write without replace: %v", err)
	}
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Model, m) {
		t.Errorf("model changed:\n got %+v\nwant %+v", got.Model, m)
	}
	if got.Manifest.Encoder.Fingerprint != "hash/v1/3" || got.Manifest.Model.Residual != 0.01 || got.Manifest.Model.Hidden != 2 ||
		compact(got.Manifest.Metrics) != `{"test":{"accuracy":0.5}}` || got.Manifest.FormatVersion != 2 {
		t.Errorf("manifest: %+v", got.Manifest)
	}
	entries, _ := os.ReadDir(filepath.Dir(dir))
	if len(entries) != 1 {
		t.Errorf("temporary files left beside the checkpoint: %v", entries)
	}
}

func TestLoadCheckpointErrors(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ckpt")
	if _, err := Load(dir); err == nil || !errors.Is(err, os.ErrNotExist) || strings.Contains(err.Error(), "not a jeirt checkpoint") {
		t.Errorf("missing folder: %v", err)
	}
	empty := t.TempDir()
	if _, err := Load(empty); err == nil || err.Error() != empty+" is not a jeirt checkpoint: no manifest.json" {
		t.Errorf("empty folder: %v", err)
	}
	c := &Checkpoint{Model: smallJEIRT()}
	if err := c.Write(dir, false); err != nil {
		t.Fatal(err)
	}
	man := filepath.Join(dir, "manifest.json")
	raw, _ := os.ReadFile(man)
	os.WriteFile(man, bytes.Replace(raw, []byte(`"hidden": 2`), []byte(`"hidden": 4`), 1), 0o644)
	_, err := Load(dir)
	if want := filepath.Join(dir, "model.safetensors") + ": tensor W1 has shape [2 3], the manifest implies [4 3]"; err == nil || err.Error() != want {
		t.Errorf("shape mismatch: %v, want %s", err, want)
	}
}

func compact(raw []byte) string {
	var b bytes.Buffer
	json.Compact(&b, raw)
	return b.String()
}
