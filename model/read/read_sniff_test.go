package read

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file whose lines end in CR alone reads as the same file with LF ends,
// in every text layout; CRLF and LF files are untouched.
func TestReadCROnlyLines(t *testing.T) {
	dir := t.TempDir()
	for _, text := range []string{
		"model,item,correct\nm1,q1,1\nm1,q2,0\nm2,q1,1\nm2,q2,\nm3,q2,1\n",
		"model,q1,q2,q3\nm1,1,0,1\nm2,0,,1\n",
		"item,m1,m2\nq1,1,0\nq2,0,1\nq3,1,1\n",
	} {
		lf := filepath.Join(dir, "lf.csv")
		os.WriteFile(lf, []byte(text), 0o644)
		want, _, err := File(lf, Options{NoCache: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, end := range []string{"\r", "\r\n"} {
			p := filepath.Join(dir, "ends.csv")
			os.WriteFile(p, []byte(strings.ReplaceAll(text, "\n", end)), 0o644)
			got, _, err := File(p, Options{NoCache: true})
			if err != nil {
				t.Errorf("line ends %q: %v", end, err)
				continue
			}
			sameResponses(t, got, want)
			if want.Len() == 0 {
				t.Fatal("no cells")
			}
		}
	}
}

// A JSON document given as responses says what it is; py-irt JSONL still
// reads.
func TestReadJSONDocumentIsNotResponses(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ name, text, want string }{
		{"fit.json", "{\n  \"jeirt_version\": \"0.1.0\",\n  \"settings\": {\n    \"method\": \"cbmm\"\n  }\n}\n", "fit.json:1: this is a jeirt fit.json (an IRT fit's summary), not responses"},
		{"manifest.json", "{\n  \"format\": \"jeirt-checkpoint\",\n  \"format_version\": 2\n}\n", "this is a jeirt checkpoint's manifest.json, not responses: give the checkpoint's folder with --checkpoint"},
		{"sweep.json", "{\n  \"format\": \"jeirt-sweep\",\n  \"runs\": []\n}\n", "this is a jeirt sweep.json, not responses"},
		{"metrics.json", "{\n  \"test\": {\"accuracy\": 0.5},\n  \"best_epoch\": 3\n}\n", "this is a jeirt checkpoint's metrics.json"},
		{"cat.json", "{\n  \"jeirt_version\": \"0.1.0\",\n  \"mode\": \"simulate\",\n  \"settings\": {}\n}\n", "this is a jeirt irt cat cat.json"},
		{"other.json", "[\n  {\"a\": 1}\n]\n", "other.json:1: this is a JSON document, not responses: jeirt reads responses as CSV, TSV, Parquet or py-irt JSONL"},
		{"pretty.jsonl", "{\n  \"subject_id\": \"m\"\n}\n", "this is a JSON document, not responses"},
	} {
		p := filepath.Join(dir, c.name)
		os.WriteFile(p, []byte(c.text), 0o644)
		for _, format := range []string{"auto", "pyirt"} {
			if _, _, err := File(p, Options{Format: format, NoCache: true}); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s as %s: %v, want %q", c.name, format, err, c.want)
			}
		}
	}
	p := filepath.Join(dir, "r.jsonl")
	os.WriteFile(p, []byte(`{"subject_id": "m1", "responses": {"q1": 1, "q2": 0}}`+"\n"+`{"subject_id": "m2", "responses": {"q1": 0}}`+"\n"), 0o644)
	r, _, err := File(p, Options{NoCache: true})
	if err != nil || r.Len() != 3 || len(r.Models) != 2 {
		t.Errorf("py-irt JSONL: %v %v", r, err)
	}
}

// --columns names the columns of a header jeirt does not know, --delimiter
// the separator (a header of semicolons alone is found by itself); the
// answer is the one the usual header gives, cached or not.
func TestReadColumnsAndDelimiter(t *testing.T) {
	dir := t.TempDir()
	rows := [][]string{{"m1", "q1", "1"}, {"m1", "q2", "0"}, {"m2", "q1", "0"}, {"m2", "q2", "1"}, {"m3", "q1", "1"}}
	write := func(name, header, sep string) string {
		var b strings.Builder
		b.WriteString(header + "\n")
		for _, r := range rows {
			b.WriteString(strings.Join(r, sep) + "\n")
		}
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(b.String()), 0o644)
		return p
	}
	want, _, err := File(write("std.csv", "model,item,correct", ","), Options{NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	cacheDir := t.TempDir()
	for _, c := range []struct {
		name, header, sep string
		opt               Options
	}{
		{"named.csv", "Model Name,Question,Score", ",", Options{Columns: "model=Model Name,item=Question,label=Score"}},
		{"named-case.csv", "Model Name,Question,Score", ",", Options{Columns: "Model = model name, item=question,label=SCORE"}},
		{"partly.csv", "model,Question,correct", ",", Options{Columns: "item=Question"}},
		{"semi.csv", "model;item;correct", ";", Options{}},
		{"semi-given.csv", "model;item;correct", ";", Options{Delimiter: ";"}},
		{"pipe.txt", "model|item|correct", "|", Options{Delimiter: "|"}},
		{"tab.txt", "who\twhat\tok", "\t", Options{Delimiter: "tab", Columns: "model=who,item=what,label=ok"}},
	} {
		p := write(c.name, c.header, c.sep)
		for _, cached := range []bool{false, true} {
			opt := c.opt
			opt.NoCache, opt.CacheDir, opt.CacheMin = !cached, cacheDir, -1
			got, rep, err := File(p, opt)
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
				continue
			}
			if rep.Format != "long" {
				t.Errorf("%s: read as %s", c.name, rep.Format)
			}
			sameResponses(t, got, want)
		}
	}
	// The same file read with and without a mapping is not served one
	// cache for the other.
	p := write("both.csv", "model,item,correct,other", ",")
	os.WriteFile(p, []byte("model,item,correct,other\nm1,q1,1,0\nm2,q1,0,1\n"), 0o644)
	for _, c := range []struct{ cols string }{{""}, {"label=other"}, {""}} {
		r, _, err := File(p, Options{Columns: c.cols, CacheDir: cacheDir, CacheMin: -1})
		if err != nil {
			t.Fatal(err)
		}
		var first float64 = -1
		for k, m := range r.Model {
			if int(m) == r.ModelIndex("m1") {
				first = float64(r.Label[k])
			}
		}
		if wantFirst := c.cols == ""; (first > 0) != wantFirst {
			t.Errorf("columns %q: m1's label %v (a cache of the other reading?)", c.cols, first)
		}
	}
	for _, c := range []struct {
		opt  Options
		want string
	}{
		{Options{Columns: "model=Model Name,item=Question,label=Grade"}, `named.csv:1: columns label=Grade: the header has no column "Grade"; header is Model Name,Question,Score`},
		{Options{Columns: "modle=Model Name"}, `unknown role "modle" (want model, item, label, successes, trials, text, group)`},
		{Options{Columns: "model"}, `want ROLE=COLUMN pairs separated by commas`},
		{Options{Columns: "model=a,model=b"}, "model is given twice"},
		{Options{Columns: "model=Model Name", Format: "wide"}, "it cannot go with format wide"},
		{Options{Delimiter: ":"}, `delimiter ":": want one of , ; | tab`},
		{Options{}, "or name the columns of a long file with columns model=Model Name,item=Question,label=Score"},
	} {
		c.opt.NoCache = true
		if _, _, err := File(filepath.Join(dir, "named.csv"), c.opt); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.opt, err, c.want)
		}
	}
}
