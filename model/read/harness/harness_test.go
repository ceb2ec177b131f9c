package harness

import (
	"archive/zip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model/read/harness/harnesstest"
)

// smallSet is a task of the given models on 6 items: model m answers item
// j correctly when j > m, with a second trial on item 0.
func smallSet(models ...string) harnesstest.Set {
	s := harnesstest.Set{Task: "quiz", Models: models}
	for j := range 6 {
		s.Items = append(s.Items, harnesstest.Item{ID: fmt.Sprint(j), Text: fmt.Sprintf("question %d", j)})
	}
	for m := range models {
		row := make([][]float64, 6)
		for j := range row {
			x := 0.0
			if j > m {
				x = 1
			}
			row[j] = []float64{x}
		}
		row[0] = append(row[0], 1)
		s.Scores = append(s.Scores, row)
	}
	return s
}

// Logs of a model added later join the same items, and the cells read
// before are unchanged; repeats are trials of one cell.
func TestNewModelJoinsSameItems(t *testing.T) {
	for _, tool := range Tools {
		t.Run(tool, func(t *testing.T) {
			dir := t.TempDir()
			if err := harnesstest.Write(dir, tool, smallSet("a/m0", "a/m1")); err != nil {
				t.Fatal(err)
			}
			r1, _, _, err := Read(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			later := smallSet("a/m0", "a/m1", "b/m2")
			later.Models, later.Scores = later.Models[2:], later.Scores[2:]
			if err := harnesstest.Write(dir, tool, later); err != nil {
				t.Fatal(err)
			}
			r2, _, _, err := Read(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(r1.Items, ",") != strings.Join(r2.Items, ",") || len(r2.Items) != 6 || r2.Items[0] != "quiz/0" {
				t.Fatalf("items %v then %v", r1.Items, r2.Items)
			}
			if len(r2.Models) != 3 || r2.Len() != 18 {
				t.Fatalf("models %v, %d cells", r2.Models, r2.Len())
			}
			c1, c2 := cellsOf(r1), cellsOf(r2)
			for k, v := range c1 {
				if c2[k] != v {
					t.Errorf("cell %v: %v then %v", k, v, c2[k])
				}
			}
			// item 0: two trials, both correct for m2 (j > 2 is false: 0, then 1).
			for c := range r2.Label {
				if r2.Models[r2.Model[c]] == "b/m2" && r2.Items[r2.Item[c]] == "quiz/0" {
					if r2.TrialsAt(c) != 2 || r2.SuccessesAt(c) != 1 {
						t.Errorf("m2 on item 0: %v of %d", r2.SuccessesAt(c), r2.TrialsAt(c))
					}
				}
			}
			if r2.ItemText[3] != "question 3" || r2.ItemGroup[3] != "quiz" {
				t.Errorf("item 3: %q, %q", r2.ItemText[3], r2.ItemGroup[3])
			}
		})
	}
}

// openai/gpt2 and gpt2 stay two models unless mapped.
func TestModelNames(t *testing.T) {
	dir := t.TempDir()
	if err := harnesstest.Write(filepath.Join(dir, "a"), "lm-eval", smallSet("openai/gpt2")); err != nil {
		t.Fatal(err)
	}
	if err := harnesstest.Write(filepath.Join(dir, "b"), "eee", smallSet("gpt2")); err != nil {
		t.Fatal(err)
	}
	r, _, _, err := Read(dir, Options{})
	if err != nil || len(r.Models) != 2 {
		t.Fatalf("%v, %v", err, r.Models)
	}
	os.WriteFile(filepath.Join(dir, "names.csv"), []byte("from,to\nopenai/gpt2,gpt2\n"), 0o644)
	names, err := ReadModelNames(filepath.Join(dir, "names.csv"))
	if err != nil {
		t.Fatal(err)
	}
	r, _, _, err = Read(dir, Options{ModelNames: names})
	if err != nil || len(r.Models) != 1 || r.Models[0] != "gpt2" {
		t.Fatalf("%v, %v", err, r.Models)
	}
	// The same items from both tools: two trials in each cell.
	if r.Len() != 6 || r.TrialsAt(1) != 2 {
		t.Errorf("%d cells, %d trials", r.Len(), r.TrialsAt(1))
	}
}

// Errors say where: the file and line (or zip member), what was looked
// for, which samples lack the metric, which metric is out of range.
func TestErrorsSayWhere(t *testing.T) {
	dir := t.TempDir()
	w := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	sample := func(id int, score string) string {
		return fmt.Sprintf(`{"model_id":"m","evaluation_name":"e","sample_id":"%d","input":{"raw":"q"},"evaluation":{%s}}`, id, score)
	}
	cases := []struct {
		path, want string
	}{
		{w("broken/x_samples.jsonl", sample(1, `"score":1`)+"\n"+`{"model_id":"m","sample_id":`+"\n"), "x_samples.jsonl:2: "},
		{w("missing/x_samples.jsonl", sample(1, `"score":1`)+"\n"+sample(2, `"other":1`)+"\n"+sample(3, `"other":0`)+"\n"),
			`task e: metric "score" is missing in 2 of 3 samples (sample_id 2, 3)`},
		{w("range/x_samples.jsonl", sample(1, `"score":7`)+"\n"), `x_samples.jsonl:1: key "evaluation.score": metric "score" gives 7, not a score in [0, 1] (choose a 0/1 or [0, 1] metric with --metric, or rescale`},
		{w("unknown/notes.txt", "hello"), "notes.txt: not a log of a known tool (looked for lm-eval results_*.json"},
	}
	for _, c := range cases {
		_, _, _, err := Read(c.path, Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.path, err, c.want)
		}
	}
	if _, _, _, err := Read(filepath.Join(dir, "unknown"), Options{}); err == nil || !strings.Contains(err.Error(), "unknown: a folder, read as a tree of evaluation-tool logs, with no logs of scored samples in it (looked for lm-eval") {
		t.Errorf("folder of no logs: %v", err)
	}
	// A broken zip member is named.
	p := filepath.Join(dir, "z.eval")
	f, _ := os.Create(p)
	zw := zip.NewWriter(f)
	m, _ := zw.Create("header.json")
	m.Write([]byte(`{"version":2,"eval":{"task":"t","model":"m","scorers":[{"name":"s"}]}}`))
	m, _ = zw.Create("samples/1_epoch_1.json")
	m.Write([]byte(`{"id":1,"epoch":1,"input":"q","scores":{"s":{"value":"C"`))
	zw.Close()
	f.Close()
	if _, _, _, err := Read(p, Options{}); err == nil || !strings.Contains(err.Error(), "z.eval!samples/1_epoch_1.json: ") {
		t.Errorf("zip: %v", err)
	}
	// P needs --graded; with it, a score of 0.5 (the one I of model m, its
	// first trial of item 0, becomes a P).
	s := smallSet("m")
	dirP := filepath.Join(dir, "partial")
	harnesstest.Write(dirP, "inspect", s)
	b, _ := os.ReadFile(filepath.Join(dirP, "00_quiz_m.json"))
	os.WriteFile(filepath.Join(dirP, "00_quiz_m.json"), []byte(strings.ReplaceAll(string(b), `"value": "I"`, `"value": "P"`)), 0o644)
	if _, _, _, err := Read(dirP, Options{}); err == nil || !strings.Contains(err.Error(), "P (partial credit): read it as a score of 0.5 with --graded") {
		t.Errorf("P: %v", err)
	}
	r, _, _, err := Read(dirP, Options{Graded: true})
	if err != nil || cellsOf(r)[cellKey{"m", "quiz/0"}] != 0.75 {
		t.Errorf("P graded: %v %v", err, cellsOf(r))
	}
}

// --metric chooses among a task's metrics, the first it has; --format
// reads one tool of a mixed tree.
func TestMetricAndFormat(t *testing.T) {
	needFixtures(t)
	r, sum, _, err := Read(fixtures, Options{Tool: HELM, Metric: []string{"quasi_exact_match"}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Len() != 25 || len(sum.Logs) != 3 || sum.Logs[0].Metric != "quasi_exact_match" {
		t.Errorf("%d cells, logs %+v", r.Len(), sum.Logs)
	}
	if _, _, _, err := Read(filepath.Join(fixtures, "lm_eval"), Options{Metric: []string{"acc"}}); err == nil || !strings.Contains(err.Error(), "the task has none of --metric acc (it has exact_match)") {
		t.Errorf("lm-eval --metric acc: %v", err)
	}
	if _, _, _, err := Read(filepath.Join(fixtures, "helm"), Options{Metric: []string{"num_prompt_tokens"}}); err == nil || !strings.Contains(err.Error(), `metric "num_prompt_tokens" gives`) {
		t.Errorf("a count as a metric: %v", err)
	}
}

// One log named on its own reads as the folder it is part of.
func TestSingleFiles(t *testing.T) {
	needFixtures(t)
	for _, c := range []struct {
		path  string
		cells int
	}{
		{"lm_eval/results_2026-01-21T03-44-18.458309.json", 10},
		{"lm_eval/samples_math_perturbed_full_2026-01-21T03-44-18.458309.jsonl", 10},
		{"helm/mmlu-subject=philosophy,method=multiple_choice_joint,model=openai_gpt2/per_instance_stats.json", 10},
		{"helm/mmlu-subject=philosophy,method=multiple_choice_joint,model=openai_gpt2", 10},
		{"inspect/data_arc_sonnet.json", 5},
		{"eee/demo-source/demo-org/demo-model/f3a1c0de-4b2e-4c1a-9f6d-1b7e5a2c8d40_samples.jsonl", 1},
		{"eee/demo-source/demo-org/demo-model/f3a1c0de-4b2e-4c1a-9f6d-1b7e5a2c8d40.json", 1},
	} {
		r, _, _, err := Read(filepath.Join(fixtures, c.path), Options{})
		if err != nil || r.Len() != c.cells || r.ItemText[0] == "" {
			t.Errorf("%s: %v, want %d cells", c.path, err, c.cells)
		}
	}
	// A broken results file names its line.
	dir := t.TempDir()
	p := filepath.Join(dir, "results_x.json")
	os.WriteFile(p, []byte("{\n  \"results\": {},\n  \"configs\": {\"t\": [}\n}\n"), 0o644)
	if _, _, _, err := Read(p, Options{}); err == nil || !strings.Contains(err.Error(), "results_x.json: not an lm-eval results file: line 3: invalid character") {
		t.Errorf("broken results: %v", err)
	}
}

// lm-eval: the first filter by default (--filter another), the first
// metric of the line's list, the doc's question for a few-shot task, the
// task under its groups, and the model from model_args when model_name is
// absent.
func TestLMEvalFiltersAndText(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "results_T1.json"), []byte(`{"results": {}, "config": {"model_args": "pretrained=org/m,dtype=bf16"},
		"group_subtasks": {"mmlu": ["mmlu_stem"], "mmlu_stem": ["mmlu_physics"]},
		"configs": {"mmlu_physics": {"num_fewshot": 5, "metric_list": [{"metric": "acc"}], "filter_list": [{"name": "strict"}, {"name": "flexible"}]}}}`), 0o644)
	line := func(doc int, filter string, em float64) string {
		return fmt.Sprintf(`{"doc_id": %d, "doc": {"question": "Q%d?"}, "arguments": [["5 shots ... Q%d?", " A"]], "filter": %q, "metrics": ["exact_match", "acc"], "exact_match": %v, "acc": 1}`, doc, doc, doc, filter, em)
	}
	os.WriteFile(filepath.Join(dir, "samples_mmlu_physics_T1.jsonl"), []byte(line(0, "strict", 1)+"\n"+line(0, "flexible", 0)+"\n"+line(1, "strict", 0)+"\n"+line(1, "flexible", 1)+"\n"), 0o644)
	r, sum, _, err := Read(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Models[0] != "org/m" || r.Len() != 2 || sum.Logs[0].Filter != "strict" || sum.Logs[0].Metric != "exact_match" || sum.Logs[0].Passed != 2 {
		t.Fatalf("%v %d %+v", r.Models, r.Len(), sum.Logs)
	}
	got := cellsOf(r)
	if got[cellKey{"org/m", "mmlu_physics/0"}] != 1 || got[cellKey{"org/m", "mmlu_physics/1"}] != 0 {
		t.Errorf("cells %v", got)
	}
	if r.ItemText[0] != "Q0?" || r.ItemGroup[0] != "mmlu/mmlu_stem/mmlu_physics" {
		t.Errorf("text %q, category %q", r.ItemText[0], r.ItemGroup[0])
	}
	r, _, _, err = Read(dir, Options{Filter: "flexible", Metric: []string{"pass@1", "acc"}})
	if err != nil || cellsOf(r)[cellKey{"org/m", "mmlu_physics/0"}] != 1 || r.Len() != 2 {
		t.Errorf("--filter flexible --metric acc: %v %v", err, cellsOf(r))
	}
	if _, _, _, err := Read(dir, Options{Filter: "none"}); err == nil || !strings.Contains(err.Error(), `task mmlu_physics has no filter "none" (it has strict, flexible)`) {
		t.Errorf("--filter none: %v", err)
	}
}
