package transformer

import (
	"crypto/sha256"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzEncoderConfig decodes config.json as each supported architecture and
// checks it as OpenModel does.
func FuzzEncoderConfig(f *testing.F) {
	for _, fx := range []string{"tiny-bert", "tiny-mpnet", "tiny-modernbert"} {
		if b, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "fixtures", fx, "config.json")); err == nil {
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

// FuzzModulesJSON feeds a sentence-transformers folder's modules.json, the
// Pooling module's config.json and sentence_bert_config.json (seeded with the
// fixtures') to the folder reader with tiny-bert's config.json: every input
// gives a pipeline with at least one known pooling mode and a sequence length
// within the model's positions, or a short error.
func FuzzModulesJSON(f *testing.F) {
	fx := filepath.Join("..", "..", "..", "shared", "fixtures")
	for _, name := range []string{"tiny-bert", "tiny-mpnet", "tiny-modernbert"} {
		mods, _ := os.ReadFile(filepath.Join(fx, name, "modules.json"))
		pool, _ := os.ReadFile(filepath.Join(fx, name, "1_Pooling", "config.json"))
		sbert, _ := os.ReadFile(filepath.Join(fx, name, "sentence_bert_config.json"))
		f.Add(mods, pool, sbert)
	}
	f.Add([]byte(`[{"path":"../..","type":"sentence_transformers.models.Pooling"}]`), []byte(`{}`), []byte(`{"max_seq_length":-5}`))
	f.Add([]byte(`[{"path":"1_Pooling","type":"sentence_transformers.models.Pooling"},{"path":"","type":"sentence_transformers.models.Transformer"}]`),
		[]byte(`{"word_embedding_dimension":1e300,"pooling_mode_max_tokens":true}`), []byte(`{"max_seq_length":1e10}`))
	f.Add([]byte(`[{"path":"","type":"x"}]`), []byte(`{"pooling_mode_lasttoken":true}`), []byte(`[]`))
	var cfg BertConfig
	raw, err := os.ReadFile(filepath.Join(fx, "tiny-bert", "config.json"))
	if err == nil {
		err = json.Unmarshal(raw, &cfg)
	}
	if err != nil {
		f.Skip("tiny-bert fixture:", err)
	}
	dir := f.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "1_Pooling"), 0o755); err != nil {
		f.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "config.json"), raw, 0o644)
	modes := map[string]bool{PoolCLS: true, PoolMax: true, PoolMean: true, PoolMeanSqrtLen: true}
	f.Fuzz(func(t *testing.T, mods, pool, sbert []byte) {
		for name, b := range map[string][]byte{"modules.json": mods, "1_Pooling/config.json": pool, "sentence_bert_config.json": sbert} {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		mf := &modelFolder{Pipeline: Pipeline{Pooling: []string{PoolMean}}, dir: dir, hash: sha256.New()}
		if err := mf.readPipelineFiles(&cfg); err != nil {
			if len(err.Error()) > 2048 {
				t.Errorf("error of %d bytes", len(err.Error()))
			}
			return
		}
		if len(mf.Pooling) == 0 || mf.MaxSeqLen < 1 || mf.MaxSeqLen > cfg.maxPositions() {
			t.Fatalf("accepted with pooling %v, max_seq_length %d (positions %d)", mf.Pooling, mf.MaxSeqLen, cfg.maxPositions())
		}
		for _, m := range mf.Pooling {
			if !modes[m] {
				t.Fatalf("unknown pooling mode %q", m)
			}
		}
	})
}
