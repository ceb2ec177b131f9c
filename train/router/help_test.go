package router

import (
	"strings"
	"testing"

	"github.com/jeirt/jeirt/train/route"
)

// TestSpecHelp: the flag help names every registered rule in a spec
// route.ParseRule reads, and each parameter flag's help is its rule's.
func TestSpecHelp(t *testing.T) {
	h := SpecHelp()
	if want := "best-single, max-p, shortlist?k=3, margin?delta=0.05, min-p?p=0.7 (with costs) or lambda?lambda=0.01 (with costs)"; h != want {
		t.Errorf("SpecHelp() = %q, want %q", h, want)
	}
	for _, r := range route.Rules() {
		if !strings.Contains(h, r.Name) {
			t.Errorf("rule %s missing from %q", r.Name, h)
		}
		if FlagHelp(r.Name) != r.Help {
			t.Errorf("FlagHelp(%s) = %q, want %q", r.Name, FlagHelp(r.Name), r.Help)
		}
	}
	for _, spec := range strings.Split(strings.ReplaceAll(strings.ReplaceAll(h, " (with costs)", ""), " or ", ", "), ", ") {
		if _, err := route.ParseRule(spec); err != nil {
			t.Errorf("%s: %v", spec, err)
		}
	}
}
