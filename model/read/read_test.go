package read

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/tensorfile"
)

// repoRoot is the folder holding go.mod, found from the test's working folder.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test folder")
		}
		dir = parent
	}
}

// inDir makes a fresh temporary folder the working folder and writes files
// into it, so that error messages name them as the user would ("data.csv").
func inDir(t *testing.T, files map[string]string) {
	t.Helper()
	dir := t.TempDir()
	t.Chdir(dir)
	for name, content := range files {
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// triples renders the cells as sorted "model/item=label" strings.
func triples(r *model.Responses) []string {
	out := make([]string, r.Len())
	for c := range out {
		out[c] = fmt.Sprintf("%s/%s=%d", r.Models[r.Model[c]], r.Items[r.Item[c]], r.Label[c])
	}
	sort.Strings(out)
	return out
}

// The files of ../shared/data load with the counts of their README.
func TestReadSharedData(t *testing.T) {
	data := filepath.Join(repoRoot(t), "..", "shared", "data")
	if _, err := os.Stat(data); err != nil {
		t.Skip("../shared/data is absent")
	}
	cases := []struct {
		file, items, format string
		models, nitems, obs int
		mean                float64
		texts               int
	}{
		{"swebench-verified/response_matrix.csv", "swebench-verified/item_content.csv", "wide", 134, 500, 67000, 0.5147, 500},
		{"rewardbench/response_matrix.csv", "rewardbench/item_content.csv", "wide", 149, 2985, 437613, 0.6900, 2985},
		{"tumlu/response_matrix.csv", "tumlu/item_content.csv", "wide", 30, 7486, 143316, 0.5674, 7486},
		{"mmlupro-partial/response_matrix.csv", "", "wide-items", 48, 12257, 564350, 0.4988, 0},
		{"chembench/binary_matrix.csv", "", "wide-items", 22, 2854, 62788, 0.4544, 0},
		{"lsat/LSAT7.csv", "", "patterns", 1000, 5, 5000, 0.7414, 0},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			opt := Options{}
			if c.items != "" {
				opt.Items = filepath.Join(data, c.items)
			}
			r, rep, err := File(filepath.Join(data, c.file), opt)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Format != c.format {
				t.Errorf("format %s, want %s", rep.Format, c.format)
			}
			if r.NumModels() != c.models || r.NumItems() != c.nitems || r.Len() != c.obs {
				t.Errorf("%d models, %d items, %d observed; want %d, %d, %d", r.NumModels(), r.NumItems(), r.Len(), c.models, c.nitems, c.obs)
			}
			if got := math.Round(r.MeanCorrect()*1e4) / 1e4; got != c.mean {
				t.Errorf("mean correct %.4f, want %.4f", got, c.mean)
			}
			if rep.ItemTexts != c.texts {
				t.Errorf("%d items with text, want %d", rep.ItemTexts, c.texts)
			}
			if err := r.Validate(); err != nil {
				t.Error(err)
			}
		})
	}
}

// The dataset shipped in configs/data loads with its published counts.
func TestReadShippedSWEBench(t *testing.T) {
	dir := filepath.Join(repoRoot(t), "configs", "data", "swebench-verified")
	r, rep, err := File(filepath.Join(dir, "response_matrix.csv"), Options{Items: filepath.Join(dir, "item_content.csv")})
	if err != nil {
		t.Fatal(err)
	}
	if r.NumModels() != 134 || r.NumItems() != 500 || r.Len() != 67000 || fmt.Sprintf("%.4f", r.MeanCorrect()) != "0.5147" {
		t.Errorf("%d models, %d items, %d cells, mean %.4f", r.NumModels(), r.NumItems(), r.Len(), r.MeanCorrect())
	}
	j := r.ItemIndex("astropy__astropy-12907")
	if j < 0 || !strings.HasPrefix(r.ItemText[j], "Modeling's `separability_matrix` does not compute separability correctly for nested CompoundModels\nConsider") {
		t.Errorf("item text of astropy__astropy-12907: %.80q", r.ItemText[max(j, 0)])
	}
	if rep.ItemTexts != 500 || rep.ItemTextUnknown != 0 {
		t.Errorf("item texts %d, unknown %d", rep.ItemTexts, rep.ItemTextUnknown)
	}
}

func gzipBytes(s string) string {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.String()
}

