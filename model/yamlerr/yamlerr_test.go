package yamlerr

import (
	"errors"
	"testing"
)

// A tab in a YAML line's indentation is named with its line, whichever
// line the parser's message names; any other error is kept.
func TestWrap(t *testing.T) {
	raw := []byte("data:\n  responses: r.csv\nmodel:\n\tdim: 4\n")
	for _, c := range []struct{ parser, want string }{
		{"yaml: line 4: found character that cannot start any token", "c.yaml:4: tabs are not allowed in YAML: indent line 4 with spaces"},
		{"yaml: line 5: found character that cannot start any token", "c.yaml:4: tabs are not allowed in YAML: indent line 4 with spaces"},
		{"yaml: line 2: did not find expected key", "c.yaml: yaml: line 2: did not find expected key"},
	} {
		if got := Wrap(errors.New(c.parser), raw, "c.yaml"); got.Error() != c.want {
			t.Errorf("%s: %q, want %q", c.parser, got, c.want)
		}
	}
	// A tab inside a value, not in the indentation, is not the cause.
	if got := Wrap(errors.New("yaml: line 1: mapping values are not allowed in this context"), []byte("a: b\tc: d\n"), "x.yaml"); got.Error() != "x.yaml: yaml: line 1: mapping values are not allowed in this context" {
		t.Errorf("%v", got)
	}
}
