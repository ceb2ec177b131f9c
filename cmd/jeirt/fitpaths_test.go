package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/model/synth"
)

// A fit records its data file by absolute path with its SHA-256, so irt
// select --fit ../A/fit run from a folder B that has its own
// data/responses.csv scores against A's file (it read B's: Kendall τ −0.86
// instead of 0.86, exit 0); a data file that changed or is gone is said so
// instead of scored; a project moved with its fit is found from the fit
// folder; an older fit's relative path is read from here only when what
// is read is the fit's data.
func TestFitPathsFromAnotherFolder(t *testing.T) {
	root := t.TempDir()
	r, _, err := synth.Generate(synth.Options{Kind: "2pl", Models: 40, Items: 60, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(root, "A"), filepath.Join(root, "B")
	for _, dir := range []string{a, b} {
		os.MkdirAll(filepath.Join(dir, "data"), 0o755)
	}
	if err := read.WriteCellsCSV(filepath.Join(a, "data", "responses.csv"), r); err != nil {
		t.Fatal(err)
	}
	flipped := *r
	flipped.Label = make([]uint8, len(r.Label))
	for c, y := range r.Label {
		flipped.Label[c] = 1 - y
	}
	if err := read.WriteCellsCSV(filepath.Join(b, "data", "responses.csv"), &flipped); err != nil {
		t.Fatal(err)
	}
	t.Chdir(a)
	if _, log, err := runSplit(t, newIRTCmd(), "fit", "--data", "data/responses.csv", "--out", "fit"); err != nil {
		t.Fatal(err, log)
	}
	var doc struct {
		Settings map[string]any `json:"settings"`
	}
	raw, _ := os.ReadFile(filepath.Join(a, "fit", "fit.json"))
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(a, "data", "responses.csv"))
	sum := sha256.Sum256(data)
	if doc.Settings["data"] != filepath.Join(a, "data", "responses.csv") || doc.Settings["data_sha256"] != hex.EncodeToString(sum[:]) {
		t.Fatalf("fit.json records data %v, data_sha256 %v", doc.Settings["data"], doc.Settings["data_sha256"])
	}

	t.Chdir(b)
	tau := regexp.MustCompile(`Kendall τ between the model rankings from the kept items and from all items: (-?[0-9.]+)`)
	sel := func(fit string) (string, error) {
		os.Remove("kept.csv")
		return runCmd(t, newIRTCmd(), "select", "--fit", fit, "--keep", "0.5", "--out", "kept.csv")
	}
	out, err := sel("../A/fit")
	m := tau.FindStringSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("select from B: %v\n%s", err, out)
	}
	if v, _ := strconv.ParseFloat(m[1], 64); !(v > 0.5) {
		t.Errorf("select from B: τ %v, want the fit's own data's (well above 0)", v)
	}

	// An older fit: a relative settings.data and no hash. From B it names
	// B's file, which is not the fit's: said, not scored; from A it is read.
	old := filepath.Join(root, "old")
	copyTree(t, filepath.Join(a, "fit"), old)
	oldDoc := strings.Replace(string(raw), `"data": "`+filepath.Join(a, "data", "responses.csv")+`"`, `"data": "data/responses.csv"`, 1)
	oldDoc = regexp.MustCompile(`\s*"data_sha256": "[0-9a-f]+",`).ReplaceAllString(oldDoc, "")
	if oldDoc == string(raw) || strings.Contains(oldDoc, "data_sha256") {
		t.Fatal("could not make the older fit.json")
	}
	writeFile(t, filepath.Join(old, "fit.json"), oldDoc)
	out, err = sel(old)
	if err != nil || tau.MatchString(out) || !strings.Contains(out, `settings.data "data/responses.csv" is relative to the folder the fit was run from`) ||
		!strings.Contains(out, "it is another file (model ") {
		t.Errorf("older fit from B: %v\n%s", err, out)
	}
	if _, err := runCmd(t, newAnalyzeCmd(), "icc", "--fit", old, "--out", "icc"); err == nil || !strings.Contains(err.Error(), "it is another file") {
		t.Errorf("analyze icc of the older fit from B: %v", err)
	}
	t.Chdir(a)
	if out, err = sel(old); err != nil || !tau.MatchString(out) {
		t.Errorf("older fit from A: %v\n%s", err, out)
	}

	// A's data changed, then gone: said, not scored.
	t.Chdir(b)
	writeFile(t, filepath.Join(a, "data", "responses.csv"), strings.Replace(string(data), ",1\n", ",0\n", 1))
	if out, err = sel("../A/fit"); err != nil || tau.MatchString(out) || !strings.Contains(out, "the fit's data file has changed since the fit: "+filepath.Join(a, "data", "responses.csv")+" (SHA-256 ") {
		t.Errorf("changed data: %v\n%s", err, out)
	}
	os.Remove(filepath.Join(a, "data", "responses.csv"))
	if out, err = sel("../A/fit"); err != nil || tau.MatchString(out) || !strings.Contains(out, "the fit's data file is gone: it is not at "+filepath.Join(a, "data", "responses.csv")+" (fit.json's settings)") {
		t.Errorf("data gone: %v\n%s", err, out)
	}
	// The project moved (A's files now only in A2): found from the fit folder.
	a2 := filepath.Join(root, "A2")
	copyTree(t, filepath.Join(a, "fit"), filepath.Join(a2, "fit"))
	os.MkdirAll(filepath.Join(a2, "data"), 0o755)
	writeFile(t, filepath.Join(a2, "data", "responses.csv"), string(data))
	if out, err = sel("../A2/fit"); err != nil || !tau.MatchString(out) {
		t.Errorf("moved project: %v\n%s", err, out)
	}
}