// Every format reads the same 2 x 3 responses (m2 did not answer q3).
func TestReadFormats(t *testing.T) {
	want := []string{"m1/q1=1", "m1/q2=0", "m1/q3=1", "m2/q1=0", "m2/q2=1"}
	long := "model,item,correct\nm1,q1,1\nm1,q2,0\nm1,q3,1\nm2,q1,0\nm2,q2,1\n"
	cases := []struct {
		name, file, content, format, decided string
	}{
		{"long", "data.csv", long, "long", ""},
		{"long aliases", "data.csv", "prompt_id,model_name,label\nq1,m1,1\nq2,m1,0\nq3,m1,1\nq1,m2,0\nq2,m2,1\n", "long", ""},
		{"long subject_id/question_id/response", "data.csv", "subject_id,question_id,response\nm1,q1,1\nm1,q2,0\nm1,q3,1\nm2,q1,0\nm2,q2,1\n", "long", ""},
		{"long tsv", "data.tsv", strings.ReplaceAll(long, ",", "\t"), "long", ""},
		{"long tsv sniffed", "data.txt", strings.ReplaceAll(long, ",", "\t"), "long", ""},
		{"long crlf bom", "data.csv", "\xef\xbb\xbf" + strings.ReplaceAll(long, "\n", "\r\n"), "long", ""},
		{"long gzip", "data.csv.gz", gzipBytes(long), "long", ""},
		{"long gzip without .gz", "data.csv", gzipBytes(long), "long", ""},
		{"long blank label", "data.csv", long + "m2,q3,\n", "long", ""},
		{"wide", "data.csv", "model,q1,q2,q3\nm1,1,0,1\nm2,0,1,\n", "wide", ""},
		{"wide Model", "data.csv", "Model,q1,q2,q3\nm1,1,0,1\nm2,0,1,\n", "wide", ""},
		{"wide-items", "data.csv", "question_id,m1,m2\nq1,1.0,0.0\nq2,0.0,1.0\nq3,1.0,\n", "wide-items", ""},
		{"wide-items unnamed index", "data.csv", ",m1,m2\nq1,1.0,0.0\nq2,0.0,1.0\nq3,1.0,\n", "wide-items",
			"first column is an unnamed index; 3 rows x 2 columns: models on the shorter side, so rows are items (--format wide reads rows as models)"},
		{"wide unnamed index", "data.csv", "Unnamed: 0,q1,q2,q3\nm1,1,0,1\nm2,0,1,\n", "wide",
			"first column is an unnamed index; 2 rows x 3 columns: models on the shorter side, so rows are models (--format wide-items reads rows as items)"},
		{"pyirt", "data.jsonl", `{"subject_id": "m1", "responses": {"q1": 1, "q2": 0, "q3": 1}}` + "\n" +
			`{"responses": {"q1": false, "q2": true, "q3": null}, "subject_id": "m2"}` + "\n", "pyirt", "the first line is a JSON object: py-irt JSONL"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inDir(t, map[string]string{c.file: c.content})
			r, rep, err := File(c.file, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Format != c.format {
				t.Errorf("format %q, want %q", rep.Format, c.format)
			}
			if c.decided != "" && rep.Why != c.decided {
				t.Errorf("decided %q, want %q", rep.Why, c.decided)
			}
			if got := triples(r); !reflect.DeepEqual(got, want) {
				t.Errorf("cells %v, want %v", got, want)
			}
			if r.NumModels() != 2 || r.NumItems() != 3 {
				t.Errorf("%d models, %d items", r.NumModels(), r.NumItems())
			}
			if strings.HasSuffix(c.name, "gzip") || strings.Contains(c.name, "gzip ") {
				if !rep.Gzip {
					t.Error("gzip not reported")
				}
			}
			// Explicit --format reads the same.
			r2, rep2, err := File(c.file, Options{Format: c.format})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(triples(r2), want) || rep2.Why != "given by --format" {
				t.Errorf("explicit format: %v (%s)", triples(r2), rep2.Why)
			}
		})
	}
}

