package encoder

import (
	"os"
	"path/filepath"
	"testing"
)

// tinyBERT returns the shared tiny-bert fixture folder, or skips the test when
// ../shared is absent.
func tinyBERT(t testing.TB) string {
	dir := filepath.Join("..", "..", "shared", "fixtures", "tiny-bert")
	if _, err := os.Stat(filepath.Join(dir, "tokenizer.json")); err != nil {
		t.Skipf("tiny-bert fixture not found: %v", err)
	}
	return dir
}

// copyFixture copies the tiny-bert folder to a temporary folder.
func copyFixture(t *testing.T) string {
	src := tinyBERT(t)
	dst := t.TempDir()
	for _, name := range []string{"config.json", "model.safetensors", "tokenizer.json", "modules.json", "sentence_bert_config.json", "1_Pooling/config.json"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(filepath.Join(dst, name)), 0o755)
		if err := os.WriteFile(filepath.Join(dst, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}
