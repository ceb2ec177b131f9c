package harness

import (
	"bytes"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/jeirt/jeirt/model/read/harness/harnesstest"
)

// shipped is the small tree of logs configs/data holds for the docs'
// examples: 12 models on two tasks (30 arithmetic and 20 vocabulary
// questions) answered by a 2PL, three models' logs written by each of the
// four tools, so that one folder holds all four schemas and their items
// join across tools. Regenerate it with JEIRT_UPDATE_EVAL_LOGS=1.
const shipped = "../../../configs/data/eval-logs"

var toolNames = map[string]string{LMEval: "lm-eval", HELM: "helm", Inspect: "inspect", EEE: "every-eval-ever"}

func writeShipped(dir string) error {
	rng := rand.New(rand.NewPCG(2026, 12))
	words := []string{"ubiquitous", "ephemeral", "laconic", "obdurate", "sanguine", "perfunctory", "garrulous", "quixotic", "recalcitrant", "pellucid",
		"mendacious", "sagacious", "truculent", "insouciant", "pusillanimous", "lugubrious", "magnanimous", "obsequious", "parsimonious", "vituperative"}
	theta := make([]float64, 12)
	for m := range theta {
		theta[m] = rng.NormFloat64()
	}
	sets := []harnesstest.Set{{Task: "arithmetic"}, {Task: "vocabulary"}}
	for j := range 30 {
		a, b := 3+j*j, 7+5*j
		sets[0].Items = append(sets[0].Items, harnesstest.Item{ID: fmt.Sprint(j), Text: fmt.Sprintf("What is %d + %d?", a, b)})
	}
	for j, w := range words {
		sets[1].Items = append(sets[1].Items, harnesstest.Item{ID: fmt.Sprint(j), Text: fmt.Sprintf("Which word means the same as %q?", w)})
	}
	for s := range sets {
		for m := range theta {
			sets[s].Models = append(sets[s].Models, fmt.Sprintf("org-%c/model-%02d", 'a'+m%3, m))
			row := make([][]float64, len(sets[s].Items))
			for j := range row {
				b := 3*float64(j)/float64(len(row)) - 1.5
				p := 1 / (1 + math.Exp(-1.5*(theta[m]-b)))
				x := 0.0
				if rng.Float64() < p {
					x = 1
				}
				row[j] = []float64{x}
			}
			sets[s].Scores = append(sets[s].Scores, row)
		}
	}
	for k, tool := range Tools {
		for _, s := range sets {
			part := s
			part.Models, part.Scores = s.Models[3*k:3*k+3], s.Scores[3*k:3*k+3]
			if err := harnesstest.Write(filepath.Join(dir, toolNames[tool]), tool, part); err != nil {
				return err
			}
		}
	}
	return nil
}

// The shipped tree is what writeShipped writes, byte for byte, and reads
// as 12 models on 50 items.
func TestShippedTree(t *testing.T) {
	if os.Getenv("JEIRT_UPDATE_EVAL_LOGS") != "" {
		os.RemoveAll(shipped)
		if err := writeShipped(shipped); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	if err := writeShipped(dir); err != nil {
		t.Fatal(err)
	}
	n := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		want, _ := os.ReadFile(p)
		got, err := os.ReadFile(filepath.Join(shipped, rel))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s differs from what writeShipped writes (JEIRT_UPDATE_EVAL_LOGS=1 rewrites it): %v", rel, err)
		}
		n++
		return nil
	})
	r, sum, _, err := Read(shipped, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Models) != 12 || len(r.Items) != 50 || r.Len() != 600 || sum.Tasks() != 8 || n == 0 {
		t.Errorf("%d models, %d items, %d cells, %d tool-tasks, %d files", len(r.Models), len(r.Items), r.Len(), sum.Tasks(), n)
	}
}