// Long files carry item text and groups; quoted text may span lines and hold
// quotes and commas. The first non-empty text of an item wins.
func TestReadLongTextAndGroup(t *testing.T) {
	inDir(t, map[string]string{"data.csv": "model_id,prompt_id,category,prompt,label\n" +
		"m1,q1,math,\"What is 2+2?\nAnswer with \"\"a number\"\", please.\",1\n" +
		"m1,q2,code,,0\n" +
		"m2,q2,code,Write a loop,1\n" +
		"m2,q1,math,ignored second text,0\n"})
	r, rep, err := File("data.csv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Rows != 4 {
		t.Errorf("rows %d", rep.Rows)
	}
	want := []string{"What is 2+2?\nAnswer with \"a number\", please.", "Write a loop"}
	if !reflect.DeepEqual(r.ItemText, want) || !reflect.DeepEqual(r.ItemGroup, []string{"math", "code"}) {
		t.Errorf("text %q, group %q", r.ItemText, r.ItemGroup)
	}
	if got := triples(r); !reflect.DeepEqual(got, []string{"m1/q1=1", "m1/q2=0", "m2/q1=0", "m2/q2=1"}) {
		t.Errorf("cells %v", got)
	}
}

// Item texts from a separate CSV are joined by id, not position, including
// EmbedLLM's prompt_id,prompt and multi-line fields.
func TestReadItemTextJoin(t *testing.T) {
	for _, header := range []string{"item_id,text", "item_id,problem_statement", "item_id,content", "prompt_id,prompt", "question_id,question"} {
		inDir(t, map[string]string{
			"data.csv":  "model,q1,q2\nm1,1,0\n",
			"items.csv": header + ",category\nq2,\"second\nline, two\",b\nq1,first,a\nq9,unknown,c\n",
		})
		r, rep, err := File("data.csv", Options{Items: "items.csv"})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(r.ItemText, []string{"first", "second\nline, two"}) || !reflect.DeepEqual(r.ItemGroup, []string{"a", "b"}) {
			t.Errorf("%s: text %q group %q", header, r.ItemText, r.ItemGroup)
		}
		if rep.ItemTexts != 2 || rep.ItemTextUnknown != 1 {
			t.Errorf("%s: %d texts, %d unknown", header, rep.ItemTexts, rep.ItemTextUnknown)
		}
	}
}

func TestLabelSpellings(t *testing.T) {
	cases := []struct {
		values string
		want   []uint8 // nil entries are represented by 9 (missing)
	}{
		{"0 1", []uint8{0, 1}},
		{"0.0 1.0", []uint8{0, 1}},
		{"0.00 1.000", []uint8{0, 1}},
		{"-1 1", []uint8{0, 1}},
		{"-1.0 1.0", []uint8{0, 1}},
		{"false true", []uint8{0, 1}},
		{"FALSE TRUE", []uint8{0, 1}},
		{"False True", []uint8{0, 1}},
		{" 0 ; 1 ", []uint8{0, 1}},
		{"NA 1", []uint8{9, 1}},
		{"nan 0", []uint8{9, 0}},
		{"NaN 0", []uint8{9, 0}},
		{"_ 1", []uint8{9, 1}},
	}
	for _, c := range cases {
		var b strings.Builder
		b.WriteString("model,item,label\n")
		sep := " "
		if strings.Contains(c.values, ";") {
			sep = ";"
		}
		vals := strings.Split(c.values, sep)
		for k, v := range vals {
			if v == "_" {
				v = ""
			}
			fmt.Fprintf(&b, "m,q%d,%s\n", k, v)
		}
		inDir(t, map[string]string{"data.csv": b.String()})
		r, rep, err := File("data.csv", Options{})
		if err != nil {
			t.Errorf("%q: %v", c.values, err)
			continue
		}
		got := []uint8{9, 9}
		for k := range r.Label {
			got[r.Item[k]] = r.Label[k]
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: labels %v, want %v", c.values, got, c.want)
		}
		blank := 0
		for _, w := range c.want {
			if w == 9 {
				blank++
			}
		}
		if rep.Blank != blank {
			t.Errorf("%q: %d blank, want %d", c.values, rep.Blank, blank)
		}
	}
}

// Blank cells are missing, never zero: they are absent from the cells and
// lower the density.
func TestMissingCells(t *testing.T) {
	inDir(t, map[string]string{"data.csv": "model,a,b,c,d\nm1,1,,0,\nm2,,,,\nm3,0,1,1,1\n"})
	r, rep, err := File("data.csv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Len() != 6 || rep.Blank != 6 || r.NumModels() != 3 || r.NumItems() != 4 {
		t.Fatalf("%d cells, %d blank, %d models, %d items", r.Len(), rep.Blank, r.NumModels(), r.NumItems())
	}
	if d := r.Density(); d != 0.5 {
		t.Errorf("density %v, want 0.5", d)
	}
	acc := r.ModelAccuracy()
	if acc[0] != 0.5 || !math.IsNaN(acc[1]) || acc[2] != 0.75 {
		t.Errorf("model accuracy %v", acc)
	}
	ia := r.ItemAccuracy()
	if ia[0] != 0.5 || ia[1] != 1 || ia[2] != 0.5 || ia[3] != 1 {
		t.Errorf("item accuracy %v", ia)
	}
}

