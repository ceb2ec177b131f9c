package encoder

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
		b, err := os.ReadFile(filepath.Join("..", "..", "shared", "fixtures", fx, "tokenizer.json"))
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
		tok, err := LoadTokenizer(p, 64)
		if err != nil {
			return
		}
		enc, err := tok.Encode(text)
		if err == nil && len(enc.IDs) > 64 {
			t.Fatalf("%d ids for max length 64", len(enc.IDs))
		}
	})
}

// FuzzEncoderConfig decodes config.json as each supported architecture and
// checks it as OpenModel does.
func FuzzEncoderConfig(f *testing.F) {
	for _, fx := range []string{"tiny-bert", "tiny-mpnet", "tiny-modernbert"} {
		if b, err := os.ReadFile(filepath.Join("..", "..", "shared", "fixtures", fx, "config.json")); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"model_type":"bert","hidden_act":"gelu","hidden_size":2000000000,"num_attention_heads":0}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, cfg := range []archConfig{&BertConfig{}, &MPNetConfig{}, &ModernBERTConfig{}} {
			if json.Unmarshal(raw, cfg) != nil {
				continue
			}
			if cfg.check("config.json") == nil && (cfg.hidden() <= 0 || cfg.maxPositions() <= 0) {
				t.Fatalf("%T accepted with hidden %d, max positions %d", cfg, cfg.hidden(), cfg.maxPositions())
			}
		}
	})
}

func FuzzReadVectors(f *testing.F) {
	f.Add("v.json", []byte(`{"q1":[1,2],"q2":[3,4]}`))
	f.Add("v.jsonl", []byte(`{"id":"q1","vector":[1,2]}`+"\n"))
	f.Add("v.csv", []byte("id,v0,v1\nq1,1,2\n"))
	f.Add("v.npy", []byte("\x93NUMPY\x01\x00\x46\x00{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 4611686018427387904), }\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, name string, raw []byte) {
		ext := filepath.Ext(name)
		switch ext {
		case ".json", ".jsonl", ".csv", ".npy":
		default:
			ext = ".json"
		}
		p := filepath.Join(dir, "v"+ext)
		if err := os.WriteFile(p, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		if ext == ".npy" {
			os.WriteFile(IDsPath(p), []byte("q1\nq2\n"), 0o644)
		}
		ReadVectors(p)
	})
}
