package main

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/jeirt/jeirt/model/read/harness/harnesstest"
)

// simulatedSet is a task of 6 models on 30 items answered by a 2PL, with a
// few cells missing, some of 2 or 3 trials and some graded scores.
func simulatedSet() harnesstest.Set {
	rng := rand.New(rand.NewPCG(7, 44))
	s := harnesstest.Set{Task: "arith"}
	for m := range 6 {
		s.Models = append(s.Models, fmt.Sprintf("org%d/model-%d", m%2, m))
	}
	for j := range 30 {
		s.Items = append(s.Items, harnesstest.Item{ID: fmt.Sprint(j), Text: fmt.Sprintf("What is %d + %d?", j, 2*j+1)})
	}
	for m := range s.Models {
		row := make([][]float64, len(s.Items))
		theta := float64(m)/2 - 1.25
		for j := range s.Items {
			if rng.Float64() < 0.1 {
				continue // not answered
			}
			b := float64(j)/10 - 1.5
			p := 1 / (1 + math.Exp(-(theta - b)))
			n := 1
			if rng.Float64() < 0.2 {
				n = 2 + rng.IntN(2)
			}
			for range n {
				x := 0.0
				if rng.Float64() < p {
					x = 1
				}
				if rng.Float64() < 0.08 {
					x = []float64{0.25, 0.5, 0.75}[rng.IntN(3)]
				}
				row[j] = append(row[j], x)
			}
		}
		s.Scores = append(s.Scores, row)
	}
	return s
}

// The same responses written as logs of each of the four tools (the fields
// each carries: harnesstest.Write) fit to byte-identical abilities, items
// and fit summary (but its settings and time) as the same responses given
// as a long CSV.
func TestImportFitsLikeLongCSV(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	s := simulatedSet()
	if err := os.WriteFile("long.csv", []byte(harnesstest.LongCSV(s)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := runCmd(t, newIRTCmd(), "fit", "--data", "long.csv", "--graded", "--out", "fit-csv"); err != nil {
		t.Fatal(err)
	}
	// fit.json differs in its settings (the data path, the format, --graded)
	// and its wall time only.
	settings := regexp.MustCompile(`(?s)"settings": \{.*?\n  \},\n|  "seconds": [0-9.e-]+,?\n`)
	want := map[string][]byte{}
	for _, f := range []string{"abilities.csv", "items.csv", "fit.json"} {
		b, err := os.ReadFile(filepath.Join("fit-csv", f))
		if err != nil {
			t.Fatal(err)
		}
		want[f] = settings.ReplaceAll(b, nil)
	}
	if !bytes.Contains(want["fit.json"], []byte(`"observed": `)) || bytes.Contains(want["fit.json"], []byte(`"settings"`)) {
		t.Fatalf("fit.json not as expected:\n%.400s", want["fit.json"])
	}
	for _, tool := range []string{"lm-eval", "helm", "inspect", "eee"} {
		t.Run(tool, func(t *testing.T) {
			logs := filepath.Join("logs", tool)
			if err := harnesstest.Write(logs, tool, s); err != nil {
				t.Fatal(err)
			}
			out := "fit-" + tool
			if _, err := runCmd(t, newIRTCmd(), "fit", "--data", logs, "--out", out); err != nil {
				t.Fatal(err)
			}
			for f, w := range want {
				b, err := os.ReadFile(filepath.Join(out, f))
				if err != nil {
					t.Fatal(err)
				}
				if b = settings.ReplaceAll(b, nil); !bytes.Equal(b, w) {
					got, exp := bytes.Split(b, []byte("\n")), bytes.Split(w, []byte("\n"))
					k := 0
					for k < min(len(got), len(exp)) && bytes.Equal(got[k], exp[k]) {
						k++
					}
					t.Errorf("%s differs from the long CSV's at line %d:\n%s\nwant\n%s", f, k+1, got[min(k, len(got)-1)], exp[min(k, len(exp)-1)])
				}
			}
			// data import writes the same cells as the long CSV, and the texts,
			imp := "imp-" + tool + ".csv"
			if _, err := runCmd(t, newDataImportCmd(), logs, "--out", imp); err != nil {
				t.Fatal(err)
			}
			items, err := os.ReadFile("imp-" + tool + "_items.csv")
			if err != nil || !bytes.Contains(items, []byte("arith/7,What is 7 + 15?,arith\n")) {
				t.Errorf("items file: %v\n%.300s", err, items)
			}
			// and the file it writes fits as the logs do, with no --graded:
			// its column says the scores are graded.
			if _, err := runCmd(t, newIRTCmd(), "fit", "--data", imp, "--out", "fit-imp-"+tool); err != nil {
				t.Fatal(err)
			}
			for f, w := range want {
				b, err := os.ReadFile(filepath.Join("fit-imp-"+tool, f))
				if err != nil {
					t.Fatal(err)
				}
				if b = settings.ReplaceAll(b, nil); !bytes.Equal(b, w) {
					t.Errorf("%s of the imported file differs from the long CSV's", f)
				}
			}
		})
	}
}
