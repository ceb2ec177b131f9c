package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// data split --by benchmark --hold, and irt fit --joint, end to end.
func TestDataSplitByBenchmarkAndJointFit(t *testing.T) {
	dir := t.TempDir()
	p := func(s string) string { return filepath.Join(dir, s) }
	os.WriteFile(p("r.csv"), []byte("model,q1,q2,q3,q4,q5,q6\nm1,1,0,1,1,0,1\nm2,0,0,1,0,1,1\nm3,1,1,1,0,0,0\nm4,0,1,0,1,1,0\n"), 0o644)
	os.WriteFile(p("items.csv"), []byte("item_id,text,category\nq1,a,arc\nq2,b,arc\nq3,c,gsm\nq4,d,gsm\nq5,e,mmlu\nq6,f,mmlu\n"), 0o644)
	out, err := runCmd(t, newDataSplitCmd(), "--data", p("r.csv"), "--items", p("items.csv"), "--by", "benchmark", "--hold", "gsm", "--val-fraction", "0.25", "--out", p("split"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "test          8 cells") {
		t.Errorf("split output:\n%s", out)
	}
	test := readCSVFile(t, p("split/test.csv"))
	for _, row := range test[1:] {
		if row[2] != "" && row[1] != "q3" && row[1] != "q4" {
			t.Errorf("test.csv holds %v", row)
		}
	}

	os.WriteFile(p("s.csv"), []byte("model,q1,x\nm4,1,0\nm1,0,1\nm9,1,1\n"), 0o644)
	out, err = runCmd(t, newIRTCmd(), "fit", "--joint", "--data", p("r.csv"), "--data", p("s.csv"), "--name", "r", "--name", "s", "--rank", "2", "--signed", "--max-iter", "50", "--out", p("joint"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "2 benchmarks jointly, 5 models, 8 items") || !strings.Contains(out, "\ns ") {
		t.Errorf("joint output:\n%s", out)
	}
	items := readCSVFile(t, p("joint/items.csv"))
	if items[1][0] != "r/q1" || items[7][0] != "s/q1" || items[8][0] != "x" {
		t.Errorf("joint item ids: %v %v %v", items[1][0], items[7][0], items[8][0])
	}
	// The joint fit's responses are read again by the analyses and irt select.
	if out, err := runCmd(t, newIRTCmd(), "fit", "--joint", "--data", p("r.csv"), "--data", p("s.csv"), "--name", "r", "--name", "s", "--out", p("joint1")); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if out, err := runCmd(t, newAnalyzeCmd(), "icc", "--fit", p("joint1"), "--bins", "2", "--min-count", "1", "--out", p("joint-icc")); err != nil || !strings.Contains(out, "8 items, 2 ability bins") {
		t.Errorf("icc of a joint fit: %v\n%s", err, out)
	}
	if out, err := runCmd(t, newIRTCmd(), "select", "--fit", p("joint1"), "--keep", "0.5", "--out", p("kept.csv")); err != nil || !strings.Contains(out, "Kendall τ") {
		t.Errorf("select on a joint fit: %v\n%s", err, out)
	}
	raw, _ := os.ReadFile(p("joint/fit.json"))
	if !strings.Contains(string(raw), `"joint": true`) || !strings.Contains(string(raw), `"group": "s"`) {
		t.Errorf("fit.json:\n%s", raw)
	}
}
