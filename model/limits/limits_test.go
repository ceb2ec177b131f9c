package limits

import (
	"strings"
	"testing"
)

func TestClip(t *testing.T) {
	if Clip("abc") != "abc" {
		t.Error("short string changed")
	}
	s := Clip(strings.Repeat("é", 1000))
	if len(s) > MaxQuote+30 || !strings.HasSuffix(s, "(2000 bytes)") || !strings.HasPrefix(s, "éé") {
		t.Errorf("Clip: %q", s)
	}
}
