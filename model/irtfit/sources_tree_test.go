package irtfit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A folder given as data (a tree of evaluation-tool logs) is recorded by a
// digest of its listing: the same tree gives the same digest, and a file
// added, removed or rewritten changes it.
func TestTreeDigest(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string, at time.Time) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Unix(1_700_000_000, 0)
	write("a/results.json", "{}", t0)
	write("a/samples.jsonl", "{\"doc_id\": 0}\n", t0)
	first, err := fileSHA256(dir)
	if err != nil || !strings.HasPrefix(first, "tree:") {
		t.Fatalf("digest %q, %v", first, err)
	}
	if again, _ := fileSHA256(dir); again != first {
		t.Errorf("the same tree gave %s, then %s", first, again)
	}
	seen := map[string]string{first: "the first tree"}
	for _, step := range []struct {
		what string
		do   func()
	}{
		{"a file rewritten", func() { write("a/samples.jsonl", "{\"doc_id\": 1}\n", t0.Add(time.Second)) }},
		{"a file added", func() { write("b/samples.jsonl", "{}\n", t0) }},
		{"a file removed", func() { os.Remove(filepath.Join(dir, "a", "results.json")) }},
	} {
		step.do()
		d, err := fileSHA256(dir)
		if err != nil {
			t.Fatal(err)
		}
		if prev, ok := seen[d]; ok {
			t.Errorf("%s: the digest is that of %s", step.what, prev)
		}
		seen[d] = step.what
	}
}
