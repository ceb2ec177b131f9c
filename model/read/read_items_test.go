package read

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestItemsColumnsJSONLAndBytes: the common text columns of public
// benchmark files are recognised (the first present wins), JSONL item files
// are read, and texts keep their bytes: \r\n inside a quoted field, a lone
// \r, tabs, NUL.
func TestItemsColumnsJSONLAndBytes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		name, body       string
		idCol, textCol   string
		ids, texts, grps []string
	}{
		{"bcb.csv", "task_id,complete_prompt,instruct_prompt,libs\nBigCodeBench/0,def f():,Write f.,[]\n", "task_id", "instruct_prompt",
			[]string{"BigCodeBench/0"}, []string{"Write f."}, nil},
		{"swe.csv", "instance_id,problem_statement\r\nastropy-1,\"line one\r\nline two\nthree\"\r\nastropy-2,plain\r\n", "instance_id", "problem_statement",
			[]string{"astropy-1", "astropy-2"}, []string{"line one\r\nline two\nthree", "plain"}, nil},
		{"math.tsv", "problem_id\tproblem\tbenchmark\np1\t\"a\tb\rc\x00d\"\tmath\n", "problem_id", "problem",
			[]string{"p1"}, []string{"a\tb\rc\x00d"}, []string{"math"}},
		{"q.csv", "id,question,input\n7,What?,ignored\n", "id", "question", []string{"7"}, []string{"What?"}, nil},
		{"items.jsonl", "{\"id\": 12, \"text\": \"first\\r\\nsecond\", \"category\": \"a\"}\n\n{\"id\": \"x\", \"text\": \"\", \"category\": \"b\"}\n", "id", "text",
			[]string{"12", "x"}, []string{"first\r\nsecond", ""}, []string{"a", "b"}},
		{"hf.jsonl", "{\"question_id\": \"q\", \"prompt\": \"p\"}", "question_id", "prompt", []string{"q"}, []string{"p"}, nil},
	} {
		got, err := Items(write(c.name, c.body))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got.IDColumn != c.idCol || got.TextColumn != c.textCol || !reflect.DeepEqual(got.IDs, c.ids) || !reflect.DeepEqual(got.Text, c.texts) || !reflect.DeepEqual(got.Group, c.grps) {
			t.Errorf("%s: %+v", c.name, got)
		}
	}
	for _, c := range []struct{ name, body, msg string }{
		{"bad1.jsonl", "{\"id\": \"a\", \"text\": 3}\n", "bad1.jsonl:1: column \"text\": want a string"},
		{"bad2.jsonl", "{\"id\": \"a\", \"text\": \"t\"}\n{\"id\": 1.5, \"text\": \"u\"}\n", "bad2.jsonl:2: column \"id\": want a non-empty string or integer id"},
		{"bad3.jsonl", "{\"name\": \"a\", \"text\": \"t\"}\n", "bad3.jsonl:1: no item id key (want one of item_id"},
		{"bad4.jsonl", "{\"id\": \"a\", \"text\": \"t\"}\n{oops\n", "bad4.jsonl:2: not a JSON object"},
		{"bad5.jsonl", "{\"id\": \"a\", \"body\": \"t\"}\n", "bad5.jsonl:1: no text key (want one of text"},
	} {
		_, err := Items(write(c.name, c.body))
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v, want %q", c.name, err, c.msg)
		}
	}
	// The report says which column gave the text.
	resp := write("r.csv", "model,item,correct\nm,astropy-1,1\nm,astropy-2,0\n")
	r, rep, err := File(resp, Options{Items: filepath.Join(dir, "swe.csv")})
	if err != nil {
		t.Fatal(err)
	}
	if rep.ItemTextColumn != "problem_statement" || r.ItemText[0] != "line one\r\nline two\nthree" ||
		!strings.Contains(rep.String(), "item text: 2 items from column problem_statement of "+filepath.Join(dir, "swe.csv")) {
		t.Errorf("report %+v\n%s", rep, rep.String())
	}
}
