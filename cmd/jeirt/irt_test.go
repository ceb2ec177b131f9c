package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/model/synth"
)

func readCSVFile(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestIRTFitSelectCV(t *testing.T) {
	dir := t.TempDir()
	r, _, err := synth.Generate(synth.Options{Kind: "2pl", Models: 30, Items: 120, Missing: 0.2, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "responses.csv")
	if err := read.WriteLongCSV(data, r); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "fit")
	if _, err := runCmd(t, newIRTCmd(), "fit", "--data", data, "--bootstrap", "20", "--seed", "1", "--out", out); err != nil {
		t.Fatal(err)
	}
	ab := readCSVFile(t, filepath.Join(out, "abilities.csv"))
	if got := strings.Join(ab[0], ","); got != "model,theta,se,lo,hi,rank,rank_lo,rank_hi,accuracy,accuracy_rank,n_obs,flag,lz_star,infit,outfit" {
		t.Errorf("abilities.csv header %q", got)
	}
	if len(ab) != 31 {
		t.Errorf("abilities.csv has %d rows, want 31", len(ab))
	}
	nObs := map[string]int{}
	for _, i := range r.Model {
		nObs[r.Models[i]]++
	}
	for _, row := range ab[1:] {
		for k, v := range row {
			if v == "" && ab[0][k] != "flag" {
				t.Fatalf("abilities.csv: empty %s in %v", ab[0][k], row)
			}
		}
		// Every model answered about 96 of 120 items: counted, none flagged.
		if n, _ := strconv.Atoi(row[10]); n != nObs[row[0]] || row[11] != "" {
			t.Errorf("abilities.csv %s: n_obs %s, flag %q; want %d and none", row[0], row[10], row[11], nObs[row[0]])
		}
	}
	it := readCSVFile(t, filepath.Join(out, "items.csv"))
	if got := strings.Join(it[0][:10], ","); got != "item,a,d,b,se_a,se_d,se_b,p_correct,n_obs,flag" {
		t.Errorf("items.csv header %q", got)
	}
	if len(it) != 121 {
		t.Errorf("items.csv has %d rows", len(it))
	}
	var doc map[string]any
	b, err := os.ReadFile(filepath.Join(out, "fit.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"settings", "loss_history", "iterations", "converged", "seconds", "kendall_tau_vs_accuracy"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("fit.json lacks %q", k)
		}
	}
	if tau := doc["kendall_tau_vs_accuracy"].(float64); tau < 0.7 {
		t.Errorf("Kendall τ %g", tau)
	}
	// The device as asked for and as it ran (one device resolution, by the
	// command); a fit folder written before device_resolved still reads.
	settings := doc["settings"].(map[string]any)
	if settings["device"] != "auto" || settings["device_resolved"] != "cpu" {
		t.Errorf("fit.json settings: device %v, device_resolved %v; want auto and cpu", settings["device"], settings["device_resolved"])
	}
	delete(settings, "device_resolved")
	if b, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "fit.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	// An existing folder is not replaced without --force.
	if _, err := runCmd(t, newIRTCmd(), "fit", "--data", data, "--out", out); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("second fit into %s: %v", out, err)
	}

	sel := filepath.Join(dir, "kept.csv")
	msg, err := runCmd(t, newIRTCmd(), "select", "--fit", out, "--keep", "0.25", "--out", sel)
	if err != nil {
		t.Fatal(err)
	}
	kept := readCSVFile(t, sel)
	if strings.Join(kept[0], ",") != "item,a,d,b,chosen_at_theta" || len(kept) != 31 {
		t.Errorf("kept.csv: header %v, %d rows (want 30 items)", kept[0], len(kept)-1)
	}
	if !strings.Contains(msg, "kept 30 of 120 items") || !strings.Contains(msg, "Kendall τ") {
		t.Errorf("select printed %q", msg)
	}
	// --exclude-flagged: still 30 items, none of them flagged in items.csv.
	flagged := map[string]bool{}
	for _, row := range it[1:] {
		if row[9] != "" {
			flagged[row[0]] = true
		}
	}
	if len(flagged) == 0 {
		t.Fatal("no item of the fit is flagged: the test needs some")
	}
	msg, err = runCmd(t, newIRTCmd(), "select", "--fit", out, "--keep", "0.25", "--exclude-flagged", "--out", sel, "--force")
	if err != nil {
		t.Fatal(err)
	}
	kept = readCSVFile(t, sel)
	for _, row := range kept[1:] {
		if flagged[row[0]] {
			t.Errorf("--exclude-flagged kept flagged item %s", row[0])
		}
	}
	if want := fmt.Sprintf("kept 30 of 120 items in %s (%d flagged items left out)", sel, len(flagged)); len(kept) != 31 || !strings.Contains(msg, want) {
		t.Errorf("--exclude-flagged: %d items, printed %q, want %q", len(kept)-1, msg, want)
	}

	msg, err = runCmd(t, newIRTCmd(), "cv", "--data", data, "--folds", "5")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(msg, "5-fold CV over") || !strings.Contains(msg, "2PL (cBMM)") || !strings.Contains(msg, "per-model accuracy") {
		t.Errorf("cv printed %q", msg)
	}
}

