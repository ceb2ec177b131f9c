package transformer

import (
	"os"
	"path/filepath"
	"testing"
)

// fixture returns a shared fixture folder, or skips the test when ../shared
// is absent. JEIRT_FIXTURES names the fixtures' folder where ../shared is not
// beside the checkout (scripts/gpu-check.sh runs this package's test binary
// from its bundle); a fixture missing there is a failure, not a skip.
func fixture(t testing.TB, name string) string {
	dir := filepath.Join("..", "..", "..", "shared", "fixtures", name)
	given := os.Getenv("JEIRT_FIXTURES")
	if given != "" {
		dir = filepath.Join(given, name)
	}
	if _, err := os.Stat(filepath.Join(dir, "tokenizer.json")); err != nil {
		if given != "" {
			t.Fatalf("%s fixture not found in JEIRT_FIXTURES: %v", name, err)
		}
		t.Skipf("%s fixture not found: %v", name, err)
	}
	return dir
}

// tinyBERT returns the shared tiny-bert fixture folder, or skips the test when
// ../shared is absent.
func tinyBERT(t testing.TB) string { return fixture(t, "tiny-bert") }
