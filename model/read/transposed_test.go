package read

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTransposedWarning: a matrix with one row per item but "model" as its
// first header is read as asked (rows are models) with a warning naming
// --format wide-items; the right way round, or with --format given, there
// is none.
func TestTransposedWarning(t *testing.T) {
	dir := t.TempDir()
	models := []string{"20231010_rag_claude2", "20240620_sweagent_gpt4o", "llama-3.1-8b-instruct"}
	var b strings.Builder
	b.WriteString("model," + strings.Join(models, ",") + "\n")
	for j := 0; j < 5; j++ {
		fmt.Fprintf(&b, "django__django-%d,1,0,%d\n", 11000+j, j%2)
	}
	p := filepath.Join(dir, "t.csv")
	os.WriteFile(p, []byte(b.String()), 0o644)
	var warned []string
	r, rep, err := File(p, Options{Warn: func(f string, a ...any) { warned = append(warned, fmt.Sprintf(f, a...)) }})
	if err != nil {
		t.Fatal(err)
	}
	want := p + `: read as 5 models x 3 items (one row per model), but it has more models than items and 3 of its 3 item names look like model names ("20231010_rag_claude2", "20240620_sweagent_gpt4o", "llama-3.1-8b-instruct"): if each row is an item, read it with --format wide-items`
	if r.NumModels() != 5 || rep.Warning != want || len(warned) != 1 || warned[0] != "warning: "+want {
		t.Errorf("warning %q, logged %q", rep.Warning, warned)
	}
	if _, rep, _ := File(p, Options{Format: "wide"}); rep.Warning != "" {
		t.Errorf("--format wide given: %q", rep.Warning)
	}
	if r, rep, _ := File(p, Options{Format: "wide-items"}); rep.Warning != "" || r.NumModels() != 3 {
		t.Errorf("--format wide-items: %q", rep.Warning)
	}
	// The same models as rows, and a taller matrix of ordinary item names:
	// no warning.
	b.Reset()
	b.WriteString("model,q1,q2,q3\n")
	for j := 0; j < 5; j++ {
		fmt.Fprintf(&b, "m%d,1,0,1\n", j)
	}
	os.WriteFile(p, []byte(b.String()), 0o644)
	if _, rep, err := File(p, Options{}); err != nil || rep.Warning != "" {
		t.Errorf("plain items: %v %q", err, rep.Warning)
	}
}
