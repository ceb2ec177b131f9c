package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// jeirt route says a JSON line with an empty text is that, with its line
// number, apart from the blank lines it skips.
func TestRouteSaysEmptyText(t *testing.T) {
	dir := t.TempDir()
	ck := filepath.Join(dir, "ck")
	writeHandCheckpoint(t, ck, []float64{0.9, 0.75, 0.6}, []string{"big", "mid", "small"})
	queries := writeFile(t, filepath.Join(dir, "q.jsonl"), `{"id": "a", "text": "what is 2+2?"}`+"\n\n"+`{"id": "b", "text": " "}`+"\n"+`{"id": "c", "text": "name a prime"}`+"\n")
	out, log, err := runSplit(t, newRouteCmd(), queries, "--checkpoint", ck, "--print", "csv")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "id,model,") || strings.Count(out, "\n") != 3 {
		t.Errorf("routed:\n%s", out)
	}
	want := "route: skipped 1 empty line in " + queries + " (line 2)\n" +
		"route: skipped 1 JSON line with empty text in " + queries + " (line 3)\n"
	if !strings.Contains(log, want) {
		t.Errorf("log %q, want %q", log, want)
	}
}
