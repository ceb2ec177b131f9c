package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/cmd/internal/cli"
)

// TestDeprecatedAliases: every old spelling does what the new one does and
// prints exactly one deprecation line on standard error; a retired one is an
// error that names its replacement.
func TestDeprecatedAliases(t *testing.T) {
	dir := t.TempDir()
	ck := filepath.Join(dir, "ck")
	writeHandCheckpoint(t, ck, []float64{0.9, 0.75, 0.6}, []string{"big", "mid", "small"})
	trainCSV := writeFile(t, filepath.Join(dir, "train.csv"), "model,item,correct\nbig,t1,0\nmid,t1,1\nsmall,t1,0\nbig,t2,1\nmid,t2,1\n")
	queries := writeFile(t, filepath.Join(dir, "q.txt"), "what is 2+2?\n")
	newOut, newLog, err := runSplit(t, newRouteCmd(), queries, "--checkpoint", ck, "--print", "csv", "--margin", "0.2", "--data", trainCSV, "--format", "long")
	if err != nil {
		t.Fatal(err)
	}
	oldOut, oldLog, err := runSplit(t, newRouteCmd(), queries, "--checkpoint", ck, "--output", "csv", "--margin", "0.2", "--train", trainCSV, "--train-format", "long")
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = runSplit(t, newRouteCmd(), queries, "--checkpoint", ck, "--format", "csv")
	if want := `invalid argument "csv" for "--format" flag: --format csv for the printed format was retired: use --print csv (--format is the layout of --data)`; err == nil || err.Error() != want {
		t.Errorf("route --format csv: %v, want %q", err, want)
	}
	if oldOut != newOut || !strings.HasPrefix(newOut, "id,model,p,cost,fallback,out_of_domain,alt_1,p_1,alt_2,p_2,alt_3,p_3\n1,mid,") {
		t.Errorf("old spellings print\n%s\nnew ones\n%s", oldOut, newOut)
	}
	for _, want := range []string{"route: --train is deprecated; use --data\n", "route: --train-format is deprecated; use --format\n", "route: --output is deprecated; use --print\n"} {
		if strings.Count(oldLog, want) != 1 {
			t.Errorf("log %q: want one %q", oldLog, want)
		}
	}
	if strings.Contains(newLog, "deprecated") {
		t.Errorf("new spellings: log %q", newLog)
	}

	// encode --input, encode merge --input.
	t.Chdir(dir)
	writeFile(t, "items.csv", "item_id,text\nq1,What is 2+2?\nq2,Name a prime.\nq3,Who wrote Hamlet?\n")
	if _, err := runCmd(t, newEncodeCmd(), "--encoder", "hash:8", "--items", "items.csv", "--out", "new.jsonl"); err != nil {
		t.Fatal(err)
	}
	log, err := runCmd(t, newEncodeCmd(), "--encoder", "hash:8", "--input", "items.csv", "--out", "old.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(log, "encode: --input is deprecated; use --items\n") {
		t.Errorf("encode log %q", log)
	}
	a, _ := os.ReadFile("new.jsonl")
	b, _ := os.ReadFile("old.jsonl")
	if string(a) != string(b) || len(a) == 0 {
		t.Error("encode --input wrote a different file than --items")
	}
	if log, err := runCmd(t, newEncodeCmd(), "merge", "--input", "items.csv", "--out", "m.npy", "new.jsonl"); err != nil || !strings.Contains(log, "merge: --input is deprecated; use --items\n") {
		t.Errorf("encode merge --input: %v, log %q", err, log)
	}

	// add-model --responses, add-model suggest --answered.
	resp := writeFile(t, "resp.csv", "model,item,correct\nnewbie,known,1\nnewbie,q1,0\nnewbie,q2,1\n")
	out, log, err := runSplit(t, newAddModelCmd(), "--checkpoint", ck, "--responses", resp, "--items", "items.csv", "--out", "plus")
	if err != nil || !strings.Contains(out, "added newbie from 3 answers") || strings.Count(log, "deprecated") != 1 || !strings.HasPrefix(log, "add-model: --responses is deprecated; use --data\n") {
		t.Errorf("add-model --responses: %v\nout %q\nlog %q", err, out, log)
	}
	_, log, err = runSplit(t, newAddModelCmd(), "suggest", "1", "--checkpoint", ck, "--answered", resp, "--items", "items.csv", "--pool", "items.csv")
	if err != nil || !strings.HasPrefix(log, "suggest: --answered is deprecated; use --data\n") {
		t.Errorf("add-model suggest --answered: %v, log %q", err, log)
	}

	// irt cv --json FILE is retired for --out FILE; --json alone prints JSON.
	writeTinyResponses(t, "tiny.csv", 12, 30, 1)
	_, err = runCmd(t, newIRTCmd(), "cv", "--data", "tiny.csv", "--folds", "2", "--threads", "1", "--json", "old.json")
	if want := "irt cv: --json FILE was retired: use --out old.json (--print json prints the metrics as JSON)"; err == nil || err.Error() != want {
		t.Errorf("irt cv --json FILE: %v, want %q", err, want)
	}
	if _, err := os.Stat("old.json"); !os.IsNotExist(err) {
		t.Errorf("irt cv --json FILE wrote the file: %v", err)
	}
	if _, err := runCmd(t, newIRTCmd(), "cv", "--data", "tiny.csv", "--folds", "2", "--threads", "1", "--out", "new.json"); err != nil {
		t.Fatal(err)
	}
	a, _ = os.ReadFile("new.json")
	if !strings.Contains(string(a), `"baseline"`) {
		t.Errorf("irt cv --out wrote\n%s", a)
	}
	out, log, err = runSplit(t, newIRTCmd(), "cv", "--data", "tiny.csv", "--folds", "2", "--threads", "1", "--json")
	if err != nil || strings.TrimSpace(out) != strings.TrimSpace(string(a)) || strings.Count(log, "cv: --json is deprecated; use --print json\n") != 1 {
		t.Errorf("irt cv --json: %v\n%s\nlog %q", err, out, log)
	}
	if out2, log, err := runSplit(t, newIRTCmd(), "cv", "--data", "tiny.csv", "--folds", "2", "--threads", "1", "--print", "json"); err != nil || out2 != out || strings.Contains(log, "deprecated") {
		t.Errorf("irt cv --print json: %v, log %q\n%s", err, log, out2)
	}

	// synth --models/--items (counts) are --n-models/--n-items; data split
	// --val/--test are --val-fraction/--test-fraction.
	if _, log, err := runSplit(t, newSynthCmd(), "--kind", "2pl", "--models", "4", "--items", "6", "--out", "syn-old"); err != nil ||
		log != "synth: --models is deprecated; use --n-models\nsynth: --items is deprecated; use --n-items\n" && log != "synth: --items is deprecated; use --n-items\nsynth: --models is deprecated; use --n-models\n" {
		t.Errorf("synth --models --items: %v, log %q", err, log)
	}
	if _, err := runCmd(t, newSynthCmd(), "--kind", "2pl", "--n-models", "4", "--n-items", "6", "--out", "syn-new"); err != nil {
		t.Fatal(err)
	}
	a, _ = os.ReadFile("syn-old/responses.csv")
	b, _ = os.ReadFile("syn-new/responses.csv")
	if len(a) == 0 || string(a) != string(b) || strings.Count(string(a), "\n") != 25 {
		t.Errorf("synth old and new spellings differ:\n%s\n%s", a, b)
	}
	_, log, err = runSplit(t, newDataSplitCmd(), "--data", "syn-new/responses.csv", "--val", "0.25", "--test", "0.25", "--out", "split-old")
	if err != nil || !strings.Contains(log, "split: --val is deprecated; use --val-fraction\n") {
		t.Errorf("data split --val: %v, log %q", err, log)
	}
	if _, err := runCmd(t, newDataSplitCmd(), "--data", "syn-new/responses.csv", "--val-fraction", "0.25", "--test-fraction", "0.25", "--out", "split-new"); err != nil {
		t.Fatal(err)
	}
	a, _ = os.ReadFile("split-old/val.csv")
	b, _ = os.ReadFile("split-new/val.csv")
	if len(a) == 0 || string(a) != string(b) {
		t.Errorf("data split --val and --val-fraction differ:\n%s\n%s", a, b)
	}
}

