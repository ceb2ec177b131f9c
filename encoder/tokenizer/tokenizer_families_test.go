package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
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

// TestTokenizerFamiliesMatchHuggingFace compares MPNet's WordPiece with <s>
// </s> and ModernBERT's byte-level BPE with whitespace-run added tokens with
// the ids of the official tokenizers binding, truncated at 128.
func TestTokenizerFamiliesMatchHuggingFace(t *testing.T) {
	for _, name := range []string{"tiny-mpnet", "tiny-modernbert"} {
		t.Run(name, func(t *testing.T) {
			dir := fixture(t, name)
			tok, err := Load(filepath.Join(dir, "tokenizer.json"), 128)
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(dir, "tokens.json"))
			if err != nil {
				t.Fatal(err)
			}
			var cases []tokenCase
			if err := json.Unmarshal(b, &cases); err != nil {
				t.Fatal(err)
			}
			if len(cases) != 33 {
				t.Fatalf("tokens.json has %d sentences, want 33", len(cases))
			}
			for i, c := range cases {
				e, err := tok.Encode(c.Text)
				if err != nil {
					t.Fatalf("sentence %d: %v", i, err)
				}
				if !reflect.DeepEqual(e.IDs, c.IDs) {
					t.Errorf("sentence %d %q:\n got  %v\n want %v (%q)", i, c.Text, e.IDs, c.IDs, c.Tokens)
				}
				if !reflect.DeepEqual(e.AttentionMask, c.AttentionMask) {
					t.Errorf("sentence %d: attention mask %v, want %v", i, e.AttentionMask, c.AttentionMask)
				}
				if e.Untruncated != c.Untruncated {
					t.Errorf("sentence %d: untruncated length %d, want %d", i, e.Untruncated, c.Untruncated)
				}
			}
		})
	}
}

// TestTokenizerRobertaProcessing reads an MPNet tokenizer.json whose
// post-processor is RobertaProcessing, as older files store it, and gets the
// same ids as with the TemplateProcessing of the fixture.
func TestTokenizerRobertaProcessing(t *testing.T) {
	dir := fixture(t, "tiny-mpnet")
	b, err := os.ReadFile(filepath.Join(dir, "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m["post_processor"] = map[string]any{"type": "RobertaProcessing", "sep": []any{"</s>", 2}, "cls": []any{"<s>", 0},
		"trim_offsets": true, "add_prefix_space": false}
	b, _ = json.Marshal(m)
	path := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	roberta, err := Load(path, 128)
	if err != nil {
		t.Fatal(err)
	}
	template, err := Load(filepath.Join(dir, "tokenizer.json"), 128)
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"", "The quick brown fox.", "is <mask>."} {
		a, _ := roberta.Encode(text)
		w, _ := template.Encode(text)
		if !reflect.DeepEqual(a.IDs, w.IDs) {
			t.Errorf("%q: %v, want %v", text, a.IDs, w.IDs)
		}
	}
}
