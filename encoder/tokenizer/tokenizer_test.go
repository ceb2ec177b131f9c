package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// tinyBERT returns the shared tiny-bert fixture folder, or skips the test when
// ../shared is absent.
func tinyBERT(t testing.TB) string {
	dir := filepath.Join("..", "..", "..", "shared", "fixtures", "tiny-bert")
	if _, err := os.Stat(filepath.Join(dir, "tokenizer.json")); err != nil {
		t.Skipf("tiny-bert fixture not found: %v", err)
	}
	return dir
}

type tokenCase struct {
	Text          string   `json:"text"`
	IDs           []int32  `json:"ids"`
	AttentionMask []int32  `json:"attention_mask"`
	Tokens        []string `json:"tokens"`
	Untruncated   int      `json:"untruncated_length"`
}

func TestTokenizerMatchesHuggingFace(t *testing.T) {
	dir := tinyBERT(t)
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
	if len(cases) != 27 {
		t.Fatalf("tokens.json has %d sentences, want 27", len(cases))
	}
	for i, c := range cases {
		e, err := tok.Encode(c.Text)
		if err != nil {
			t.Fatalf("sentence %d: %v", i, err)
		}
		if !reflect.DeepEqual(e.IDs, c.IDs) {
			t.Errorf("sentence %d %q:\n got  %v\n want %v (%v)", i, c.Text, e.IDs, c.IDs, c.Tokens)
		}
		if !reflect.DeepEqual(e.AttentionMask, c.AttentionMask) {
			t.Errorf("sentence %d: attention mask %v, want %v", i, e.AttentionMask, c.AttentionMask)
		}
		if e.Untruncated != c.Untruncated {
			t.Errorf("sentence %d: untruncated length %d, want %d", i, e.Untruncated, c.Untruncated)
		}
	}
}
