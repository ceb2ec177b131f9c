package encoder

import (
	"strings"
	"testing"
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