func TestIRTFitRank2AndErrors(t *testing.T) {
	dir := t.TempDir()
	r, _, err := synth.Generate(synth.Options{Kind: "mirt", Rank: 2, Models: 40, Items: 100, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "responses.csv")
	if err := read.WriteLongCSV(data, r); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "fit2")
	if _, err := runCmd(t, newIRTCmd(), "fit", "--data", data, "--rank", "2", "--out", out); err != nil {
		t.Fatal(err)
	}
	ab := readCSVFile(t, filepath.Join(out, "abilities.csv"))
	if got := strings.Join(ab[0], ","); got != "model,theta_1,theta_2,se_1,se_2,lo_1,lo_2,hi_1,hi_2,score,rank,rank_lo,rank_hi,accuracy,accuracy_rank,n_obs,flag,lz_star,infit,outfit" {
		t.Errorf("rank-2 abilities.csv header %q", got)
	}
	it := readCSVFile(t, filepath.Join(out, "items.csv"))
	if got := strings.Join(it[0], ","); got != "item,a_1,a_2,d,b,se_a_1,se_a_2,se_d,se_b,p_correct,n_obs,flag,item_total_r,item_rest_r,infit,infit_zstd,outfit,outfit_zstd" {
		t.Errorf("rank-2 items.csv header %q", got)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--rank", "0"}, "--rank 0: must be at least 1"},
		{[]string{"--bootstrap", "1"}, "--bootstrap 1: must be 0 (none) or at least 2"},
		{[]string{"--method", "mml", "--rank", "2"}, "--method mml fits rank 1 only (got --rank 2)"},
		{[]string{"--method", "em"}, `--method "em": want cbmm, lbfgs or mml`},
		{[]string{"--device", "tpu"}, `device "tpu": unknown (want auto, cpu, cpu:fused or cuda)`},
		{[]string{"--device", "cuda"}, noCUDA(t)},
	}
	for _, c := range cases {
		args := append([]string{"fit", "--data", data, "--out", filepath.Join(dir, "x")}, c.args...)
		_, err := runCmd(t, newIRTCmd(), args...)
		if c.want == noCUDA(t) && err == nil {
			continue // a cuda build
		}
		if err == nil || err.Error() != c.want {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); !os.IsNotExist(err) {
		t.Errorf("a failed fit left its output folder behind")
	}
}

func TestIRTFitMethodsAndTrace(t *testing.T) {
	dir := t.TempDir()
	r, _, err := synth.Generate(synth.Options{Kind: "2pl", Models: 40, Items: 80, Seed: 6})
	if err != nil {
		t.Fatal(err)
	}
	// Joint ML has no finite optimum when an item is solved by all models or
	// by none (its b runs off to ±∞); leave such items out.
	acc := r.ItemAccuracy()
	var cells []int32
	for c, j := range r.Item {
		if acc[j] > 0 && acc[j] < 1 {
			cells = append(cells, int32(c))
		}
	}
	r = r.Subset(cells)
	data := filepath.Join(dir, "responses.csv")
	if err := read.WriteLongCSV(data, r); err != nil {
		t.Fatal(err)
	}
	final := map[string]float64{}
	for _, method := range []string{"cbmm", "lbfgs"} {
		trace := filepath.Join(dir, method+".trace")
		out := filepath.Join(dir, method)
		if _, err := runCmd(t, newIRTCmd(), "fit", "--data", data, "--method", method, "--tol", "1e-10", "--trace", trace, "--out", out); err != nil {
			t.Fatal(err)
		}
		rows := readCSVFile(t, trace)
		if strings.Join(rows[0], ",") != "seconds,loss" || len(rows) < 3 {
			t.Fatalf("%s trace: %v", method, rows[:min(3, len(rows))])
		}
		var doc struct {
			Loss     float64 `json:"loss"`
			Settings struct {
				Method         string `json:"method"`
				DeviceResolved string `json:"device_resolved"`
			} `json:"settings"`
		}
		b, _ := os.ReadFile(filepath.Join(out, "fit.json"))
		if err := json.Unmarshal(b, &doc); err != nil || doc.Settings.Method != method || doc.Settings.DeviceResolved != "cpu" {
			t.Fatalf("%s fit.json: %v, method %q, device_resolved %q", method, err, doc.Settings.Method, doc.Settings.DeviceResolved)
		}
		final[method] = doc.Loss
	}
	// Both solve the same objective.
	if d := final["cbmm"] - final["lbfgs"]; d > 1e-3*final["cbmm"] || -d > 1e-3*final["cbmm"] {
		t.Errorf("final losses differ: cbmm %.6f, lbfgs %.6f", final["cbmm"], final["lbfgs"])
	}
}
