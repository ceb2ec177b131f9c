package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/jeirt/jeirt/encoder"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/read"
)

// writeHandCheckpoint writes a checkpoint on the hash:8 encoder whose adapter
// maps every question to q = (1, 0) (W1, c1, W2 zero, c2 = (1, 0)), so model
// i with row (1 + logit(p_i), 0) answers any question with probability p_i.
func writeHandCheckpoint(t *testing.T, dir string, ps []float64, names []string) {
	t.Helper()
	enc, _ := encoder.NewHash(8)
	m := &model.JEIRT{InputDim: 8, Hidden: 2, Dim: 2, W1: make([]float32, 16), C1: make([]float32, 2),
		W2: make([]float32, 4), C2: []float32{1, 0}, Models: names, Items: []string{"known"}, Q: []float32{1, 0}}
	for _, p := range ps {
		m.M = append(m.M, float32(1+math.Log(p/(1-p))), 0)
	}
	ck := &checkpoint.Checkpoint{Model: m, Manifest: checkpoint.Manifest{
		Encoder: checkpoint.EncoderInfo{Spec: "hash:8", Fingerprint: enc.Fingerprint(), Dim: 8}}}
	if err := ck.Write(dir, false); err != nil {
		t.Fatal(err)
	}
}

// runSplit executes cmd with args and returns its standard output and error separately.
func runSplit(t *testing.T, cmd *cobra.Command, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

func writeFile(t *testing.T, path, text string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRouteCommand(t *testing.T) {
	dir := t.TempDir()
	ck := filepath.Join(dir, "ck")
	writeHandCheckpoint(t, ck, []float64{0.9, 0.75, 0.6}, []string{"big", "mid", "small"})
	queries := writeFile(t, filepath.Join(dir, "q.txt"), "what is 2+2?\n\nname a prime\n")
	costs := writeFile(t, filepath.Join(dir, "costs.csv"), "model,cost\nbig,10\nmid,3\nsmall,1\n")

	out, log, err := runSplit(t, newRouteCmd(), queries, "--checkpoint", ck, "--print", "csv", "--top", "1")
	if err != nil {
		t.Fatal(err)
	}
	want := "id,model,p,cost,fallback,out_of_domain,alt_1,p_1\n1,big,0.9000,,false,false,mid,0.7500\n3,big,0.9000,,false,false,mid,0.7500\n"
	if out != want {
		t.Errorf("route csv:\n%s\nwant:\n%s", out, want)
	}
	if want := "route: rule max-p: the checkpoint records no default rule (written by a jeirt before one was chosen at training): the highest P, as then\n" +
		"route: skipped 1 empty line in " + queries + " (line 2)\n"; !strings.HasPrefix(log, want) {
		t.Errorf("log %q, want prefix %q", log, want)
	}
	out, _, err = runSplit(t, newRouteCmd(), queries, "--checkpoint", ck, "--costs", costs, "--min-p", "0.7")
	if err != nil {
		t.Fatal(err)
	}
	want = "id  model       P        cost  alternatives (P)\n" +
		"1   mid    0.7500           3  big 0.9000, small 0.6000\n" +
		"3   mid    0.7500           3  big 0.9000, small 0.6000\n"
	if out != want {
		t.Errorf("route table:\n%s\nwant:\n%s", out, want)
	}

	// Costs with min-p, from standard input, as JSON lines.
	cmd := newRouteCmd()
	cmd.SetIn(strings.NewReader(`{"id": "q1", "text": "hello"}` + "\n"))
	out, _, err = runSplit(t, cmd, "-", "--checkpoint", ck, "--costs", costs, "--min-p", "0.7", "--print", "json", "--top", "2")
	if err != nil {
		t.Fatal(err)
	}
	line := strings.SplitN(out, "\n", 2)[0]
	wantJSON := `{"id":"q1","model":"mid","p":0.75,"cost":3,"rule":"min-p?p=0.7","reason":"the cheapest of the candidates with P >= 0.7","out_of_domain":false,"alternatives":[{"model":"big","p":0.9,"cost":10},{"model":"small","p":0.6,"cost":1}]}`
	if !jsonEqualApprox(t, line, wantJSON) {
		t.Errorf("route json:\n%s\nwant\n%s", line, wantJSON)
	}

	// λ picks the highest P − λ·cost; min-p out of reach falls back.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--lambda", "0.05"}, "1,mid,"},
		{[]string{"--lambda", "1"}, "1,small,"},
		{[]string{"--min-p", "0.95"}, "1,big,0.9000,10,true"},
		{[]string{"--min-p", "0.7", "--models", "big,small"}, "1,big,0.9000,10,false"},
	} {
		args := append([]string{queries, "--checkpoint", ck, "--costs", costs, "--print", "csv", "--top", "0"}, c.args...)
		out, _, err := runSplit(t, newRouteCmd(), args...)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if rows := strings.Split(out, "\n"); len(rows) < 2 || !strings.HasPrefix(rows[1], c.want) || !strings.HasPrefix(rows[2], "3"+c.want[1:]) {
			t.Errorf("%v: %q, want row %q", c.args, out, c.want)
		}
	}

	// Errors name what is wrong.
	badCosts := writeFile(t, filepath.Join(dir, "bad.csv"), "model,cost\nbig,10\nmid,cheap\n")
	partCosts := writeFile(t, filepath.Join(dir, "part.csv"), "big,10\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--models", "big,huge"}, `route: --models: "huge" is not a model of the checkpoint (it has 3: big, mid, small)`},
		{[]string{"--costs", badCosts}, badCosts + `:3: column "cost": "cheap" is not a non-negative number`},
		{[]string{"--costs", partCosts}, partCosts + `: no cost for model "mid" (price every model routed to, or choose them with --models)`},
		{[]string{"--lambda", "0.1"}, "route: --lambda weighs cost; it needs --costs"},
		{[]string{"--min-p", "0.8"}, "route: --min-p picks the cheapest good-enough model; it needs --costs"},
		{[]string{"--print", "xml"}, `route: --print "xml": want table, csv or json`},
	} {
		_, err := runCmd(t, newRouteCmd(), append([]string{queries, "--checkpoint", ck}, c.args...)...)
		if err == nil || err.Error() != c.want {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
	empty := writeFile(t, filepath.Join(dir, "empty.txt"), "\n\n")
	if _, err := runCmd(t, newRouteCmd(), empty, "--checkpoint", ck); err == nil || err.Error() != "route: "+empty+" has no queries" {
		t.Errorf("empty file: %v", err)
	}
}

func jsonEqualApprox(t *testing.T, got, want string) bool {
	t.Helper()
	var a, b any
	if err := json.Unmarshal([]byte(got), &a); err != nil {
		t.Errorf("not JSON: %q", got)
		return false
	}
	json.Unmarshal([]byte(want), &b)
	return approxEqual(a, b)
}

func approxEqual(a, b any) bool {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && math.Abs(x-y) < 1e-6
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k := range x {
			if !approxEqual(x[k], y[k]) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k := range x {
			if !approxEqual(x[k], y[k]) {
				return false
			}
		}
		return true
	}
	return a == b
}

// "route eval" is the subcommand, anything else is a queries file.
func TestRouteEvalSubcommand(t *testing.T) {
	dir := t.TempDir()
	ck := filepath.Join(dir, "ck")
	writeHandCheckpoint(t, ck, []float64{0.9, 0.75, 0.6}, []string{"big", "mid", "small"})
	// Three held-out questions: big right on q1, q2; mid right on q2, q3;
	// small right on q3 only; small has no answer for q1.
	data := writeFile(t, filepath.Join(dir, "test.csv"), "model,item,correct,text\n"+
		"big,q1,1,one\nbig,q2,1,two\nbig,q3,0,three\n"+
		"mid,q1,0,one\nmid,q2,1,two\nmid,q3,1,three\n"+
		"small,q2,0,two\nsmall,q3,1,three\n")
	costs := writeFile(t, filepath.Join(dir, "costs.csv"), "big,10\nmid,3\nsmall,1\n")
	outCSV := filepath.Join(dir, "curve.csv")
	root := newRouteCmd()
	if _, err := runCmd(t, root, "eval", "--checkpoint", ck, "--data", data, "--costs", costs,
		"--min-p", "0.7,0.95", "--lambda", "1", "--margin", "0.1", "--out", outCSV); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(outCSV)
	if err != nil {
		t.Fatal(err)
	}
	// best-single is big (highest mean P); random: (1/2 + 2/3 + 2/3)/3 = 0.6111, cost (6.5 + 14/3 + 14/3)/3;
	// oracle: big on q1 (only model right), mid on q2 (cheapest right), small on q3;
	// min-p 0.7: mid, mid, mid; min-p 0.95: big ×3 (fallbacks); λ = 1: mid on q1, small on q2, q3.
	want := `policy,rule,param,accuracy,total_cost,mean_cost,items,fallbacks,accuracy_se,vs_best_single,vs_best_single_se,wins,losses
best-single,best-single,,0.666667,30,10,3,0,0.333333,0,0,0,0
random,random,,0.611111,15.8333,5.27778,3,0,0.0555556,-0.0555556,0.364302,0,1
oracle,oracle,,1,14,4.66667,3,0,0,0.333333,0.333333,1,0
cheapest,cheapest,,0.333333,5,1.66667,3,0,0.333333,-0.333333,0.666667,0,1
router,max-p,,0.666667,30,10,3,0,0.333333,0,0,0,0
router,shortlist,2,0.666667,30,10,3,0,0.333333,0,0,0,0
router,shortlist,3,0.666667,30,10,3,0,0.333333,0,0,0,0
router,shortlist,5,0.666667,30,10,3,0,0.333333,0,0,0,0
router,shortlist,10,0.666667,30,10,3,0,0.333333,0,0,0,0
router,margin,0.1,0.666667,30,10,3,0,0.333333,0,0,0,0
router,margin,+Inf,0.666667,30,10,3,0,0.333333,0,0,0,0
router,min-p,0.7,0.666667,9,3,3,0,0.333333,0,0.57735,0,0
router,min-p,0.95,0.666667,30,10,3,3,0.333333,0,0,0,0
router,lambda,1,0.333333,5,1.66667,3,0,0.333333,-0.333333,0.666667,0,1
`
	if string(got) != want {
		t.Errorf("curve:\n%s\nwant:\n%s", got, want)
	}
}

// The margin rule: the default model (here mid, the best on train.csv)
// unless another's P beats its 0.75 by at least δ; big (0.9) beats it by 0.15.
func TestRouteMargin(t *testing.T) {
	dir := t.TempDir()
	ck := filepath.Join(dir, "ck")
	writeHandCheckpoint(t, ck, []float64{0.9, 0.75, 0.6}, []string{"big", "mid", "small"})
	trainCSV := writeFile(t, filepath.Join(dir, "train.csv"), "model,item,correct\nbig,t1,0\nmid,t1,1\nsmall,t1,0\nbig,t2,1\nmid,t2,1\n")
	queries := writeFile(t, filepath.Join(dir, "q.txt"), "what is 2+2?\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--margin", "0.1", "--data", trainCSV}, "1,big,"},
		{[]string{"--margin", "0.2", "--data", trainCSV}, "1,mid,"},
		{[]string{"--margin", "inf", "--data", trainCSV}, "1,mid,"},
		{[]string{"--margin", "0.29", "--default", "small"}, "1,big,"},
		{[]string{"--margin", "0.31", "--default", "small"}, "1,small,"},
		{[]string{"--margin", "0.2"}, "1,big,"}, // default: highest mean predicted P, big
		{[]string{"--margin", "0.2", "--default", "small", "--models", "mid,small"}, "1,small,"},
		{[]string{"--margin", "0.1", "--default", "small", "--models", "mid,small"}, "1,mid,"},
	} {
		args := append([]string{queries, "--checkpoint", ck, "--print", "csv", "--top", "0"}, c.args...)
		out, log, err := runSplit(t, newRouteCmd(), args...)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if got := strings.SplitN(out, "\n", 3)[1]; !strings.HasPrefix(got, c.want) {
			t.Errorf("%v: %q, want prefix %q", c.args, got, c.want)
		}
		// The rule logged is the rule applied, its default model named.
		want := "rule margin?delta=" + c.args[1] + "&default="
		if c.args[1] == "inf" {
			want = "rule best-single: given by the flags"
		}
		if !strings.Contains(log, want) {
			t.Errorf("%v: log %q", c.args, log)
		}
	}
	// --shortlist T: the highest P among the T best models on --train (mid,
	// big, small) or, without --train, by mean predicted P (big, mid, small).
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--shortlist", "1", "--data", trainCSV}, "1,mid,"},
		{[]string{"--shortlist", "2", "--data", trainCSV}, "1,big,"},
		{[]string{"--shortlist", "1"}, "1,big,"},
		{[]string{"--shortlist", "1", "--models", "mid,small"}, "1,mid,"},
		{[]string{"--shortlist", "2", "--data", trainCSV, "--margin", "0.2"}, "1,mid,"},
	} {
		args := append([]string{queries, "--checkpoint", ck, "--print", "csv", "--top", "0"}, c.args...)
		out, _, err := runSplit(t, newRouteCmd(), args...)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if got := strings.SplitN(out, "\n", 3)[1]; !strings.HasPrefix(got, c.want) {
			t.Errorf("%v: %q, want prefix %q", c.args, got, c.want)
		}
	}
	costs := writeFile(t, filepath.Join(dir, "costs.csv"), "big,10\nmid,3\nsmall,1\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--margin", "0.1", "--costs", costs}, "route: --margin does not weigh cost; use it without --costs"},
		{[]string{"--margin", "-1"}, "route: --margin -1 must be a non-negative number (or inf)"},
		{[]string{"--default", "mid"}, "route: --default is the default model of the margin rule; it needs --margin"},
		{[]string{"--data", trainCSV}, "route: --data ranks the models for --margin, --shortlist or a recorded default rule; the checkpoint records none, so it needs --margin or --shortlist"},
		{[]string{"--shortlist", "-1"}, "route: --shortlist -1 must not be negative"},
		{[]string{"--shortlist", "2", "--default", "big"}, "route: --default is the default model of the margin rule; it needs --margin"},
		{[]string{"--margin", "0.1", "--shortlist", "1", "--default", "small"}, `route: --default: "small" is not one of the candidates (--models, --shortlist)`},
		{[]string{"--margin", "0.1", "--default", "huge"}, `route: --default: "huge" is not a model of the checkpoint (it has 3: big, mid, small)`},
		{[]string{"--margin", "0.1", "--default", "big", "--models", "mid,small"}, `route: --default: "big" is not one of the candidates (--models, --shortlist)`},
		{[]string{"--margin", "0.1", "--default", "big", "--data", trainCSV}, "route: give --default or --data, not both"},
	} {
		args := append([]string{queries, "--checkpoint", ck}, c.args...)
		if _, _, err := runSplit(t, newRouteCmd(), args...); err == nil || err.Error() != c.want {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}

	// route eval --val: δ = 0.1 (big) wins on the validation questions, where
	// big is right twice and mid once; on the test questions it beats mid.
	val := writeFile(t, filepath.Join(dir, "val.csv"), "model,item,correct,text\nbig,v1,1,one\nmid,v1,0,one\nbig,v2,1,two\nmid,v2,1,two\n")
	test := writeFile(t, filepath.Join(dir, "test.csv"), "model,item,correct,text\nbig,q1,1,one\nmid,q1,0,one\nbig,q2,1,two\nmid,q2,0,two\nsmall,q2,1,two\n")
	out, log, err := runSplit(t, newRouteCmd(), "eval", "--checkpoint", ck, "--data", test, "--train", trainCSV, "--val", val, "--margin", "0.1,0.2", "--shortlist", "1,2")
	if err != nil {
		t.Fatal(err)
	}
	want := `policy,rule,param,accuracy,total_cost,mean_cost,items,fallbacks,accuracy_se,vs_best_single,vs_best_single_se,wins,losses
best-single,best-single,,0,,,2,0,0,0,0,0,0
random,random,,0.583333,,,2,0,0.0833333,0.583333,0.0833333,1,0
oracle,oracle,,1,,,2,0,0,1,0,1,0
router,max-p,,1,,,2,0,0,1,0,1,0
router,shortlist,1,0,,,2,0,0,0,0,0,0
router,shortlist,2,1,,,2,0,0,1,0,1,0
router,margin-val,0.1,1,,,2,0,0,1,0,1,0
router,margin,0.1,1,,,2,0,0,1,0,1,0
router,margin,0.2,0,,,2,0,0,0,0,0,0
router,margin,+Inf,0,,,2,0,0,0,0,0,0
`
	if out != want {
		t.Errorf("curve:\n%s\nwant:\n%s", out, want)
	}
	if want := "route eval: margin δ = 0.1 chosen on " + val + " (2 questions): accuracy there 1.0000, best single 0.5000, max-p 1.0000\n"; !strings.Contains(log, want) {
		t.Errorf("log %q, want %q", log, want)
	}
}

