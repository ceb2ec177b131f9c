package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/catfile"
	"github.com/jeirt/jeirt/model/irtfit"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/model/synth"
)

// catFixture fits 50 of 60 simulated models (10% of cells missing) and
// writes the other 10 models' answers; it returns the fit folder, the
// held-out answers and the fitted models' answers.
func catFixture(t *testing.T) (dir, fit, test, train string, r *model.Responses) {
	t.Helper()
	dir = t.TempDir()
	r, _, err := synth.Generate(synth.Options{Kind: "2pl", Models: 60, Items: 200, Missing: 0.1, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	var tr, te []int32
	for c := range r.Label {
		if r.Model[c] < 50 {
			tr = append(tr, int32(c))
		} else {
			te = append(te, int32(c))
		}
	}
	train, test = filepath.Join(dir, "train.csv"), filepath.Join(dir, "test.csv")
	if err := read.WriteCellsCSV(train, r.Subset(tr)); err != nil {
		t.Fatal(err)
	}
	if err := read.WriteCellsCSV(test, r.Subset(te)); err != nil {
		t.Fatal(err)
	}
	fit = filepath.Join(dir, "fit")
	if _, err := runCmd(t, newIRTCmd(), "fit", "--data", train, "--out", fit); err != nil {
		t.Fatal(err)
	}
	return dir, fit, test, train, r
}

// irt cat simulates: every held-out model gets its budget of items, each one
// it has an answer to, none twice; the files read back; θ agrees with the
// full-data θ.
func TestIRTCatSimulate(t *testing.T) {
	dir, fit, test, _, r := catFixture(t)
	out := filepath.Join(dir, "cat")
	msg, err := runCmd(t, newIRTCmd(), "cat", "--fit", fit, "--data", test, "--budget", "20", "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(msg, "theta: MAP: the posterior mode of theta under the fit's prior") || !strings.Contains(msg, "against the full-data theta: Spearman") {
		t.Errorf("irt cat printed:\n%s", msg)
	}
	ab, err := catfile.ReadAbilities(filepath.Join(out, "abilities.csv"), 1)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := catfile.ReadTrace(filepath.Join(out, "trace.csv"), 1)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := catfile.ReadDoc(filepath.Join(out, "cat.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ab) != 10 || doc.Summary == nil || doc.Summary.Models != 10 || doc.Mode != "simulate" || doc.Settings.Rule != "fisher" {
		t.Fatalf("%d abilities, cat.json %+v", len(ab), doc)
	}
	if rho := float64(doc.Summary.Spearman); rho < 0.85 {
		t.Errorf("Spearman with the full-data θ %.3f after 20 of ~180 items", rho)
	}
	answered := map[string]map[string]string{}
	bm := r.ByModel()
	for i, m := range r.Models {
		answered[m] = map[string]string{}
		for _, c := range bm.Row(i) {
			answered[m][r.Items[r.Item[c]]] = strconv.Itoa(int(r.Label[c]))
		}
	}
	for _, a := range ab {
		if a.ItemsUsed != 20 || a.Stop != "budget" || a.ItemsFull != len(answered[a.Model]) || math.Abs(a.Theta[0]-a.ThetaFull[0]) > 1 {
			t.Errorf("abilities row %+v", a)
		}
	}
	if len(tr) != 10*21 {
		t.Fatalf("trace.csv has %d rows, want 10 models x (1 + 20)", len(tr))
	}
	seen := map[string]bool{}
	for _, s := range tr {
		if s.Step == 0 {
			if s.Item != "" || s.SE[0] < 0.99 {
				t.Errorf("step 0 %+v: want no item and the prior's sd", s)
			}
			continue
		}
		y, ok := answered[s.Model][s.Item]
		if !ok {
			t.Errorf("%s was asked %s, which it has no answer to", s.Model, s.Item)
		}
		if strconv.Itoa(s.Answer) != y {
			t.Errorf("%s on %s: answer %d, the data say %s", s.Model, s.Item, s.Answer, y)
		}
		if seen[s.Model+"\x00"+s.Item] {
			t.Errorf("%s asked %s twice", s.Model, s.Item)
		}
		seen[s.Model+"\x00"+s.Item] = true
	}
	// The last step's θ is abilities.csv's.
	if last := tr[20]; last.Model != ab[0].Model || last.Theta[0] != ab[0].Theta[0] || last.SE[0] != ab[0].SE[0] {
		t.Errorf("trace ends at %+v, abilities.csv says %+v", last, ab[0])
	}
	// Target SE: every model stops at it.
	out2 := filepath.Join(dir, "cat-se")
	if _, err := runCmd(t, newIRTCmd(), "cat", "--fit", fit, "--data", test, "--rule", "kl", "--target-se", "0.4", "--out", out2); err != nil {
		t.Fatal(err)
	}
	ab, _ = catfile.ReadAbilities(filepath.Join(out2, "abilities.csv"), 1)
	for _, a := range ab {
		if a.Stop != "target_se" || a.SE[0] > 0.4 || a.ItemsUsed > 60 {
			t.Errorf("--target-se 0.4: %+v", a)
		}
	}
	// --exclude-flagged never asks a flagged item; --groups balances the
	// groups (here: two halves of the bank) at their shares.
	folder, err := irtfit.Read(fit)
	if err != nil {
		t.Fatal(err)
	}
	flagged := map[string]bool{}
	var g strings.Builder
	g.WriteString("item,group\n")
	for j, it := range folder.Items {
		flagged[it.ID] = it.Flag != ""
		fmt.Fprintf(&g, "%s,%s\n", it.ID, []string{"even", "odd"}[j%2])
	}
	nFlagged := 0
	for _, f := range flagged {
		if f {
			nFlagged++
		}
	}
	if nFlagged == 0 {
		t.Fatal("no item of the fit is flagged: the --exclude-flagged check needs some")
	}
	groups := writeFile(t, filepath.Join(dir, "groups.csv"), g.String())
	out3 := filepath.Join(dir, "cat-excl")
	if _, err := runCmd(t, newIRTCmd(), "cat", "--fit", fit, "--data", test, "--budget", "30", "--exclude-flagged", "--groups", groups, "--out", out3); err != nil {
		t.Fatal(err)
	}
	tr, _ = catfile.ReadTrace(filepath.Join(out3, "trace.csv"), 1)
	count := map[string]int{}
	for _, s := range tr {
		if flagged[s.Item] {
			t.Errorf("--exclude-flagged: %s asked flagged item %s", s.Model, s.Item)
		}
		if s.Step > 0 {
			count[s.Group]++
		}
	}
	if count["even"] != 150 || count["odd"] != 150 {
		t.Errorf("--groups: %v items per group over 10 models x 30, want 150 each", count)
	}
	// An existing --out is kept without --force.
	if _, err := runCmd(t, newIRTCmd(), "cat", "--fit", fit, "--data", test, "--budget", "5", "--out", out); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("second run into %s: %v", out, err)
	}
}

// Live: the first questions for a new model, then the next ones after its
// answers, never one already answered, within the budget; once the budget
// is spent, none, and stderr says why.
func TestIRTCatLive(t *testing.T) {
	dir, fit, _, _, _ := catFixture(t)
	out, log, err := runSplit(t, newIRTCmd(), "cat", "--fit", fit, "--next", "3")
	if err != nil {
		t.Fatal(err, log)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || lines[0] != "model,rank,item,group,value,p_correct" {
		t.Fatalf("next.csv:\n%s", out)
	}
	var items []string
	for k, l := range lines[1:] {
		f := strings.Split(l, ",")
		if f[0] != "new" || f[1] != strconv.Itoa(k+1) {
			t.Errorf("row %q", l)
		}
		items = append(items, f[2])
	}
	answers := filepath.Join(dir, "answers.csv")
	writeFile(t, answers, fmt.Sprintf("model,item,correct\nnew,%s,1\nnew,%s,0\nnew,%s,1\n", items[0], items[1], items[2]))
	liveOut := filepath.Join(dir, "live")
	out, log, err = runSplit(t, newIRTCmd(), "cat", "--fit", fit, "--answers", answers, "--next", "3", "--budget", "5", "--out", liveOut)
	if err != nil {
		t.Fatal(err, log)
	}
	nx, err := catfile.ReadNext(filepath.Join(liveOut, "next.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if len(nx) != 2 {
		t.Fatalf("with 3 answers and a budget of 5: %d next questions, want 2:\n%s", len(nx), out)
	}
	for _, q := range nx {
		for _, it := range items {
			if q.Item == it {
				t.Errorf("asked again %s", it)
			}
		}
		if !(q.P > 0 && q.P < 1) || !(q.Value > 0) {
			t.Errorf("next question %+v", q)
		}
	}
	ab, _ := catfile.ReadAbilities(filepath.Join(liveOut, "abilities.csv"), 1)
	tr, _ := catfile.ReadTrace(filepath.Join(liveOut, "trace.csv"), 1)
	if len(ab) != 1 || ab[0].ItemsUsed != 3 || ab[0].Stop != "" || len(tr) != 4 || tr[3].SE[0] >= tr[0].SE[0] {
		t.Errorf("live abilities %+v, trace %+v", ab, tr)
	}
	out, log, err = runSplit(t, newIRTCmd(), "cat", "--fit", fit, "--answers", answers, "--next", "3", "--budget", "3")
	if err != nil || strings.TrimSpace(out) != "model,rank,item,group,value,p_correct" || !strings.Contains(log, "the test is over (the budget of 3 items is spent)") {
		t.Errorf("budget spent: %v\nstdout %q\nstderr %q", err, out, log)
	}
}

func TestIRTCatErrors(t *testing.T) {
	dir, fit, test, _, _ := catFixture(t)
	groups := writeFile(t, filepath.Join(dir, "groups.csv"), "item,group\nitem_00001,a\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--data", test}, "give --budget N or --target-se S"},
		{[]string{"--data", test, "--next", "3", "--budget", "5"}, "cannot go with --answers or --next"},
		{[]string{}, "give --data FILE"},
		{[]string{"--next", "2", "--rule", "max"}, `--rule "max"`},
		{[]string{"--next", "2", "--estimator", "ml"}, `--estimator "ml"`},
		{[]string{"--next", "2", "--groups", groups}, "199 of the fit's 200 items have no group"},
		{[]string{"--data", test, "--models", "nobody", "--budget", "5"}, `no answers of model "nobody"`},
		{[]string{"--next", "2", "--budget", "3", "--min-items", "4"}, "--min-items 4"},
	} {
		_, err := runCmd(t, newIRTCmd(), append([]string{"cat", "--fit", fit}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}

// add-model --fit places models from any subset of their answers, in the
// fit's abilities.csv form: a fitted model placed from all its answers lands
// near its fitted θ; from a quarter of them, with a larger standard error.
func TestAddModelFit(t *testing.T) {
	dir, fit, test, train, r := catFixture(t)
	rows := filepath.Join(dir, "placed.csv")
	if _, log, err := runSplit(t, newAddModelCmd(), "--fit", fit, "--data", test, "--out", rows); err != nil {
		t.Fatal(err, log)
	}
	got := readCSVFile(t, rows)
	want := readCSVFile(t, filepath.Join(fit, "abilities.csv"))
	if strings.Join(got[0], ",") != strings.Join(want[0], ",") || len(got) != 11 {
		t.Fatalf("placed.csv header %v (%d rows), want the fit's %v", got[0], len(got)-1, want[0])
	}
	// n_obs is each model's number of answers to the fit's items (it was 0).
	tr, _, err := read.File(test, read.Options{})
	if err != nil {
		t.Fatal(err)
	}
	col := -1
	for k, h := range got[0] {
		if h == "n_obs" {
			col = k
		}
	}
	tbm := tr.ByModel()
	for _, row := range got[1:] {
		i := tr.ModelIndex(row[0])
		if i < 0 || col < 0 || row[col] != strconv.Itoa(len(tbm.Row(i))) || row[col] == "0" {
			t.Errorf("placed %s: n_obs %q, want its %d answers", row[0], row[col], len(tbm.Row(max(i, 0))))
		}
	}
	// The same file again needs --force.
	if _, err := runCmd(t, newAddModelCmd(), "--fit", fit, "--data", test, "--out", rows); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("existing --out: %v", err)
	}
	// Fitted models placed again from all their answers, and from a quarter.
	folder, err := irtfit.Read(fit)
	if err != nil {
		t.Fatal(err)
	}
	var quarter []int32
	bm := r.ByModel()
	for i := 0; i < 5; i++ {
		for k, c := range bm.Row(i) {
			if k%4 == 0 {
				quarter = append(quarter, c)
			}
		}
	}
	qfile := filepath.Join(dir, "quarter.csv")
	read.WriteCellsCSV(qfile, r.Subset(quarter))
	all := filepath.Join(dir, "again.csv")
	if _, log, err := runSplit(t, newAddModelCmd(), "--fit", fit, "--data", train, "--models", "model_001,model_002,model_003,model_004,model_005", "--out", all); err != nil {
		t.Fatal(err, log)
	}
	some := filepath.Join(dir, "some.csv")
	if _, log, err := runSplit(t, newAddModelCmd(), "--fit", fit, "--data", qfile, "--out", some); err != nil {
		t.Fatal(err, log)
	}
	a, s := readCSVFile(t, all), readCSVFile(t, some)
	for k := 1; k <= 5; k++ {
		th, _ := strconv.ParseFloat(a[k][1], 64)
		se, _ := strconv.ParseFloat(a[k][2], 64)
		seQ, _ := strconv.ParseFloat(s[k][2], 64)
		fitted := folder.Models[k-1].Theta[0]
		if a[k][0] != folder.Models[k-1].Name || math.Abs(th-fitted) > 0.25 || !(seQ > 1.5*se) {
			t.Errorf("%s: placed at %.3f ± %.3f from all answers (fit %.3f), ± %.3f from a quarter", a[k][0], th, se, fitted, seQ)
		}
	}
	if _, err := runCmd(t, newAddModelCmd(), "--fit", fit, "--data", test, "--fraction", "0.5"); err == nil || !strings.Contains(err.Error(), "--fraction goes with --checkpoint") {
		t.Errorf("--fraction with --fit: %v", err)
	}
	os.Remove(rows)
}

// irt cat refuses a bank with a non-finite or absurd parameter or an item
// row twice, naming the file, line and item (all a = 1e200 gave exit 0, no
// item asked and θ = 0; an item twice was asked again after its answer).
func TestIRTCatRefusesABadBank(t *testing.T) {
	dir, fit, test, _, _ := catFixture(t)
	items := readCSVFile(t, filepath.Join(fit, "items.csv"))
	col := map[string]int{}
	for k, h := range items[0] {
		col[h] = k
	}
	for _, tc := range []struct {
		name string
		edit func(rows [][]string) [][]string
		line int // of items.csv, named in the error with its item
		want string
	}{
		{"every a 1e200", func(rows [][]string) [][]string {
			for _, r := range rows[1:] {
				r[col["a"]] = "1e200"
			}
			return rows
		}, 2, `slope 1e+200, beyond ±1e+06 (column "a"), a value no fit writes`}, // irtfit.Read's bound, before the bank's ±1000 (d 5e3 below)
		{"a NaN", func(rows [][]string) [][]string {
			rows[4][col["a"]] = "NaN"
			return rows
		}, 5, `slope NaN, not a finite number`},
		{"d -Inf", func(rows [][]string) [][]string {
			rows[7][col["d"]] = "-Inf"
			return rows
		}, 8, `intercept -Inf, not a finite number`},
		{"d 5e3", func(rows [][]string) [][]string {
			rows[200][col["d"]] = "5e3"
			return rows
		}, 201, `intercept 5000, beyond ±1000`},
		{"an item twice", func(rows [][]string) [][]string {
			return append(rows, append([]string(nil), rows[3]...))
		}, 202, `is also on line 4: each item has one row`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-"))
			copyTree(t, fit, bad)
			var b strings.Builder
			for _, r := range tc.edit(readCSVFile(t, filepath.Join(fit, "items.csv"))) {
				b.WriteString(strings.Join(r, ",") + "\n")
			}
			writeFile(t, filepath.Join(bad, "items.csv"), b.String())
			id, sep := "", ": "
			if tc.line == len(items)+1 { // the copy of line 4
				id, sep = items[3][col["item"]], " "
			} else {
				id = items[tc.line-1][col["item"]]
			}
			want := fmt.Sprintf("%s:%d: item %q%s%s", filepath.Join(bad, "items.csv"), tc.line, id, sep, tc.want)
			for _, args := range [][]string{{"--next", "3"}, {"--data", test, "--budget", "5"}} {
				_, err := runCmd(t, newIRTCmd(), append([]string{"cat", "--fit", bad}, args...)...)
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("%v: %v, want %q", args, err, want)
				}
			}
		})
	}
}

// The summary's correlations of one simulated test are n/a with the reason
// (they printed NaN), and cat.json has them null with the note.
func TestIRTCatSummaryNA(t *testing.T) {
	dir, fit, test, _, _ := catFixture(t)
	out := filepath.Join(dir, "one")
	msg, err := runCmd(t, newIRTCmd(), "cat", "--fit", fit, "--data", test, "--models", "model_051", "--budget", "5", "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(msg, "Spearman n/a, Pearson n/a (1 pair(s) of the tests' theta and the full-data theta; a rank correlation needs 2), RMSE ") || strings.Contains(msg, "NaN") {
		t.Errorf("summary:\n%s", msg)
	}
	doc, err := os.ReadFile(filepath.Join(out, "cat.json"))
	if err != nil {
		t.Fatal(err)
	}
	if s := string(doc); !strings.Contains(s, `"spearman": null`) || !strings.Contains(s, `"correlation_note": "1 pair(s)`) {
		t.Errorf("cat.json:\n%s", s)
	}
}
