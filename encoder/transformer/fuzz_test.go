package transformer

import (
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