// TestSuggestions: a mistyped flag or command names the nearest one, and a
// missing positional argument says what it is and shows an example.
func TestSuggestions(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"irt", "fit", "--dat", "x.csv"}, "unknown flag: --dat (did you mean --data?)"},
		{[]string{"route", "q.txt", "--checkpoit", "ck"}, "unknown flag: --checkpoit (did you mean --checkpoint?)"},
		{[]string{"rout"}, "unknown command \"rout\" for \"jeirt\"\n\nDid you mean this?\n\troute"},
		{[]string{"irt", "fitt"}, "unknown command \"fitt\" for \"jeirt irt\"; did you mean jeirt irt fit?"},
		{[]string{"route", "--checkpoint", "ck"}, "route: needs QUERIES: a text file with one query per line, a JSONL file, or - for standard input, got 0 argument(s)\nexample:\n  echo \"Fix the off-by-one error in the pagination helper\" | jeirt route - --checkpoint out/quickstart --top 5"},
		{[]string{"irt", "fit", "--input", "x.csv"}, "unknown flag: --input (did you mean --data?)"},
		{[]string{"train", "--cfg", "c.yaml"}, "unknown flag: --cfg (did you mean --config?)"},
		{[]string{"encode", "--input-file", "x.csv"}, "unknown flag: --input-file (jeirt encode takes --batch, --cache, --device, --emit, --encoder, --force, --items, --out, --precision, --shard, --shards, --submit, --verbose; see jeirt encode --help)"},
		{[]string{"route", "q.txt", "--output-format", "csv"}, "unknown flag: --output-format (jeirt route takes "},
		{[]string{"synth", "--models", "3", "--num-items", "4"}, "unknown flag: --num-items (did you mean --n-items?)"},
		{[]string{"data", "split", "-o", "x"}, "unknown shorthand flag: 'o' in -o (jeirt's flags are long, --name; jeirt data split takes "},
		{[]string{"data", "inspect"}, "data inspect: needs the responses file FILE (or --data FILE), got 0 argument(s)\nexample:\n  jeirt data inspect configs/data/swebench-verified/response_matrix.csv \\\n      --items"},
	} {
		_, err := runCmd(t, rootCmd, c.args...)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%v: error %v, want prefix %q", c.args, err, c.want)
		}
	}
	rootCmd.SetArgs(nil)
	if got := cli.SuggestFlag(newRouteCmd(), "zzzzzz"); got != "" {
		t.Errorf("suggestion for a name like no flag: %q", got)
	}
	if got := cli.SuggestFlag(newRouteCmd(), "output"); got != "print" { // route has no --out: the printed format
		t.Errorf("route --output: %q", got)
	}
	if got := cli.SuggestFlag(newRouteCmd(), "zzzzzz"); got != "" {
		t.Errorf("suggestion for a name like no flag: %q", got)
	}
	if cli.Levenshtein("data", "dat") != 1 || cli.Levenshtein("kitten", "sitting") != 3 {
		t.Error("levenshtein")
	}
}
