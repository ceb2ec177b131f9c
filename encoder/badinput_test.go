package encoder

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model/checkpoint"
)

// hash:100000000 and tfidf:2000000000 used to run out of memory.
func TestEncoderDimBounded(t *testing.T) {
	for _, spec := range []string{"hash:100000000", "tfidf:2000000000", "hash:-3"} {
		if _, err := Open(spec); err == nil || !strings.Contains(err.Error(), "65536") {
			t.Errorf("%s: %v", spec, err)
		}
	}
	if _, err := NewHash(1 << 20); err == nil {
		t.Error("NewHash(1<<20) accepted")
	}
	if e, err := Open("hash:64"); err != nil || e.Dim() != 64 {
		t.Errorf("hash:64: %v", err)
	}
}

// A fitted TF-IDF's width is 1 to 65,536 and its weights finite.
func TestLoadTFIDFLimits(t *testing.T) {
	e, _ := NewTFIDF(2)
	if err := e.Fit(context.Background(), []string{"a spider and a fly", "the capital of france", "a fly"}); err != nil {
		t.Fatal(err)
	}
	st, _ := e.State()
	bad := regexp.MustCompile(`"dim":\d+`).ReplaceAllString(string(st[checkpoint.TFIDFVocabFile]), `"dim":0`)
	if bad == string(st[checkpoint.TFIDFVocabFile]) {
		t.Fatalf("no dim in %s", st[checkpoint.TFIDFVocabFile])
	}
	_, err := LoadTFIDF(map[string][]byte{checkpoint.TFIDFVocabFile: []byte(bad), checkpoint.TFIDFWeightsFile: st[checkpoint.TFIDFWeightsFile]}, "ck")
	if err == nil || !strings.Contains(err.Error(), "ck/"+checkpoint.TFIDFVocabFile+": dim 0 must be in [1, 65536]") {
		t.Errorf("dim 0: %v", err)
	}
}
