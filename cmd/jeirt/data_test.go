package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model/read"
)

func TestDataInspect(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	os.WriteFile("data.csv", []byte("model,a,b,c,d\nm1,1,,0,1\nm2,0,,0,1\nm3,1,1,0,\nm3,0,1,0,1\n"), 0o644)
	out, err := runCmd(t, newDataInspectCmd(), "data.csv")
	if err != nil {
		t.Fatal(err)
	}
	want := `file          data.csv
format        wide (first column "model" names the models; 4 item columns)
models        3
items         4
observed      9 of 12 cells (density 0.7500)
mean correct  0.5556
trials        1 per cell
graded        0 cells with a fractional score
model acc.    min 0.3333 (m2), median 0.6667, max 0.6667 (m1)
items         1 solved by nobody, 2 by everybody, 0 never observed
blank cells   3
duplicates    3 cells with 3 extra rows; 1 conflicting, 1 ties left missing
`
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	out, err = runCmd(t, newDataInspectCmd(), "data.csv", "--print", "json", "--duplicates", "first")
	if err != nil || !strings.Contains(out, `"observed": 10,`) || !strings.Contains(out, "\"ties_left_missing\": 0\n") {
		t.Errorf("--json: %v\n%s", err, out)
	}
	// The item-text column used is said; a BigCodeBench-like file's
	// instruct_prompt is found.
	os.WriteFile("bcb.csv", []byte("task_id,complete_prompt,instruct_prompt\na,def a(),Write a.\nb,def b(),Write b.\n"), 0o644)
	out, err = runCmd(t, newDataInspectCmd(), "data.csv", "--items", "bcb.csv")
	if err != nil || !strings.Contains(out, "items         4 (2 with text)\nitem text     column instruct_prompt of bcb.csv\n") {
		t.Errorf("--items: %v\n%s", err, out)
	}
	os.WriteFile("bad.csv", []byte("model,item,label\nm,a,maybe\n"), 0o644)
	_, err = runCmd(t, newDataInspectCmd(), "bad.csv")
	if err == nil || err.Error() != `bad.csv:2: column "label": "maybe" is not a 0/1 label` {
		t.Errorf("bad file: %v", err)
	}
}

func TestDataSplitCommand(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if _, err := runCmd(t, newSynthCmd(), "--kind", "jeirt", "--n-models", "20", "--n-items", "50", "--missing", "0.1", "--out", "syn"); err != nil {
		t.Fatal(err)
	}
	all, _, err := read.File("syn/responses.csv", read.Options{})
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--data", "syn/responses.csv", "--items", "syn/items.csv", "--out", "split", "--by", "model", "--val-fraction", "0.1", "--test-fraction", "0.2", "--seed", "3"}
	out, err := runCmd(t, newDataSplitCmd(), args...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "split syn/responses.csv by model (seed 3) into split\n") || !strings.Contains(out, "test        ") {
		t.Errorf("output %q", out)
	}
	total := 0
	models := map[string]string{}
	for _, name := range []string{"train.csv", "val.csv", "test.csv"} {
		r, rep, err := read.File(filepath.Join("split", name), read.Options{Duplicates: "error"})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Blank != 0 {
			t.Errorf("%s: %d rows with a blank label", name, rep.Blank)
		}
		total += r.Len()
		for c := range r.Label {
			m := r.Models[r.Model[c]]
			if prev, ok := models[m]; ok && prev != name {
				t.Fatalf("model %s in %s and %s", m, prev, name)
			}
			models[m] = name
		}
	}
	if total != all.Len() {
		t.Errorf("splits hold %d cells, input %d", total, all.Len())
	}
	if b, err := os.ReadFile("split/items.csv"); err != nil || !strings.HasPrefix(string(b), "item,text,category\nitem_00001,") {
		t.Errorf("items.csv: %v %.40q", err, b)
	}
	// Same seed: same files; an existing folder needs --force.
	first, _ := os.ReadFile("split/test.csv")
	if _, err := runCmd(t, newDataSplitCmd(), args...); err == nil || err.Error() != "split already exists; pass --force to replace it (only what jeirt wrote is ever replaced), or choose another output" {
		t.Errorf("existing out: %v", err)
	}
	if _, err := runCmd(t, newDataSplitCmd(), append(args, "--force")...); err != nil {
		t.Fatal(err)
	}
	again, _ := os.ReadFile("split/test.csv")
	if string(first) != string(again) {
		t.Error("same seed wrote a different test.csv")
	}
	// A part with no cells writes no file, and the table says so.
	out, err = runCmd(t, newDataSplitCmd(), "--data", "syn/responses.csv", "--out", "noval", "--val-fraction", "0", "--test-fraction", "0.2")
	if _, serr := os.Stat("noval/val.csv"); err != nil || !os.IsNotExist(serr) || !strings.Contains(out, "  val   no cells: val.csv not written\n") {
		t.Errorf("--val 0: %v, %v\n%s", err, serr, out)
	}
	// Bad input writes nothing.
	os.WriteFile("bad.csv", []byte("model,q1\nm,x\n"), 0o644)
	if _, err := runCmd(t, newDataSplitCmd(), "--data", "bad.csv", "--out", "nothing"); err == nil {
		t.Error("bad input: no error")
	}
	if _, err := os.Stat("nothing"); !os.IsNotExist(err) {
		t.Error("bad input left an output folder")
	}
}

// data inspect prints the format it guessed even when the labels then fail,
// and the error names the flag to use with the file's own columns.
func TestDataInspectGuessedWrong(t *testing.T) {
	t.Chdir(t.TempDir())
	os.WriteFile("nqs.csv", []byte("name,question,score\nm1,q1,1\nm2,q1,0\n"), 0o644)
	out, err := runCmd(t, newDataInspectCmd(), "nqs.csv")
	wantOut := "file          nqs.csv\nformat        wide (first column \"name\" names the models; 2 item columns)\n"
	wantErr := `nqs.csv:2: column "question": "q1" is not a 0/1 label; the format was guessed as wide (first column "name" names the models; 2 item columns); if it is a long file (one row per model and item), name its columns: --columns model=name,item=question,label=score`
	if !strings.HasPrefix(out, wantOut) || err == nil || err.Error() != wantErr {
		t.Errorf("got %q, %v\nwant %q, %s", out, err, wantOut, wantErr)
	}
	// The suggestion reads the file.
	if out, err = runCmd(t, newDataInspectCmd(), "nqs.csv", "--columns", "model=name,item=question,label=score"); err != nil || !strings.Contains(out, "models        2\nitems         1\n") {
		t.Errorf("with --columns: %v\n%s", err, out)
	}
	os.WriteFile("items.csv", []byte("item_id,text\nq1,What is 2+2?\n"), 0o644)
	_, err = runCmd(t, newDataInspectCmd(), "items.csv")
	if err == nil || !strings.HasSuffix(err.Error(), `but it looks like an item-text file (item id column "item_id", text column "text"): give it with --items, and the responses with --data`) {
		t.Errorf("item-text file: %v", err)
	}
}