func TestAddModelCommand(t *testing.T) {
	dir := t.TempDir()
	ck := filepath.Join(dir, "ck")
	writeHandCheckpoint(t, ck, []float64{0.9, 0.75, 0.6}, []string{"big", "mid", "small"})
	var b strings.Builder
	b.WriteString("model,item,correct,text\n")
	for k := 0; k < 40; k++ {
		y := "1"
		if k%4 == 0 {
			y = "0"
		}
		b.WriteString("newbie,q" + string(rune('a'+k%26)) + string(rune('a'+k/26)) + "," + y + ",question " + string(rune('a'+k%26)) + "\n")
	}
	b.WriteString("mid,qaa,1,question a\n")
	resp := writeFile(t, filepath.Join(dir, "new.csv"), b.String())

	out, _, err := runSplit(t, newAddModelCmd(), "--checkpoint", ck, "--data", resp, "--models", "newbie")
	if err != nil {
		t.Fatal(err)
	}
	dst := ck + ".plus-newbie"
	if want := "added newbie from 40 answers"; !strings.HasPrefix(out, want) || !strings.Contains(out, "wrote "+dst+" (4 models, 41 items; 40 items new)") {
		t.Errorf("output %q", out)
	}
	nc, err := checkpoint.Load(dst)
	if err != nil {
		t.Fatal(err)
	}
	// Every question maps to q = (1, 0): the row's first coordinate solves a
	// one-dimensional logistic fit of 30/40 correct, pulled towards the population.
	if p := nc.Model.Prob(3, []float32{1, 0}); p < 0.7 || p > 0.8 {
		t.Errorf("P(newbie correct) = %.4f, want about 0.75", p)
	}
	if _, err := os.Stat(filepath.Join(dst, "onboard.json")); err != nil {
		t.Error(err)
	}
	// Again: a new folder, never the old one.
	if _, _, err := runSplit(t, newAddModelCmd(), "--checkpoint", ck, "--data", resp, "--models", "newbie"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ck + ".plus-newbie-2"); err != nil {
		t.Errorf("second run: %v", err)
	}
	_, _, err = runSplit(t, newAddModelCmd(), "--checkpoint", ck, "--data", resp)
	if want := `add-model: 1 model is already in the checkpoint (pass --replace to refit, or --models to choose others): "mid"`; err == nil || err.Error() != want {
		t.Errorf("existing model: %v", err)
	}
	_, _, err = runSplit(t, newAddModelCmd(), "--checkpoint", ck, "--data", resp, "--models", "newbie", "--out", ck)
	if want := ck + " is an input of this run (" + ck + "): writing it would destroy the input; choose another output"; err == nil || err.Error() != want {
		t.Errorf("--out existing: %v", err)
	}
	out, _, err = runSplit(t, newAddModelCmd(), "--checkpoint", ck, "--responses", resp, "--models", "newbie", "--fraction", "0.5", "--print", "json")
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Models []struct {
			FitCells  int `json:"fit_cells"`
			HeldCells int `json:"held_cells"`
			Heldout   *struct {
				Accuracy float64 `json:"accuracy"`
			} `json:"heldout"`
		} `json:"models"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Models) != 1 || rep.Models[0].FitCells != 20 || rep.Models[0].HeldCells != 20 || rep.Models[0].Heldout == nil {
		t.Errorf("--fraction 0.5 --json: %v %s", err, out)
	}

	// --suggest writes an items file of K known questions.
	sug := filepath.Join(dir, "ask.csv")
	if _, _, err := runSplit(t, newAddModelCmd(), "--suggest", "1", "--checkpoint", ck, "--out", sug); err != nil {
		t.Fatal(err)
	}
	items, err := read.Items(sug)
	if err != nil || len(items.IDs) != 1 || items.IDs[0] != "known" {
		t.Errorf("suggest file: %v %+v", err, items)
	}
	_, _, err = runSplit(t, newAddModelCmd(), "--suggest", "2", "--checkpoint", ck)
	if want := "suggest: K = 2 but the pool has only 1 questions"; err == nil || err.Error() != want {
		t.Errorf("suggest too many: %v", err)
	}
	testSuggestRounds(t, dir, dst)
}

// testSuggestRounds asks a new model questions of the 41-question checkpoint
// ck in two rounds: seeded random questions, then --answered.
func testSuggestRounds(t *testing.T, dir, ck string) {
	r1 := filepath.Join(dir, "round1.csv")
	if _, _, err := runSplit(t, newAddModelCmd(), "--suggest", "3", "--checkpoint", ck, "--design", "random", "--seed", "5", "--out", r1); err != nil {
		t.Fatal(err)
	}
	again, _, err := runSplit(t, newAddModelCmd(), "--suggest", "3", "--checkpoint", ck, "--design", "random", "--seed", "5")
	if err != nil {
		t.Fatal(err)
	}
	first, err := os.ReadFile(r1)
	if err != nil || string(first) != again {
		t.Errorf("the same seed gave %q, then %q", first, again)
	}
	// add-model suggest K is the new spelling of add-model --suggest K; the old
	// one says so on stderr.
	sub, _, err := runSplit(t, newAddModelCmd(), "suggest", "3", "--checkpoint", ck, "--design", "random", "--seed", "5")
	if err != nil || sub != again {
		t.Errorf("add-model suggest: %v %q, want %q", err, sub, again)
	}
	if _, errOut, _ := runSplit(t, newAddModelCmd(), "--suggest", "1", "--checkpoint", ck); !strings.Contains(errOut, "--suggest K is deprecated; use jeirt add-model suggest K") {
		t.Errorf("no deprecation note: %q", errOut)
	}
	round1, err := read.Items(r1)
	if err != nil || len(round1.IDs) != 3 {
		t.Fatalf("round 1: %v %+v", err, round1)
	}
	// The new model gets the first two right and the third wrong.
	var b strings.Builder
	b.WriteString("model,item,correct\n")
	for k, id := range round1.IDs {
		b.WriteString("fresh," + id + "," + map[bool]string{true: "1", false: "0"}[k < 2] + "\n")
	}
	answers := writeFile(t, filepath.Join(dir, "answers.csv"), b.String())
	out, errOut, err := runSplit(t, newAddModelCmd(), "--suggest", "38", "--checkpoint", ck, "--answered", answers)
	if err != nil {
		t.Fatal(err)
	}
	if want := answers + ": fresh answered 3 questions (2 right)"; !strings.Contains(errOut, want) {
		t.Errorf("stderr %q, want %q", errOut, want)
	}
	r2 := filepath.Join(dir, "round2.csv")
	if err := os.WriteFile(r2, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	round2, err := read.Items(r2)
	if err != nil || len(round2.IDs) != 38 {
		t.Fatalf("round 2: %v, %d questions", err, len(round2.IDs))
	}
	asked := map[string]bool{}
	for _, id := range round1.IDs {
		asked[id] = true
	}
	for _, id := range round2.IDs {
		if asked[id] {
			t.Errorf("round 2 asks %s again", id)
		}
		asked[id] = true
	}
	// p_mean is now the fitted row's P: every question of this map is q = (1, 0),
	// and 2 of 3 right, shrunk towards the known models, puts it between 0.6 and 0.9.
	rows := strings.Split(strings.TrimSpace(out), "\n")
	if f := strings.Split(rows[1], ","); len(f) != 5 {
		t.Errorf("row %q", rows[1])
	} else if p, err := strconv.ParseFloat(f[3], 64); err != nil || p < 0.6 || p > 0.9 {
		t.Errorf("P of the first suggestion %q", f[3])
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--suggest", "39", "--answered", answers}, "suggest: K = 39 but only 38 of the pool's 41 questions are not answered yet"},
		{[]string{"--suggest", "2", "--answered", answers, "--models", "nobody"}, answers + `: no answers of model "nobody" (it has fresh)`},
		{[]string{"--suggest", "2", "--answered", answers, "--models", "fresh,other"}, "add-model suggest: --data places one model; got --models fresh,other"},
		{[]string{"--suggest", "2", "--answered", answers, "--design", "d-optimal"}, "add-model suggest: --data (answers) designs are v-optimal (or random); got --design d-optimal"},
		{[]string{"--suggest", "2", "--design", "best"}, `add-model: --design "best": want v-optimal, d-optimal or random`},
		{[]string{"--suggest", "2", "--models", "fresh"}, "add-model: --models goes with --data (the new models' answers)"},
		{[]string{"--responses", answers, "--answered", answers}, "add-model: --answered goes with --suggest"},
	} {
		_, _, err := runSplit(t, newAddModelCmd(), append([]string{"--checkpoint", ck}, c.args...)...)
		if err == nil || err.Error() != c.want {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
	two := writeFile(t, filepath.Join(dir, "two.csv"), "model,item,correct\nfresh,qaa,1\nother,qaa,0\n")
	if _, _, err := runSplit(t, newAddModelCmd(), "--checkpoint", ck, "--suggest", "2", "--answered", two); err == nil ||
		err.Error() != two+": answers of 2 models; pick the new one with --models NAME" {
		t.Errorf("two models: %v", err)
	}
	if _, _, err := runSplit(t, newAddModelCmd(), "--checkpoint", ck, "--suggest", "2", "--answered", two, "--models", "other"); err != nil {
		t.Errorf("two models, --models other: %v", err)
	}
}

// A checkpoint with an out-of-domain reference flags a query unlike its
// training questions and sends it to the best single model (big, the highest
// mean P) unless --keep-out-of-domain; route says how many it flagged.
func TestRouteOutOfDomain(t *testing.T) {
	dir := t.TempDir()
	ck := filepath.Join(dir, "ck")
	writeHandCheckpoint(t, ck, []float64{0.9, 0.75, 0.6}, []string{"big", "mid", "small"})
	enc, _ := encoder.NewHash(8)
	train := []string{"sort the list of numbers", "sort the list of words"}
	x, err := encoder.EncodeItems(context.Background(), enc, train, train, encoder.ItemOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dom, err := checkpoint.NewDomain(append(x[0], x[1]...), 8, nil, 0.5) // two questions: a rate of 1/3 or more flags anything
	if err != nil {
		t.Fatal(err)
	}
	b, _ := dom.Marshal()
	writeFile(t, filepath.Join(ck, checkpoint.DomainFile), string(b))
	costs := writeFile(t, filepath.Join(dir, "costs.csv"), "model,cost\nbig,10\nmid,3\nsmall,1\n")
	queries := writeFile(t, filepath.Join(dir, "q.txt"), "sort the list of numbers\nQuelle est la capitale de la France ?\n")
	out, log, err := runSplit(t, newRouteCmd(), queries, "--checkpoint", ck, "--costs", costs, "--print", "csv", "--top", "0")
	if err != nil {
		t.Fatal(err)
	}
	want := "id,model,p,cost,fallback,out_of_domain\n1,mid,0.7500,3,false,false\n2,big,0.9000,10,false,true\n"
	if out != want || !strings.Contains(log, "route: 1 of 2 queries are out of domain") || !strings.Contains(log, "sent to the rule's fallback, the best single model big") {
		t.Errorf("got\n%s\nlog %s\nwant\n%s", out, log, want)
	}
	out, log, err = runSplit(t, newRouteCmd(), queries, "--checkpoint", ck, "--costs", costs, "--print", "csv", "--top", "0", "--keep-out-of-domain")
	if err != nil {
		t.Fatal(err)
	}
	if want := "id,model,p,cost,fallback,out_of_domain\n1,mid,0.7500,3,false,false\n2,mid,0.7500,3,false,true\n"; out != want || !strings.Contains(log, "the rule's choice is kept") {
		t.Errorf("--keep-out-of-domain: got\n%s\nlog %s", out, log)
	}
}

// A checkpoint with a recorded default rule: route applies it when no rule
// flag is given and says which and why, --rule names another, route eval
// scores it as router,default,<rule> and measures the out-of-domain rate.
func TestRouteDefaultRule(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	writeHandCheckpoint(t, plain, []float64{0.9, 0.75, 0.6}, []string{"big", "mid", "small"})
	ck, err := checkpoint.Load(plain)
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := encoder.NewHash(8)
	train := []string{"sort the list of numbers", "sort the list of words", "sort the numbers", "sort the words"}
	x, _ := encoder.EncodeItems(context.Background(), enc, train, train, encoder.ItemOptions{})
	dom, err := checkpoint.NewDomain(append(append(append(x[0], x[1]...), x[2]...), x[3]...), 8, nil, 0.25)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := dom.Marshal()
	two := 2.0
	// By training accuracy small and mid are the two best: the shortlist
	// takes mid (P 0.75), the higher of their P's.
	ck.Manifest.Routing = &checkpoint.Routing{Rule: "shortlist", Param: &two, Why: "the highest accuracy (0.8) in 5-fold cross-validation",
		Fallback: "small", TrainAccuracy: map[string]float64{"big": 0.2, "mid": 0.7, "small": 0.8}}
	ck.Files = map[string][]byte{checkpoint.DomainFile: b}
	dirCk := filepath.Join(dir, "ck")
	if err := ck.Write(dirCk, false); err != nil {
		t.Fatal(err)
	}
	queries := writeFile(t, filepath.Join(dir, "q.txt"), "sort the list of numbers\nQuelle est la capitale de la France ?\n")
	out, log, err := runSplit(t, newRouteCmd(), queries, "--checkpoint", dirCk, "--output", "csv", "--top", "0")
	if err != nil {
		t.Fatal(err)
	}
	// The second query is out of domain: it goes to the fallback, small.
	if want := "id,model,p,cost,fallback,out_of_domain\n1,mid,0.7500,,false,false\n2,small,0.6000,,false,true\n"; out != want {
		t.Errorf("default rule:\n%s\nwant\n%s", out, want)
	}
	if !strings.Contains(log, "route: rule shortlist?k=2: the checkpoint's default rule: the highest accuracy (0.8) in 5-fold cross-validation\n") ||
		!strings.Contains(log, "the best single model small") {
		t.Errorf("log %s", log)
	}
	out, log, err = runSplit(t, newRouteCmd(), queries, "--checkpoint", dirCk, "--output", "csv", "--top", "0", "--rule", "max-p")
	if err != nil || !strings.HasPrefix(strings.SplitN(out, "\n", 3)[1], "1,big,") || !strings.Contains(log, "rule max-p: given by --rule") {
		t.Errorf("--rule max-p: %v\n%s\n%s", err, out, log)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--rule", "shortlist?k=2", "--margin", "0.1"}, "route: --rule shortlist?k=2 names the rule; drop --margin, --shortlist, --min-p, --lambda and --default"},
		{[]string{"--rule", "best"}, `route: --rule: rule "best": unknown rule "best": want best-single, max-p, shortlist, margin, min-p or lambda (or default: the checkpoint's)`},
		{[]string{"--rule", "lambda?lambda=0.1"}, "route: rule lambda?lambda=0.1 weighs cost; give the prices with --costs"},
	} {
		if _, _, err := runSplit(t, newRouteCmd(), append([]string{queries, "--checkpoint", dirCk}, c.args...)...); err == nil || err.Error() != c.want {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
	// route eval: q1 is in domain (mid right), q2 out of domain (small right).
	test := writeFile(t, filepath.Join(dir, "test.csv"), "model,item,correct,text\n"+
		"big,q1,0,sort the list of numbers\nmid,q1,1,sort the list of numbers\nsmall,q1,0,sort the list of numbers\n"+
		"big,q2,0,Quelle est la capitale de la France ?\nmid,q2,0,Quelle est la capitale de la France ?\nsmall,q2,1,Quelle est la capitale de la France ?\n")
	csvOut, log, err := runSplit(t, newRouteCmd(), "eval", "--checkpoint", dirCk, "--data", test, "--shortlist", "2", "--margin", "inf")
	if err != nil {
		t.Fatal(err)
	}
	// best-single is small (recorded training accuracy): right on q2 only.
	if !strings.Contains(csvOut, "\nbest-single,best-single,,0.5,") || !strings.Contains(csvOut, "\nrouter,default,shortlist?k=2,1,") ||
		!strings.Contains(log, "the out-of-domain check flags 1 (50.0%") || !strings.Contains(log, "it is the row router,default,shortlist?k=2") {
		t.Errorf("route eval:\n%s\n%s", csvOut, log)
	}
}

// The rule field of --print json and the log line are the rule that chose,
// for every rule and the flags that make one; --default is honoured, out
// of domain too.
func TestRouteReportsTheRuleApplied(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	writeHandCheckpoint(t, plain, []float64{0.9, 0.75, 0.6}, []string{"big", "mid", "small"})
	ck, err := checkpoint.Load(plain)
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := encoder.NewHash(8)
	train := []string{"sort the list of numbers", "sort the list of words", "sort the numbers", "sort the words"}
	x, _ := encoder.EncodeItems(context.Background(), enc, train, train, encoder.ItemOptions{})
	dom, err := checkpoint.NewDomain(append(append(append(x[0], x[1]...), x[2]...), x[3]...), 8, nil, 0.25)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := dom.Marshal()
	three := 3.0
	// Ranked by training accuracy: small, mid, big.
	ck.Manifest.Routing = &checkpoint.Routing{Rule: "shortlist", Param: &three, Why: "chosen by cross-validation",
		Fallback: "small", TrainAccuracy: map[string]float64{"big": 0.2, "mid": 0.7, "small": 0.8}}
	ck.Files = map[string][]byte{checkpoint.DomainFile: b}
	dirCk := filepath.Join(dir, "ck")
	if err := ck.Write(dirCk, false); err != nil {
		t.Fatal(err)
	}
	costs := writeFile(t, filepath.Join(dir, "costs.csv"), "model,cost\nbig,10\nmid,3\nsmall,1\n")
	in := writeFile(t, filepath.Join(dir, "in.txt"), "sort the list of numbers\n")
	far := writeFile(t, filepath.Join(dir, "far.txt"), "Quelle est la capitale de la France ?\n")
	for _, c := range []struct {
		args        []string
		query       string
		model, rule string
	}{
		{nil, in, "big", "shortlist?k=3"},
		{[]string{"--rule", "best-single"}, in, "small", "best-single"},
		{[]string{"--rule", "max-p"}, in, "big", "max-p"},
		{[]string{"--rule", "shortlist?k=2"}, in, "mid", "shortlist?k=2"},
		{[]string{"--rule", "margin?delta=0.2"}, in, "big", "margin?delta=0.2&default=small"},
		{[]string{"--rule", "margin?delta=0.35"}, in, "small", "margin?delta=0.35&default=small"},
		{[]string{"--rule", "min-p?p=0.7", "--costs", costs}, in, "mid", "min-p?p=0.7"},
		{[]string{"--rule", "lambda?lambda=1", "--costs", costs}, in, "small", "lambda?lambda=1"},
		{[]string{"--shortlist", "2"}, in, "mid", "shortlist?k=2"},
		{[]string{"--margin", "0.2", "--shortlist", "2"}, in, "small", "margin?delta=0.2&k=2&default=small"},
		{[]string{"--margin", "0.1", "--shortlist", "2"}, in, "mid", "margin?delta=0.1&k=2&default=small"},
		{[]string{"--costs", costs}, in, "mid", "min-p?p=0.7"},
		{[]string{"--costs", costs, "--lambda", "0.05"}, in, "mid", "lambda?lambda=0.05"},
		{[]string{"--margin", "inf"}, in, "small", "best-single"},
		// --margin 0.05 --default M: M unless another's P beats its P by
		// 0.05 (big's 0.9 beats mid's 0.75), and M out of domain.
		{[]string{"--margin", "0.05", "--default", "mid"}, in, "big", "margin?delta=0.05&default=mid"},
		{[]string{"--margin", "0.2", "--default", "mid"}, in, "mid", "margin?delta=0.2&default=mid"},
		{[]string{"--margin", "0.05", "--default", "mid"}, far, "mid", "out-of-domain"},
		{nil, far, "small", "out-of-domain"},
	} {
		args := append([]string{c.query, "--checkpoint", dirCk, "--print", "json"}, c.args...)
		out, log, err := runSplit(t, newRouteCmd(), args...)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		var got struct{ Model, Rule, Reason string }
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("%v: %v in %s", c.args, err, out)
		}
		applied := c.rule
		if c.rule == "out-of-domain" {
			applied = "" // the log names the rule the check overrode
		}
		if got.Model != c.model || got.Rule != c.rule || got.Reason == "" || !strings.Contains(log, "route: rule "+applied) {
			t.Errorf("%v on %s: %s by %q (%s), want %s by %q; log %s", c.args, filepath.Base(c.query), got.Model, got.Rule, got.Reason, c.model, c.rule, log)
		}
	}
	// A default model named in --rule is checked like --default, and the
	// error names --rule.
	for _, c := range []struct{ rule, want string }{
		{"margin?delta=0.1&default=nope", `route: --rule: "nope" is not a model of the checkpoint (it has 3: big, mid, small)`},
		{"margin?delta=0.1&k=1&default=big", `route: --rule: "big" is not one of the candidates (--models, --shortlist)`},
	} {
		if _, _, err := runSplit(t, newRouteCmd(), in, "--checkpoint", dirCk, "--rule", c.rule); err == nil || err.Error() != c.want {
			t.Errorf("--rule %s: %v, want %q", c.rule, err, c.want)
		}
	}
}
