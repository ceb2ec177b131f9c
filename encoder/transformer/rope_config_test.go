package transformer

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The rotary bases from each way config.json can give them.
func TestModernBERTRopeBases(t *testing.T) {
	for _, c := range []struct {
		name, json    string
		global, local float64
		err           string
	}{
		{"defaults", `{}`, 160000, 10000, ""},
		{"keys", `{"global_rope_theta": 5e4, "local_rope_theta": 2e3}`, 5e4, 2e3, ""},
		{"local null", `{"global_rope_theta": 5e4, "local_rope_theta": null}`, 5e4, 5e4, ""},
		{"rope_parameters by layer", `{"local_rope_theta": 1, "rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": 8e4},
			"sliding_attention": {"rope_type": "default", "rope_theta": 9e3}}}`, 8e4, 9e3, ""},
		{"rope_parameters flat", `{"rope_parameters": {"rope_type": "default", "rope_theta": 7e4}}`, 7e4, 7e4, ""},
		{"rope_type", `{"rope_parameters": {"full_attention": {"rope_type": "yarn", "rope_theta": 8e4}}}`, 0, 0,
			`rope_parameters.full_attention: rope_type "yarn" is not supported`},
		{"unknown layer type", `{"rope_parameters": {"chunked_attention": {"rope_theta": 8e4}}}`, 0, 0, "unknown layer type"},
		{"negative", `{"local_rope_theta": -1}`, 0, 0, "local rope theta -1 must be a positive number"},
		{"not a number", `{"local_rope_theta": "big"}`, 0, 0, `local_rope_theta "big" is not a number`},
	} {
		var cfg ModernBERTConfig
		if err := json.Unmarshal([]byte(c.json), &cfg); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		err := cfg.ropeBases("config.json")
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || cfg.GlobalRopeTheta != c.global || cfg.LocalRopeTheta != c.local {
			t.Errorf("%s: global %v local %v (%v), want %v and %v", c.name, cfg.GlobalRopeTheta, cfg.LocalRopeTheta, err, c.global, c.local)
		}
	}
}

// On the fixture: local_rope_theta null encodes as the global base written
// out, the rope_parameters form as the legacy keys, and a changed local base
// changes the vectors (the local layers use it).
func TestModernBERTRopeConfigForms(t *testing.T) {
	src := fixture(t, "tiny-modernbert")
	texts := []string{"The local layers rotate with their own base.", "short"}
	encode := func(edit func(m map[string]any)) [][]float32 {
		dir := copyFolder(t, src)
		path := filepath.Join(dir, "config.json")
		b, _ := os.ReadFile(path)
		var m map[string]any
		json.Unmarshal(b, &m)
		edit(m)
		b, _ = json.Marshal(m)
		os.WriteFile(path, b, 0o644)
		enc, err := OpenModernBERT(dir)
		if err != nil {
			t.Fatal(err)
		}
		v, err := enc.Encode(context.Background(), texts)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	same := func(a, b [][]float32) bool {
		for i := range a {
			for k := range a[i] {
				if a[i][k] != b[i][k] {
					return false
				}
			}
		}
		return true
	}
	plain := encode(func(m map[string]any) {})
	null := encode(func(m map[string]any) { m["local_rope_theta"] = nil })
	asGlobal := encode(func(m map[string]any) { m["local_rope_theta"] = m["global_rope_theta"] })
	params := encode(func(m map[string]any) {
		m["rope_parameters"] = map[string]any{
			"full_attention":    map[string]any{"rope_type": "default", "rope_theta": m["global_rope_theta"]},
			"sliding_attention": map[string]any{"rope_type": "default", "rope_theta": m["local_rope_theta"]},
		}
		delete(m, "global_rope_theta")
		delete(m, "local_rope_theta")
	})
	if !same(null, asGlobal) {
		t.Error("local_rope_theta null does not encode as the global base")
	}
	if same(null, plain) {
		t.Error("the local base does not change the vectors")
	}
	if !same(params, plain) {
		t.Error("rope_parameters does not encode as global_rope_theta and local_rope_theta")
	}
}
