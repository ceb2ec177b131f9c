package pipeline

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/encoder"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
)

// eval with a checkpoint whose encoder gives vectors of another length than
// W1 takes stopped in blas ("insufficient length"); it is now an error that
// names both lengths.
func TestEvalEncoderDimMismatch(t *testing.T) {
	m := &model.JEIRT{InputDim: 3, Hidden: 2, Dim: 2,
		W1: []float32{1, 0, -1, 0.5, 0.5, 0.5}, C1: []float32{0.1, -2},
		W2: []float32{1, 2, -1, 0.5}, C2: []float32{0, 1},
		M: []float32{1, 0, 0, 1}, Q: []float32{1, 1}, Models: []string{"a", "b"}, Items: []string{"q1"}}
	enc, err := encoder.Open("hash:16")
	if err != nil {
		t.Fatal(err)
	}
	ck := &checkpoint.Checkpoint{Model: m}
	ck.Manifest.Encoder = checkpoint.EncoderInfo{Spec: "hash:16", Fingerprint: enc.Fingerprint(), Dim: 16}
	dir := filepath.Join(t.TempDir(), "ck")
	if err := ck.Write(dir, false); err != nil {
		t.Fatal(err)
	}
	ck, err = checkpoint.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := &model.Responses{Models: []string{"a", "b"}, Items: []string{"q1", "new"}, ItemText: []string{"", "a new question"},
		Model: []int32{0, 1, 0, 1}, Item: []int32{0, 0, 1, 1}, Label: []uint8{1, 0, 0, 1}}
	_, err = EvalCheckpoint(context.Background(), ck, r, nil)
	if err == nil || !strings.Contains(err.Error(), "16") || !strings.Contains(err.Error(), "3") {
		t.Errorf("got %v, want an error naming lengths 16 and 3", err)
	}
}
