package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/model/synth"
)

// irt fit --model 3pl --guess n_options: the lower asymptotes come from a
// column of the items file (c = 1/n), items.csv gains c, and irt cv fits
// the family on the same folds with the winner marked; graded cells need
// --graded, and the 1PL writes one discrimination.
func TestIRTFamilyCommands(t *testing.T) {
	dir := t.TempDir()
	r, _, err := synth.Generate(synth.Options{Kind: "2pl", Models: 60, Items: 50, Guess: 0.25, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "responses.csv")
	if err := read.WriteLongCSV(data, r); err != nil {
		t.Fatal(err)
	}
	var items strings.Builder
	items.WriteString("item,text,n_options\n")
	for j, id := range r.Items {
		fmt.Fprintf(&items, "%s,question %d,%d\n", id, j, 4+j%2)
	}
	itemFile := filepath.Join(dir, "items.csv")
	if err := os.WriteFile(itemFile, []byte(items.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "fit3")
	if _, err := runCmd(t, newIRTCmd(), "fit", "--data", data, "--items", itemFile, "--model", "3pl", "--guess", "n_options", "--out", out); err != nil {
		t.Fatal(err)
	}
	rows := readCSVFile(t, filepath.Join(out, "items.csv"))
	if rows[0][4] != "c" {
		t.Fatalf("items.csv header %v: want c after b", rows[0])
	}
	for j, row := range rows[1:] {
		if want := model.FormatFloat(1 / float64(4+j%2)); row[4] != want {
			t.Fatalf("item %s: c %s, want %s", row[0], row[4], want)
		}
	}
	if _, err := runCmd(t, newIRTCmd(), "fit", "--data", data, "--model", "3pl", "--guess", "n_options", "--out", out, "--force"); err == nil ||
		!strings.Contains(err.Error(), "give it with --items") {
		t.Errorf("--guess COLUMN without --items: %v", err)
	}
	if _, err := runCmd(t, newIRTCmd(), "fit", "--data", data, "--guess", "0.25", "--out", out, "--force"); err == nil ||
		!strings.Contains(err.Error(), "need --model 3pl") {
		t.Errorf("--guess with the 2PL: %v", err)
	}
	one := filepath.Join(dir, "fit1")
	if _, err := runCmd(t, newIRTCmd(), "fit", "--data", data, "--model", "1pl", "--out", one); err != nil {
		t.Fatal(err)
	}
	rows = readCSVFile(t, filepath.Join(one, "items.csv"))
	for _, row := range rows[1:] {
		if row[1] != rows[1][1] {
			t.Fatalf("the 1PL wrote discriminations %s and %s", rows[1][1], row[1])
		}
	}
	msg, err := runCmd(t, newIRTCmd(), "cv", "--data", data, "--folds", "3", "--model", "1pl,2pl,3pl", "--rank", "1,2")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1PL (cBMM)", "1PL rank 2 (cBMM)        not fitted: the 1PL is unidimensional", "2PL rank 2 (cBMM)", "3PL (cBMM)", "* lowest held-out log loss: "} {
		if !strings.Contains(msg, want) {
			t.Errorf("cv printed %q, without %q", msg, want)
		}
	}
	winners := 0
	for _, line := range strings.Split(msg, "\n") {
		if strings.HasPrefix(line, "* ") && strings.Contains(line, "(cBMM)") {
			winners++
		}
	}
	if winners != 1 {
		t.Errorf("cv marked %d winners:\n%s", winners, msg)
	}
	// A graded file whose label column does not say so (jeirt's own files
	// name it graded_score): an error without --graded, a fit with it.
	g, _, err := synth.Generate(synth.Options{Kind: "2pl", Models: 30, Items: 40, Levels: 5, Seed: 6})
	if err != nil {
		t.Fatal(err)
	}
	graded := filepath.Join(dir, "graded.csv")
	if err := read.WriteLongCSV(graded, g); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(graded); err != nil || !bytes.HasPrefix(b, []byte("model,item,graded_score\n")) {
		t.Fatalf("graded file: %v\n%.100s", err, b)
	} else if err := os.WriteFile(graded, bytes.Replace(b, []byte("graded_score"), []byte("correct"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := runCmd(t, newIRTCmd(), "fit", "--data", graded, "--out", filepath.Join(dir, "g")); err == nil || !strings.Contains(err.Error(), "use --graded") {
		t.Errorf("graded without --graded: %v", err)
	}
	if _, err := runCmd(t, newIRTCmd(), "fit", "--data", graded, "--graded", "--out", filepath.Join(dir, "g")); err != nil {
		t.Fatal(err)
	}
	if _, err := runCmd(t, newIRTCmd(), "fit", "--data", graded, "--graded", "--method", "lbfgs", "--out", filepath.Join(dir, "g2")); err == nil ||
		!strings.Contains(err.Error(), "fits 0/1 answers only") {
		t.Errorf("lbfgs on graded cells: %v", err)
	}
}
