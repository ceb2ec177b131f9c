package serve

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReadUpstreams feeds upstreams files to ReadUpstreams: every input gives
// named upstreams with http(s) base URLs, or a short error.
func FuzzReadUpstreams(f *testing.F) {
	f.Add([]byte("upstreams:\n  - name: gpt-4o\n    base_url: https://api.openai.com/v1\n  - name: llama\n    base_url: http://127.0.0.1:8000/v1\n    model: meta-llama/Llama-3.1-8B-Instruct\n"))
	f.Add([]byte(`[{"name":"a","base_url":"http://x/v1","api_key_env":"HOME"}]`))
	f.Add([]byte("- name: a\n  base_url: ftp://x\n"))
	p := filepath.Join(f.TempDir(), "upstreams.yaml")
	f.Fuzz(func(t *testing.T, raw []byte) {
		if err := os.WriteFile(p, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		ups, err := ReadUpstreams(p)
		if err != nil {
			if len(err.Error()) > 4096 {
				t.Errorf("error of %d bytes", len(err.Error()))
			}
			return
		}
		for name, u := range ups {
			b := strings.ToLower(u.BaseURL)
			if name == "" || !strings.HasPrefix(b, "http://") && !strings.HasPrefix(b, "https://") {
				t.Fatalf("upstream %q with base_url %q", name, u.BaseURL)
			}
		}
	})
}
