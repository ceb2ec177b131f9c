package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func FuzzLoadTokenizer(f *testing.F) {
	// The fixtures' tokenizers with their vocabularies (and merges) cut to
	// the first few hundred entries: small seeds keep the fuzzer fast.
	for _, fx := range []string{"tiny-bert", "tiny-mpnet", "tiny-modernbert"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "fixtures", fx, "tokenizer.json"))
		if err != nil {
			continue
		}
		var cfg map[string]any
		if json.Unmarshal(b, &cfg) != nil {
			continue
		}
		if m, ok := cfg["model"].(map[string]any); ok {
			if v, ok := m["vocab"].(map[string]any); ok {
				for k, id := range v {
					if n, _ := id.(float64); n >= 300 && k != "[UNK]" && k != "<unk>" {
						delete(v, k)
					}
				}
			}
			if mg, ok := m["merges"].([]any); ok && len(mg) > 50 {
				m["merges"] = mg[:50]
			}
		}
		small, _ := json.Marshal(cfg)
		f.Add(small, "Hello, world! [SEP] naïve ☃")
	}
	f.Add([]byte(`{"model":{"type":"WordPiece","vocab":{"[UNK]":0,"a":1}},"added_tokens":[{"id":2,"content":""}]}`), "a a")
	f.Add([]byte(`{"model":{"type":"BPE","vocab":{},"merges":[]},"pre_tokenizer":{"type":"ByteLevel"}}`), "x")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, raw []byte, text string) {
		p := filepath.Join(dir, "tokenizer.json")
		if err := os.WriteFile(p, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		tok, err := Load(p, 64)
		if err != nil {
			return
		}
		enc, err := tok.Encode(text)
		if err == nil && len(enc.IDs) > 64 {
			t.Fatalf("%d ids for max length 64", len(enc.IDs))
		}
	})
}
