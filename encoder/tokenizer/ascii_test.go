package tokenizer

import (
	"testing"
	"unicode"
)

// The ASCII fast paths of isWhitespace and isControl give what the Unicode
// tables give for every ASCII code.
func TestASCIIFastPathsAgree(t *testing.T) {
	for r := rune(0); r < 0x80; r++ {
		if isWhitespace(r) != unicode.Is(unicode.White_Space, r) {
			t.Errorf("whitespace %q", r)
		}
		want := r != '\t' && r != '\n' && r != '\r' && (unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs) || !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z))
		if isControl(r) != want {
			t.Errorf("control %q", r)
		}
	}
}
