package read

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A long file jeirt writes of graded scores (one trial or several) names
// its label column so, and reads back, as CSV and as Parquet, to the same
// responses without Options.Graded; binary and whole-count files keep
// their columns.
func TestGradedWrittenReadsBack(t *testing.T) {
	dir := t.TempDir()
	cases := []struct{ name, body, header string }{
		{"score", "model,item,label\nm1,q1,0\nm1,q2,0.25\nm2,q1,1\nm2,q2,0.5\n", "model,item,graded_score\n"},
		{"trials", "model,item,successes,trials\nm1,q1,0,2\nm1,q2,1.5,3\nm2,q1,1,1\nm2,q2,0.5,1\n", "model,item,graded_successes,trials\n"},
		{"counts", "model,item,successes,trials\nm1,q1,0,2\nm1,q2,2,3\nm2,q1,1,1\n", "model,item,successes,trials\n"},
		{"binary", "model,item,label\nm1,q1,0\nm2,q1,1\n", "model,item,correct\n"},
	}
	for _, c := range cases {
		src := writeFile(t, dir, c.name+".csv", c.body)
		want, _, err := File(src, Options{Graded: true})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		out := filepath.Join(dir, c.name+"-out.csv")
		if err := WriteLongCSV(out, want); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(out)
		if !strings.HasPrefix(string(b), c.header) {
			t.Errorf("%s: wrote\n%s", c.name, b)
		}
		got, rep, err := File(out, Options{})
		if err != nil {
			t.Fatalf("%s: read back without --graded: %v", c.name, err)
		}
		sameResponses(t, got, want)
		if c.name == "score" && rep.Why != `header has model column "model", item column "item" and graded score column "graded_score"` {
			t.Errorf("decided %q", rep.Why)
		}
		pq := filepath.Join(dir, c.name+"-out.parquet")
		if err := WriteLongParquet(pq, want); err != nil {
			t.Fatal(err)
		}
		if got, _, err = File(pq, Options{}); err != nil {
			t.Fatalf("%s: Parquet read back without --graded: %v", c.name, err)
		}
		sameResponses(t, got, want)
	}
	// Named by --columns, a graded_score column is graded; another is not.
	src := writeFile(t, dir, "named.csv", "who,what,graded_score,other\nm1,q1,0.25,0.5\n")
	if r, _, err := File(src, Options{Columns: "model=who,item=what,label=graded_score"}); err != nil || r.Successes[0] != 0.25 {
		t.Errorf("--columns label=graded_score: %v", err)
	}
	if _, _, err := File(src, Options{Columns: "model=who,item=what,label=other"}); err == nil || !strings.Contains(err.Error(), "use --graded") {
		t.Errorf("--columns label=other: %v", err)
	}
}
