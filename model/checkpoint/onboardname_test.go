package checkpoint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOnboardedDir(t *testing.T) {
	dir := t.TempDir()
	ck := filepath.Join(dir, "ck")
	cases := []struct {
		from  string
		names []string
		want  string
	}{
		{ck, []string{"qwen-2.5-7b"}, "ck.plus-qwen-2.5-7b"},
		{ck, []string{"a/b c"}, "ck.plus-a_b_c"},
		{ck, []string{"x", "y"}, "ck.plus-2-models"},
		{ck + ".plus-qwen-2.5-7b", []string{"llama"}, "ck.plus-llama"}, // no growth
		{ck + ".plus-a-2/", []string{"b"}, "ck.plus-b"},
		{ck, []string{strings.Repeat("n", 100)}, "ck.plus-" + strings.Repeat("n", 64)},
	}
	for _, c := range cases {
		if got := OnboardedDir(c.from, c.names); got != filepath.Join(dir, c.want) {
			t.Errorf("OnboardedDir(%s, %q) = %s, want %s", c.from, c.names, got, c.want)
		}
	}
	// A taken name gets -2, then -3.
	for k, want := range []string{"ck.plus-m", "ck.plus-m-2", "ck.plus-m-3"} {
		got := OnboardedDir(ck, []string{"m"})
		if got != filepath.Join(dir, want) {
			t.Fatalf("try %d: %s, want %s", k, got, want)
		}
		if err := os.Mkdir(got, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}
