package checkpoint

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestCheckpointEncoderRecord: Write stores the encoder's files and sets
// rel_path from the checkpoint folder; LoadCheckpoint reads them back and
// records where it read from; a copy of the manifest carries the files into
// a new checkpoint (as add-model writes one).
func TestCheckpointEncoderRecord(t *testing.T) {
	root := t.TempDir()
	enc := EncoderInfo{Spec: "tfidf", Fingerprint: "fp", Dim: 3, Path: filepath.Join(root, "models", "bert"),
		Files: []string{"tfidf.json", "tfidf.safetensors"},
		Data:  map[string][]byte{"tfidf.json": []byte(`{"a":1}`), "tfidf.safetensors": {1, 2, 3}}}
	ck := &Checkpoint{Model: smallJEIRT(), Manifest: Manifest{Encoder: enc}}
	dir := filepath.Join(root, "runs", "ck")
	os.MkdirAll(filepath.Dir(dir), 0o755)
	if err := ck.Write(dir, false); err != nil {
		t.Fatal(err)
	}
	back, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := back.Manifest.Encoder
	if got.RelPath != "../../models/bert" || got.Path != enc.Path || back.Dir != dir {
		t.Errorf("rel_path %q path %q dir %q", got.RelPath, got.Path, back.Dir)
	}
	if !slices.Equal(got.Files, enc.Files) || string(got.Data["tfidf.json"]) != `{"a":1}` || !slices.Equal(got.Data["tfidf.safetensors"], []byte{1, 2, 3}) {
		t.Errorf("encoder files %v %q", got.Files, got.Data)
	}
	next := &Checkpoint{Model: back.Model, Manifest: back.Manifest}
	if err := next.Write(filepath.Join(root, "ck2"), false); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "ck2", "tfidf.safetensors")); err != nil || !slices.Equal(b, []byte{1, 2, 3}) {
		t.Errorf("copied encoder file: %v %v", b, err)
	}
	if b, _ := Load(filepath.Join(root, "ck2")); b.Manifest.Encoder.RelPath != "../models/bert" {
		t.Errorf("ck2 rel_path %q", b.Manifest.Encoder.RelPath)
	}

	// A listed file without contents, or one clashing with an extra file, is refused.
	bad := &Checkpoint{Model: smallJEIRT(), Manifest: Manifest{Encoder: EncoderInfo{Files: []string{"x.json"}}}}
	if err := bad.Write(filepath.Join(root, "bad"), false); err == nil {
		t.Error("encoder file without contents: no error")
	}
	bad = &Checkpoint{Model: smallJEIRT(), Files: map[string][]byte{"x.json": nil},
		Manifest: Manifest{Encoder: EncoderInfo{Files: []string{"x.json"}, Data: map[string][]byte{"x.json": nil}}}}
	if err := bad.Write(filepath.Join(root, "bad"), false); err == nil {
		t.Error("encoder file clashing with an extra file: no error")
	}
	os.Remove(filepath.Join(dir, "tfidf.json"))
	if _, err := Load(dir); err == nil {
		t.Error("missing encoder file: no error")
	}
}
