package suggest

import "testing"

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{{"kitten", "sitting", 3}, {"", "abc", 3}, {"θa", "θb", 1}, {"same", "same", 0}} {
		if got := EditDistance(c.a, c.b); got != c.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

// A name that contains the query, or is contained in it, beats a nearer
// spelling; otherwise the least edit distance wins, ties the earlier name.
func TestClosest(t *testing.T) {
	names := []string{"claude-3", "20240620_GPT-4o", "gpt-3", "gpt-2"}
	for _, c := range []struct{ name, want string }{
		{"gpt-4o", "20240620_GPT-4o"},
		{"gpt-5", "gpt-3"},
		{"claude", "claude-3"},
	} {
		if got := Closest(c.name, names); got != c.want {
			t.Errorf("Closest(%q) = %q, want %q", c.name, got, c.want)
		}
	}
	if got := Closest("gpt-4", []string{"gpt-4o-mini", "gpt-4o"}); got != "gpt-4o" {
		t.Errorf("of two containing names, the nearer in length: %q", got)
	}
	if got := Closest("x", nil); got != "" {
		t.Errorf("Closest of no names = %q", got)
	}
}
