package transformer

import (
	"os"
	"path/filepath"
	"testing"
)

// fixture returns a shared fixture folder, or skips the test when ../shared
// is absent.
func fixture(t testing.TB, name string) string {
	dir := filepath.Join("..", "..", "..", "shared", "fixtures", name)
	if _, err := os.Stat(filepath.Join(dir, "tokenizer.json")); err != nil {
		t.Skipf("%s fixture not found: %v", name, err)
	}
	return dir
}

// tinyBERT returns the shared tiny-bert fixture folder, or skips the test when
// ../shared is absent.
func tinyBERT(t testing.TB) string { return fixture(t, "tiny-bert") }
