package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model/checkpoint"
)

// mdbFixture is the measurement-db fixture of package read (a tree, a
// released copy and the same cells as long CSVs; see its generator,
// model/read/read_mdb_fixture_test.go), as an absolute path.
func mdbFixture(t *testing.T) string {
	p, err := filepath.Abs(filepath.Join("..", "..", "model", "read", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// fitFiles reads a fit folder's abilities.csv, items.csv and fit.json, the
// last without its settings and wall time (which name the input).
func fitFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	settings := regexp.MustCompile(`(?s)"settings": \{.*?\n  \},\n|  "seconds": [0-9.e-]+,?\n`)
	out := map[string][]byte{}
	for _, f := range []string{"abilities.csv", "items.csv", "fit.json"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		out[f] = settings.ReplaceAll(b, nil)
	}
	return out
}

func sameFit(t *testing.T, what string, got, want map[string][]byte) {
	t.Helper()
	for f, w := range want {
		if b := got[f]; !bytes.Equal(b, w) {
			g, e := bytes.Split(b, []byte("\n")), bytes.Split(w, []byte("\n"))
			k := 0
			for k < min(len(g), len(e)) && bytes.Equal(g[k], e[k]) {
				k++
			}
			t.Errorf("%s: %s differs from the long CSV's at line %d:\n%s\nwant\n%s", what, f, k+1, g[min(k, len(g)-1)], e[min(k, len(e)-1)])
		}
	}
}

// A fit from the measurement-db fixture writes the same abilities.csv,
// items.csv and fit.json (but its settings and time), byte for byte, as
// the fit from the same cells as a long CSV: a binary benchmark, a graded
// one (ordinal 0..10) and one of trials (10 a cell, k of n); given as the
// data set's folder, its responses file, the tree with --benchmark, or a
// released flat <dataset>.parquet; and two data sets fitted jointly.
func TestMDBFitsLikeLongCSV(t *testing.T) {
	fx := mdbFixture(t)
	t.Chdir(t.TempDir())
	long := func(d string) string { return filepath.Join(fx, "mdb-long", d+".csv") }
	for _, c := range []struct {
		name string
		long []string // the long CSV's irt fit arguments
		mdb  [][]string
	}{
		{"swebench", []string{"--data", long("swebench")}, [][]string{
			{"--data", filepath.Join(fx, "mdb", "swebench")},
			{"--data", filepath.Join(fx, "mdb-release", "swebench.parquet")},
			{"--data", filepath.Join(fx, "mdb"), "--benchmark", "swebench"},
		}},
		{"synth_ordinal", []string{"--data", long("synth_ordinal"), "--graded"}, [][]string{
			{"--data", filepath.Join(fx, "mdb", "synth_ordinal")},
			{"--data", filepath.Join(fx, "mdb", "synth_ordinal", "processed", "responses.parquet")},
		}},
		{"synth_trials", []string{"--data", long("synth_trials")}, [][]string{
			{"--data", filepath.Join(fx, "mdb", "synth_trials"), "--format", "measurement-db"},
		}},
		{"joint", []string{"--data", long("synth_ordinal"), "--data", long("synth_trials"), "--graded", "--joint"}, [][]string{
			{"--data", filepath.Join(fx, "mdb", "synth_ordinal"), "--data", filepath.Join(fx, "mdb", "synth_trials"), "--joint"},
		}},
	} {
		out := "fit-csv-" + c.name
		if _, err := runCmd(t, newIRTCmd(), append([]string{"fit", "--out", out}, c.long...)...); err != nil {
			t.Fatal(err)
		}
		want := fitFiles(t, out)
		if !bytes.Contains(want["fit.json"], []byte(`"observed": `)) {
			t.Fatalf("%s: fit.json not as expected:\n%.300s", c.name, want["fit.json"])
		}
		for k, args := range c.mdb {
			out := filepath.Join("fit-mdb", c.name, string(rune('a'+k)))
			if msg, err := runCmd(t, newIRTCmd(), append([]string{"fit", "--out", out}, args...)...); err != nil {
				t.Fatalf("%s %v: %v\n%s", c.name, args, err, msg)
			}
			sameFit(t, strings.Join(args, " "), fitFiles(t, out), want)
		}
	}
	// One by one in a batch, each into the sub-folder --name gives it, as
	// each alone.
	if _, err := runCmd(t, newIRTCmd(), "fit", "--data", filepath.Join(fx, "mdb", "swebench"), "--data", filepath.Join(fx, "mdb", "synth_trials"),
		"--name", "sw", "--name", "tr", "--out", "batch"); err != nil {
		t.Fatal(err)
	}
	// (fit.json says batch_fits: 2.)
	for sub, alone := range map[string]string{"sw": "swebench", "tr": "synth_trials"} {
		want := fitFiles(t, filepath.Join("fit-mdb", alone, "a"))
		delete(want, "fit.json")
		sameFit(t, "batch "+sub, fitFiles(t, filepath.Join("batch", sub)), want)
	}
	// The tree of three benchmarks, none named, is refused with the list.
	_, err := runCmd(t, newIRTCmd(), "fit", "--data", filepath.Join(fx, "mdb"), "--out", "none")
	if err == nil || !strings.Contains(err.Error(), ": 3 benchmarks: swebench (binary, 120 rows, in ") ||
		!strings.Contains(err.Error(), "name the benchmarks to read with --benchmark (a list, or all") {
		t.Errorf("several benchmarks: %v", err)
	}
}

// jeirt train takes its item texts from the tree's items table (content):
// its checkpoint is the one trained from the long CSV with the same texts
// given by --items, and not the one trained without them.
func TestMDBTrainTakesTexts(t *testing.T) {
	fx := mdbFixture(t)
	t.Chdir(t.TempDir())
	cfg := "encoder: {spec: \"hash:8\"}\nmodel: {dim: 2, hidden: 4}\ntrain: {epochs: 2}\nroute: {folds: 0}\nsplit: {by: cell}\n"
	// The losses of each epoch and the test metrics: a function of the
	// cells, the texts and the seeds (the checkpoint's files also hold times).
	train := func(name, data string) string {
		writeUserFile(t, name+".yaml", data+cfg+"output: "+name+"\n")
		if out, err := runCmd(t, newTrainCmd(), "--config", name+".yaml", "--no-baselines"); err != nil {
			t.Fatal(err, out)
		}
		b, err := os.ReadFile(filepath.Join(name, "manifest.json"))
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Metrics struct {
				Test    map[string]any `json:"test"`
				History []struct {
					TrainLoss float64 `json:"train_loss"`
					ValLoss   float64 `json:"val_loss"`
				} `json:"history"`
			} `json:"metrics"`
		}
		if err := json.Unmarshal(b, &m); err != nil || len(m.Metrics.History) != 2 {
			t.Fatalf("%v: %.300s", err, b)
		}
		return fmt.Sprint(m.Metrics.Test, m.Metrics.History)
	}
	fromTree := train("tree", "data: {responses: \""+filepath.Join(fx, "mdb", "swebench")+"\"}\n")
	withItems := train("items", "data: {responses: \""+filepath.Join(fx, "mdb-long", "swebench.csv")+"\", items: \""+filepath.Join(fx, "mdb-long", "swebench_items.csv")+"\"}\n")
	without := train("bare", "data: {responses: \""+filepath.Join(fx, "mdb-long", "swebench.csv")+"\"}\n")
	if fromTree != withItems {
		t.Errorf("the tree's texts train another model than the same texts given by --items:\n%s\n%s", fromTree, withItems)
	}
	if fromTree == without {
		t.Errorf("the texts make no difference: the test cannot tell whether they were read")
	}
}

// data inspect lists the benchmarks of a tree, with how each is scored,
// also when it refuses to choose among them; data import writes the
// benchmarks read as one long file (items grouped by benchmark in its item
// file) that fits as the tree does.
func TestMDBInspectAndImport(t *testing.T) {
	fx := mdbFixture(t)
	t.Chdir(t.TempDir())
	tree := filepath.Join(fx, "mdb")
	out, err := runCmd(t, newDataInspectCmd(), tree)
	for _, want := range []string{
		"format        measurement-db (measurement-db tables",
		"measurement-db: 3 benchmark(s); registry " + filepath.Join(tree, "_registry") + "\n",
		"  synth_ordinal (Graded synth (ordinal)) in " + filepath.Join(tree, "synth_ordinal", "processed", "responses.parquet") + `: ordinal, scale {"kind":"discrete","values":[0,1,2,3,4,5,6,7,8,9,10]}, 120 rows; not read` + "\n",
	} {
		if err == nil || !strings.Contains(out, want) {
			t.Errorf("inspect without --benchmark: %v; output lacks %q:\n%s", err, want, out)
		}
	}
	out, err = runCmd(t, newDataInspectCmd(), tree, "--benchmark", "synth_ordinal,synth_trials")
	for _, want := range []string{
		"models        10\n", "items         24 in 2 groups\n",
		`120 rows; graded: x / 10` + "\n",
		"1200 rows; trials of binary: 0/1 as given\n",
		"  swebench (SWE-bench Verified) in " + filepath.Join(tree, "swebench", "responses.parquet"),
		"models named by display_name: 10 (0 given their subject_id for a shared name); responses missing (null or not applicable): 0\n",
	} {
		if err != nil || !strings.Contains(out, want) {
			t.Errorf("inspect: %v; output lacks %q:\n%s", err, want, out)
		}
	}
	if _, err := runCmd(t, newDataImportCmd(), tree, "--benchmark", "all", "--out", "all.csv"); err != nil {
		t.Fatal(err)
	}
	items, err := os.ReadFile("all_items.csv")
	if err != nil || !bytes.Contains(items, []byte(",synth_trials\n")) || !bytes.Contains(items, []byte("Modeling's `separability_matrix`")) {
		t.Errorf("the item file has the texts and the benchmarks as categories: %v\n%.300s", err, items)
	}
	if _, err := runCmd(t, newIRTCmd(), "fit", "--data", tree, "--benchmark", "all", "--out", "fit-tree"); err != nil {
		t.Fatal(err)
	}
	if _, err := runCmd(t, newIRTCmd(), "fit", "--data", "all.csv", "--graded", "--out", "fit-imported"); err != nil {
		t.Fatal(err)
	}
	sameFit(t, "imported", fitFiles(t, "fit-imported"), fitFiles(t, "fit-tree"))
}

// A training config reads a tree's benchmarks with data.benchmark (all:
// one matrix, items grouped by benchmark, split by benchmark here).
func TestMDBTrainConfigBenchmarks(t *testing.T) {
	fx := mdbFixture(t)
	t.Chdir(t.TempDir())
	writeUserFile(t, "c.yaml", "data: {responses: \""+filepath.Join(fx, "mdb")+"\", benchmark: all}\n"+
		"split: {by: benchmark, hold: synth_trials}\nencoder: {spec: \"hash:8\"}\nmodel: {dim: 2, hidden: 4}\ntrain: {epochs: 1}\nroute: {folds: 0}\noutput: ck\n")
	if out, err := runCmd(t, newTrainCmd(), "--config", "c.yaml", "--no-baselines"); err != nil {
		t.Fatal(err, out)
	}
	ck, err := checkpoint.Load("ck")
	if err != nil {
		t.Fatal(err)
	}
	if len(ck.Manifest.Models) != 20 || len(ck.Manifest.Items) != 36 {
		t.Errorf("trained on %d models, %d items; want 20, 36", len(ck.Manifest.Models), len(ck.Manifest.Items))
	}
	// Without data.benchmark the tree's three benchmarks are listed.
	writeUserFile(t, "none.yaml", "data: {responses: \""+filepath.Join(fx, "mdb")+"\"}\nencoder: {spec: \"hash:8\"}\noutput: none\n")
	if _, err := runCmd(t, newTrainCmd(), "--config", "none.yaml", "--no-baselines"); err == nil || !strings.Contains(err.Error(), "3 benchmarks: swebench (binary, 120 rows") {
		t.Errorf("several benchmarks: %v", err)
	}
}
