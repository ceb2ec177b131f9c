package harness

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/jeirt/jeirt/model/read/harness/harnesstest"
)

// The log readers must never panic, hang or hold far more than the input:
// every input gives responses or an error. Run one with
// go test -run '^$' -fuzz '^FuzzReadLMEval$' -fuzztime 60s ./model/read/harness
// (scripts/fuzz.sh runs them all). Each target fuzzes the file of a small
// tree harnesstest writes that carries the samples, the rest kept valid.

// fuzzTree writes a small tree of tool's logs and returns its folder and
// the path of the file that holds the samples.
func fuzzTree(f *testing.F, tool, file string) (string, string) {
	dir := f.TempDir()
	if err := harnesstest.Write(dir, tool, smallSet("org/m0")); err != nil {
		f.Fatal(err)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, file))
	if len(matches) != 1 {
		f.Fatalf("%s: %v", file, matches)
	}
	b, err := os.ReadFile(matches[0])
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(b[:len(b)/2])
	return dir, matches[0]
}

func fuzzRead(f *testing.F, tool, file string, seeds ...string) {
	dir, p := fuzzTree(f, tool, file)
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		r, _, _, err := Read(dir, Options{Tool: tool, Graded: len(b)%2 == 0})
		if err == nil && (r.Len() == 0 || len(r.ItemText) != len(r.Items)) {
			t.Fatalf("no error, %d cells, %d texts for %d items", r.Len(), len(r.ItemText), len(r.Items))
		}
	})
}

func FuzzReadLMEval(f *testing.F) {
	fuzzRead(f, LMEval, "org_m0/samples_quiz_2026-01-01T*.jsonl",
		`{"doc_id":1,"filter":"none","metrics":["acc"],"acc":true,"arguments":[["a\"b","c"]]}`+"\n",
		`{"doc_id":"x","filter":"none","metrics":["acc"],"acc":[1,2]}`)
}

func FuzzReadHELM(f *testing.F) {
	fuzzRead(f, HELM, "quiz:model=org_m0/per_instance_stats.json",
		`[{"instance_id":"1","train_trial_index":0,"stats":[{"name":{"name":"exact_match","split":"test"},"count":2,"sum":1}]}]`,
		`[{"instance_id":"1","perturbation":{"name":"typo"},"stats":[]}]`)
}

func FuzzReadInspect(f *testing.F) {
	fuzzRead(f, Inspect, "00_quiz_org_m0.json",
		`{"version":2,"eval":{"task":"t","model":"m","scorers":[{"name":"s"}]},"samples":[{"id":1,"epoch":1,"input":[{"role":"user","content":[{"type":"text","text":"q"}]}],"scores":{"s":{"value":{"a":1}}}}]}`,
		`{"eval":{"task":"t","model":"m"},"samples":[{"id":1,"scores":{"s":{"value":"P"}},"error":null}],"reductions":[1,"\\"]}`)
}

func FuzzReadEEE(f *testing.F) {
	fuzzRead(f, EEE, "data/quiz/org/m0/*_samples.jsonl",
		`{"model_id":"m","evaluation_name":"e","sample_id":3,"input":{"raw":"q\u00e9"},"evaluation":{"is_correct":null,"score":0.5}}`+"\n")
}

// FuzzReadInspectEval fuzzes a sample member of an inspect .eval zip (the
// zip itself kept valid) and, with the other half of the input, its header.
func FuzzReadInspectEval(f *testing.F) {
	f.Add([]byte(`{"id":1,"epoch":1,"input":"q","scores":{"s":{"value":"C"}}}`), []byte(`{"version":2,"eval":{"task":"t","model":"m","scorers":[{"name":"s"}]}}`))
	f.Add([]byte(`{"id":"x","epoch":2,"input":[{"role":"user","content":"q"}],"scores":{"s":{"value":0.5}}}`), []byte(`{"eval":{"task":"t","model":"m"}}`))
	f.Add([]byte(`{"id":1,"scores":{"s":{"value":"P"}},"error":{"message":"x"}}`), []byte(`{"eval":{}}`))
	dir := f.TempDir()
	p := filepath.Join(dir, "log.eval")
	f.Fuzz(func(t *testing.T, sample, header []byte) {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for name, b := range map[string][]byte{"header.json": header, "samples/1_epoch_1.json": sample} {
			w, err := zw.Create(name)
			if err != nil {
				t.Fatal(err)
			}
			w.Write(b)
		}
		zw.Close()
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		r, _, _, err := Read(p, Options{Graded: len(sample)%2 == 0})
		if err == nil && (r.Len() != 1 || len(r.Items) != 1) {
			t.Fatalf("no error, %d cells, %d items", r.Len(), len(r.Items))
		}
	})
}
