package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model/read"
)

// TestItemTextCRLFFromCSV reads the fixture's sentence with a \r\n line
// break from an item CSV written as Windows writes it (CRLF lines, the text
// quoted) and from a JSONL file, and tokenizes it with ModernBERT's
// byte-level BPE: the ids must be Hugging Face's for the text as given.
// Read as encoding/csv reads it (the \r dropped), the ids differ.
func TestItemTextCRLFFromCSV(t *testing.T) {
	dir := fixture(t, "tiny-modernbert")
	b, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exp struct {
		Sentences []struct {
			Text string  `json:"text"`
			IDs  []int32 `json:"ids"`
		} `json:"sentences"`
	}
	if err := json.Unmarshal(b, &exp); err != nil {
		t.Fatal(err)
	}
	k := -1
	for i, s := range exp.Sentences {
		if strings.Contains(s.Text, "\r\n") {
			k = i
		}
	}
	if k < 0 {
		t.Fatal("expected.json has no sentence with \\r\\n")
	}
	want := exp.Sentences[k]
	tok, err := Load(filepath.Join(dir, "tokenizer.json"), 128)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	csvPath := filepath.Join(tmp, "items.csv")
	quoted := `"` + strings.ReplaceAll(want.Text, `"`, `""`) + `"`
	os.WriteFile(csvPath, []byte("item_id,text\r\nplain,one line\r\ncrlf,"+quoted+"\r\n"), 0o644)
	jsonl := filepath.Join(tmp, "items.jsonl")
	line, _ := json.Marshal(map[string]string{"id": "crlf", "text": want.Text})
	os.WriteFile(jsonl, append(line, '\n'), 0o644)
	for _, path := range []string{csvPath, jsonl} {
		items, err := read.Items(path)
		if err != nil {
			t.Fatal(err)
		}
		got := items.Text[len(items.Text)-1]
		if got != want.Text {
			t.Fatalf("%s: text %q, want %q", path, got, want.Text)
		}
		e, err := tok.Encode(got)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(e.IDs, want.IDs) {
			t.Errorf("%s: ids\n got  %v\n want %v", path, e.IDs, want.IDs)
		}
	}
	e, _ := tok.Encode(strings.ReplaceAll(want.Text, "\r\n", "\n"))
	if reflect.DeepEqual(e.IDs, want.IDs) {
		t.Error("the text with \\n for \\r\\n encodes to the same ids: the test would not see a dropped \\r")
	}
}