func TestDuplicates(t *testing.T) {
	// m1/q1: 1,1,0 (majority 1); m1/q2: 0,1 (tie); m2/q1: 0,0 (agree); m2/q2 once.
	data := "model,item,correct\nm1,q1,1\nm1,q2,0\nm2,q1,0\nm1,q1,1\nm1,q2,1\nm2,q2,1\nm1,q1,0\nm2,q1,0\n"
	inDir(t, map[string]string{"data.csv": data})
	cases := []struct {
		policy string
		want   []string
	}{
		{"", []string{"m1/q1=1", "m2/q1=0", "m2/q2=1"}},
		{"majority", []string{"m1/q1=1", "m2/q1=0", "m2/q2=1"}},
		{"first", []string{"m1/q1=1", "m1/q2=0", "m2/q1=0", "m2/q2=1"}},
	}
	for _, c := range cases {
		r, rep, err := File("data.csv", Options{Duplicates: c.policy})
		if err != nil {
			t.Fatal(err)
		}
		if got := triples(r); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: cells %v, want %v", c.policy, got, c.want)
		}
		wantTies := 1
		if c.policy == "first" {
			wantTies = 0
		}
		if rep.DuplicateCells != 3 || rep.DuplicateRows != 4 || rep.Conflicts != 2 || rep.TiesDropped != wantTies {
			t.Errorf("%q: report %+v", c.policy, rep)
		}
	}
	_, _, err := File("data.csv", Options{Duplicates: "error"})
	// The setting is named as the library names it (the command line shows
	// --duplicates).
	want := `data.csv:5: duplicate row for model "m1", item "q1" (first at line 2; use duplicates majority, first or trials to resolve)`
	var fe *model.FieldError
	if err == nil || err.Error() != want || !errors.As(err, &fe) || fe.Field != "Duplicates" {
		t.Errorf("error policy: %v\nwant %s", err, want)
	}
	// Wide files can repeat a model row.
	inDir(t, map[string]string{"data.csv": "model,q1\nm1,1\nm1,0\n"})
	r, rep, err := File("data.csv", Options{})
	if err != nil || r.Len() != 0 || rep.TiesDropped != 1 || r.NumModels() != 1 {
		t.Errorf("wide duplicate: %v, %d cells, %+v", err, r.Len(), rep)
	}
}

