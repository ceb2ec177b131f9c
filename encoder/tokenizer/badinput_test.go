package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// A tokenizer.json with an empty added token used to loop for ever.
func TestTokenizerEmptyAddedToken(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(tinyBERT(t), "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	for _, tok := range []map[string]any{
		{"id": 5, "content": "", "normalized": false},
		{"id": 5, "content": "", "normalized": true},
		{"id": -1, "content": "[X]"},
		{"id": 1 << 40, "content": "[X]"},
	} {
		cfg["added_tokens"] = append(cfg["added_tokens"].([]any), tok)
		b, _ := json.Marshal(cfg)
		p := filepath.Join(t.TempDir(), "tokenizer.json")
		os.WriteFile(p, b, 0o644)
		if _, err := Load(p, 32); err == nil {
			t.Errorf("added token %v accepted", tok)
		}
		cfg["added_tokens"] = cfg["added_tokens"].([]any)[:len(cfg["added_tokens"].([]any))-1]
	}
}