// Bad input fails with an error naming the file, line, column and value.
func TestBadInput(t *testing.T) {
	corrupt := []byte(gzipBytes(strings.Repeat("model,item,correct\nm1,q1,1\n", 200)))
	for i := 20; i < len(corrupt)-12; i++ {
		corrupt[i] ^= 0x5a
	}
	badCRC := []byte(gzipBytes("model,item,correct\n" + strings.Repeat("m1,q1,1\n", 100)))
	badCRC[len(badCRC)-8] ^= 0xff // the CRC-32 in the trailer
	cases := []struct {
		name  string
		files map[string]string
		opt   Options
		want  string
	}{
		{"bad label", map[string]string{"data.csv": "model,item,label\nm,a,1\nm,b,maybe\n"}, Options{},
			`data.csv:3: column "label": "maybe" is not a 0/1 label`},
		{"label 2", map[string]string{"data.csv": "model,item,correct\nm,a,2\n"}, Options{},
			`data.csv:2: column "correct": "2" is not a 0/1 label`},
		{"mixed 0 and -1", map[string]string{"data.csv": "model,item,y\nm,a,-1\nm,b,1\nm,c,0\n"}, Options{},
			`data.csv:4: column "y": "0" is 0, but line 2 has -1: the file mixes 0/1 and -1/1 labels`},
		{"no label column", map[string]string{"data.csv": "model,item,score\nm,a,1\n"}, Options{Format: "long"},
			"data.csv:1: no label column (want one of correct, label, y, response); header is model,item,score"},
		{"no model column", map[string]string{"data.csv": "who,item,label\nm,a,1\n"}, Options{Format: "long"},
			"data.csv:1: no model column (want one of model, model_name, model_id, subject_id); header is who,item,label"},
		{"undecidable header", map[string]string{"data.csv": "who,item,score\nm,a,1\n"}, Options{},
			`data.csv:1: cannot tell the format from the header (first column "who" names neither models nor items, and there are no model, item and label columns); use format long|wide|wide-items|pyirt|patterns, or name the columns of a long file with columns model=who,item=item,label=score`},
		{"unknown format", map[string]string{"data.csv": "model,q1\nm,1\n"}, Options{Format: "xlsx"},
			`unknown format "xlsx" (want auto, long, wide, wide-items, pyirt, patterns, measurement-db, lm-eval, helm, inspect or eee)`},
		{"unknown duplicates policy", map[string]string{"data.csv": "model,q1\nm,1\n"}, Options{Duplicates: "mean"},
			`unknown duplicates policy "mean" (want majority, first, error or trials)`},
		{"ragged row", map[string]string{"data.csv": "model,q1,q2\nm1,1,0\nm2,1\n"}, Options{},
			"data.csv:3: row has 2 fields, header has 3"},
		{"empty file", map[string]string{"data.csv": ""}, Options{},
			"data.csv: the file is empty (no header)"},
		{"blank lines only", map[string]string{"data.csv": "\n\n\r\n"}, Options{Format: "long"},
			"data.csv: the file is empty (no header)"},
		{"header only", map[string]string{"data.csv": "model,item,correct\n"}, Options{},
			"data.csv: no data rows after the header"},
		{"bad freq", map[string]string{"lsat.csv": "i1,i2,freq\n0,1,3\n1,1,x\n"}, Options{},
			`lsat.csv:3: column "freq": "x" is not a non-negative integer count`},
		{"negative freq", map[string]string{"lsat.csv": "i1,i2,Freq\n0,1,-2\n"}, Options{},
			`lsat.csv:2: column "Freq": "-2" is not a non-negative integer count`},
		{"non-numeric in wide", map[string]string{"data.csv": "model,q1,q2\nm1,1,0\nm2,0,abc\n"}, Options{},
			`data.csv:3: column "q2": "abc" is not a 0/1 label`},
		{"non-numeric in wide-items", map[string]string{"data.csv": ",gpt,claude\n0,1.0,0.5\n"}, Options{},
			`data.csv:2: column "claude": "0.5" is not a 0/1 label (for graded scores in [0, 1] use --graded)`},
		{"unterminated quote", map[string]string{"data.csv": "model,item,prompt,correct\nm,a,\"fine\",1\nm,b,\"never\nclosed,0\nm,c,x,1\n"}, Options{},
			`data.csv:3: column "prompt": quoted field is never closed (the file ends at line 5)`},
		{"text after closing quote", map[string]string{"data.csv": "model,item,prompt,correct\nm,a,\"quoted\"tail,1\n"}, Options{},
			`data.csv:2: column "prompt": text after the closing quote of a quoted field`},
		{"empty model name", map[string]string{"data.csv": "model,item,correct\n,a,1\n"}, Options{},
			`data.csv:2: column "model": empty model name`},
		{"empty item id in wide-items", map[string]string{"data.csv": "item,m1\n,1\n"}, Options{},
			`data.csv:2: column "item": empty item id`},
		{"unnamed wide column", map[string]string{"data.csv": "model,q1,\nm,1,0\n"}, Options{},
			"data.csv:1: column 3 has no name"},
		{"non-UTF-8 model name", map[string]string{"data.csv": "model,item,correct\nm\xff,a,1\n"}, Options{},
			`data.csv: model name "m\xff" is not valid UTF-8 (re-encode the file as UTF-8)`},
		{"non-UTF-8 item id", map[string]string{"data.csv": "model,q\xfe\n m,1\n"}, Options{},
			`data.csv: item id "q\xfe" is not valid UTF-8 (re-encode the file as UTF-8)`},
		{"repeated wide column", map[string]string{"data.csv": "model,q1,q2,q1\nm,1,0,0\n"}, Options{},
			`data.csv:1: column "q1": columns 2 and 4 have the same name: rename one (a repeated column is not merged)`},
		{"no item id column in item text", map[string]string{"data.csv": "model,q1\nm,1\n", "items.csv": "name,text\nq1,hello\n"}, Options{Items: "items.csv"},
			"items.csv:1: no item id column (want one of item_id, item, prompt_id, question_id, id, task_id, instance_id, problem_id, example_id, uid, qid); header is name,text"},
		{"no text column in item text", map[string]string{"data.csv": "model,q1\nm,1\n", "items.csv": "item_id,body\nq1,hello\n"}, Options{Items: "items.csv"},
			"items.csv:1: no text column (want one of text, problem_statement, content, prompt, question, instruct_prompt, problem, input, query, instruction, question_text, statement, complete_prompt, description); header is item_id,body"},
		{"item text matches nothing", map[string]string{"data.csv": "model,q1\nm,1\n", "items.csv": "item_id,text\n1,hello\n"}, Options{Items: "items.csv"},
			`items.csv: none of its 1 item ids matches an item of data.csv (first id "1", first item "q1")`},
		{"gzip corrupt header", map[string]string{"data.csv.gz": "\x1f\x8b\x00garbage"}, Options{},
			"data.csv.gz: corrupt gzip data: gzip: invalid header"},
		{"gzip corrupt body", map[string]string{"data.csv.gz": string(corrupt)}, Options{},
			"data.csv.gz: corrupt gzip data: flate: corrupt input before offset 26"},
		{"gzip bad checksum", map[string]string{"data.csv.gz": string(badCRC)}, Options{},
			"data.csv.gz:102: corrupt gzip data: gzip: invalid checksum"},
		{"pyirt bad label", map[string]string{"data.jsonl": "{\"subject_id\": \"m\", \"responses\": {\"q1\": 1}}\n{\"subject_id\": \"n\", \"responses\": {\"q1\": \"maybe\"}}\n"}, Options{},
			`data.jsonl:2: key "responses.q1": "maybe" is not a 0/1 label`},
		{"pyirt no subject", map[string]string{"data.jsonl": "{\"responses\": {\"q1\": 1}}\n"}, Options{},
			`data.jsonl:1: no "subject_id"`},
		{"pyirt invalid JSON", map[string]string{"data.jsonl": "{\"subject_id\": \"m\", \"responses\": {\"q1\": 1}}\n{\"subject_id\": \"m\", \"responses\": {\"q1\" 1}}\n"}, Options{},
			"data.jsonl:2: invalid JSON: expected colon after object key"},
		{"missing file", map[string]string{}, Options{},
			"open data.csv: no such file or directory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inDir(t, c.files)
			name := "data.csv"
			for f := range c.files {
				if f != "items.csv" {
					name = f
				}
			}
			r, _, err := File(name, c.opt)
			if err == nil {
				t.Fatalf("no error; read %d cells", r.Len())
			}
			if err.Error() != c.want {
				t.Errorf("error\n  %s\nwant\n  %s", err, c.want)
			}
		})
	}
}

// WriteLongCSV round-trips exactly (by name), including awkward names and
// models or items without observed cells.
func TestWriteLongRoundTrip(t *testing.T) {
	r := &model.Responses{
		Models:    []string{"gpt, 4o", `say "hi"`, "idle"},
		Items:     []string{"q1", "line\nbreak", " padded ", "never"},
		ItemGroup: []string{"a", "b", "a", "c"},
		Model:     []int32{0, 0, 1, 1, 1},
		Item:      []int32{0, 1, 0, 1, 2},
		Label:     []uint8{1, 0, 0, 1, 1},
	}
	inDir(t, nil)
	if err := WriteLongCSV("out.csv", r); err != nil {
		t.Fatal(err)
	}
	got, rep, err := File("out.csv", Options{Duplicates: "error"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(triples(got), triples(r)) {
		t.Errorf("cells %v, want %v", triples(got), triples(r))
	}
	if !reflect.DeepEqual(got.Models, r.Models) || !reflect.DeepEqual(got.Items, r.Items) || !reflect.DeepEqual(got.ItemGroup, r.ItemGroup) {
		t.Errorf("names %q %q %q", got.Models, got.Items, got.ItemGroup)
	}
	if rep.Blank != 2 {
		t.Errorf("%d blank rows, want 2 (one for the idle model, one for the unseen item)", rep.Blank)
	}
	b, _ := os.ReadFile("out.csv")
	if !strings.HasPrefix(string(b), "model,item,correct,category\n\"gpt, 4o\",q1,1,a\n\"gpt, 4o\",\"line\nbreak\",0,b\n\"say \"\"hi\"\"\",q1,0,a\n") {
		t.Errorf("file starts %q", b[:min(len(b), 120)])
	}
}

func TestWriteItemsCSVRoundTrip(t *testing.T) {
	r := &model.Responses{Models: []string{"m"}, Items: []string{"a", "b"}, ItemText: []string{"multi\nline, \"quoted\"", ""},
		Model: []int32{0}, Item: []int32{0}, Label: []uint8{1}}
	inDir(t, nil)
	if err := WriteItemsCSV("items.csv", r); err != nil {
		t.Fatal(err)
	}
	tab, err := Items("items.csv")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(tab.IDs, r.Items) || !reflect.DeepEqual(tab.Text, r.ItemText) {
		t.Errorf("%q %q", tab.IDs, tab.Text)
	}
}

func TestNPYRoundTrip(t *testing.T) {
	inDir(t, nil)
	rows := [][]float32{{1, -2.5, 3}, {0.25, 0, -1}}
	if err := tensorfile.WriteNPY("x.npy", rows, 3); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile("x.npy")
	hlen := int(b[8]) | int(b[9])<<8
	header := string(b[10 : 10+hlen])
	if string(b[:8]) != "\x93NUMPY\x01\x00" || (10+hlen)%64 != 0 || !strings.HasPrefix(header, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }") || header[hlen-1] != '\n' {
		t.Fatalf("header %q", b[:10+hlen])
	}
	data := b[10+hlen:]
	if len(data) != 24 {
		t.Fatalf("%d data bytes", len(data))
	}
	// -2.5 as little-endian float32 is 00 00 20 c0.
	if !bytes.Equal(data[4:8], []byte{0, 0, 0x20, 0xc0}) {
		t.Errorf("second value bytes % x", data[4:8])
	}
	if got, err := tensorfile.ReadNPY("x.npy"); err != nil || !reflect.DeepEqual(got, rows) {
		t.Errorf("read back %v, %v", got, err)
	}
	if err := tensorfile.WriteNPY("y.npy", [][]float32{{1}, {1, 2}}, 1); err == nil || err.Error() != "npy y.npy: row 1 has 2 values, want 1" {
		t.Errorf("ragged rows: %v", err)
	}
}

// Long lines beyond the read buffer and records spanning many lines are read whole.
func TestReadLongLines(t *testing.T) {
	var b strings.Builder
	b.WriteString("model")
	n := 70000 // a header of about 600 kB
	for j := 0; j < n; j++ {
		fmt.Fprintf(&b, ",item_%05d", j)
	}
	b.WriteString("\nm1")
	for j := 0; j < n; j++ {
		b.WriteString(",1")
	}
	b.WriteString("\n")
	inDir(t, map[string]string{"data.csv": b.String()})
	r, _, err := File("data.csv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.NumItems() != n || r.Len() != n || r.Items[n-1] != "item_69999" {
		t.Errorf("%d items, %d cells", r.NumItems(), r.Len())
	}
	text := strings.Repeat("a line of text\n", 100000) // 1.5 MB in one quoted field
	inDir(t, map[string]string{"data.csv": "model,item,text,correct\nm,q,\"" + text + "\",1\n"})
	r, _, err = File("data.csv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.ItemText[0] != text {
		t.Errorf("text of %d bytes, want %d", len(r.ItemText[0]), len(text))
	}
}

func TestPatternsExpand(t *testing.T) {
	inDir(t, map[string]string{"p.csv": "Item.1,Item.2,freq\n0,0,2\n1,,1\n1,1,0\n0,1,3\n"})
	r, rep, err := File("p.csv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Format != "patterns" || r.NumModels() != 6 || r.Models[0] != "r0001" || r.Models[5] != "r0006" {
		t.Fatalf("format %s, models %q", rep.Format, r.Models)
	}
	want := []string{"r0001/Item.1=0", "r0001/Item.2=0", "r0002/Item.1=0", "r0002/Item.2=0", "r0003/Item.1=1",
		"r0004/Item.1=0", "r0004/Item.2=1", "r0005/Item.1=0", "r0005/Item.2=1", "r0006/Item.1=0", "r0006/Item.2=1"}
	if got := triples(r); !reflect.DeepEqual(got, want) {
		t.Errorf("cells %v", got)
	}
}
