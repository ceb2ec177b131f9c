package harness

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"

	"github.com/jeirt/jeirt/model"
)

// fixtures is the folder of real logs of the four tools (../shared, see
// its PROVENANCE.md); tests that need it skip when it is absent.
const fixtures = "../../../../shared/fixtures/harness-logs"

func needFixtures(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(fixtures); err != nil {
		t.Skip("../shared/fixtures/harness-logs is absent")
	}
}

// pyReading is the fixtures as testdata/fixtures.py reads them.
type pyReading struct {
	Cells [][3]any          `json:"cells"`
	Text  map[string]string `json:"text"`
	Group map[string]string `json:"group"`
}

func readByPython(t *testing.T, root string) pyReading {
	t.Helper()
	py, err := exec.LookPath("/usr/bin/python3")
	if err != nil {
		t.Skip("no /usr/bin/python3 for the second reading")
	}
	out, err := exec.Command(py, "testdata/fixtures.py", root).Output()
	if err != nil {
		t.Fatalf("fixtures.py: %v", err)
	}
	var p pyReading
	if err := json.Unmarshal(out, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

type cellKey struct{ model, item string }

func cellsOf(r *model.Responses) map[cellKey]float64 {
	out := map[cellKey]float64{}
	for c := range r.Label {
		out[cellKey{r.Models[r.Model[c]], r.Items[r.Item[c]]}] = r.SuccessesAt(c) / float64(r.TrialsAt(c))
	}
	return out
}

// Every fixture reads, and its cells, models, labels, texts and categories
// are those a second reader (testdata/fixtures.py, plain json) finds in it;
// each tool's part of the tree is checked on its own and the whole tree at
// once.
func TestFixturesAgreeWithPython(t *testing.T) {
	needFixtures(t)
	for _, sub := range []string{"lm_eval", "helm", "inspect", "eee", "."} {
		t.Run(sub, func(t *testing.T) {
			root := filepath.Join(fixtures, sub)
			r, sum, _, err := Read(root, Options{})
			if err != nil {
				t.Fatal(err)
			}
			py := readByPython(t, root)
			got := cellsOf(r)
			if len(got) != len(py.Cells) || r.Len() != len(py.Cells) {
				t.Fatalf("%d cells (%d distinct), python reads %d", r.Len(), len(got), len(py.Cells))
			}
			models := map[string]bool{}
			for _, c := range py.Cells {
				k := cellKey{c[0].(string), c[1].(string)}
				models[k.model] = true
				x, ok := got[k]
				if !ok {
					t.Fatalf("cell %v missing", k)
				}
				if want := c[2].(float64); x != want {
					t.Errorf("cell %v: %v, python %v", k, x, want)
				}
			}
			if len(models) != len(r.Models) {
				t.Errorf("models %v, python has %d", r.Models, len(models))
			}
			if len(py.Text) != len(r.Items) {
				t.Errorf("%d items, python %d", len(r.Items), len(py.Text))
			}
			for j, id := range r.Items {
				if r.ItemText[j] != py.Text[id] {
					t.Errorf("item %s: text %.60q, python %.60q", id, r.ItemText[j], py.Text[id])
				}
				if r.ItemText[j] == "" {
					t.Errorf("item %s has no text", id)
				}
				if r.ItemGroup[j] != py.Group[id] {
					t.Errorf("item %s: category %q, python %q", id, r.ItemGroup[j], py.Group[id])
				}
			}
			if sum.Cells != r.Len() || sum.Samples != len(py.Cells) {
				t.Errorf("summary counts %d cells, %d samples", sum.Cells, sum.Samples)
			}
		})
	}
}

// Counts written by hand from the fixture files (see PROVENANCE.md): what
// was read, and what was skipped for what reason.
func TestFixturesByHand(t *testing.T) {
	needFixtures(t)
	r, sum, _, err := Read(fixtures, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// lm-eval 10 samples of math_perturbed_full; HELM 10 + 10 + 5 instances;
	// inspect arc_easy 3 (qwen) + 5 (sonnet), cyse2 1, intercode 1, pubmedqa
	// 2; Every Eval Ever 1. cvebench's one sample errored unscored and
	// data_with_llm_scoring.json holds no samples.
	if r.Len() != 48 || len(r.Items) != 45 || len(r.Models) != 9 {
		t.Fatalf("%d cells, %d items, %d models; want 48, 45, 9", r.Len(), len(r.Items), len(r.Models))
	}
	if sum.Tasks() != 9 {
		t.Errorf("%d tasks, want 9", sum.Tasks())
	}
	wantSkip := map[string]string{
		"data_cvebench_empty_choices.json":        "an inspect log whose 1 samples errored, unscored",
		"data_with_llm_scoring.json":              "an inspect log without samples (a header-only log: run inspect with samples logged)",
		"results_2026-01-21T03-44-18.458309.json": "task math_rephrased_full: no samples_math_rephrased_full_2026-01-21T03-44-18.458309.jsonl beside it (run lm-eval with --log_samples)",
		"LICENSE-every_eval_ever":                 "not a log of a known tool",
		"PROVENANCE.md":                           "not a log of a known tool",
	}
	if len(sum.Skipped) != len(wantSkip) {
		t.Errorf("skipped %v", sum.Skipped)
	}
	for _, s := range sum.Skipped {
		if w := wantSkip[filepath.Base(s.Path)]; w != s.Why {
			t.Errorf("skipped %s: %q, want %q", s.Path, s.Why, w)
		}
	}
	// The inspect arc_easy scores by hand: qwen I, I, C... as the file says
	// (samples 1, 2, 3: C, I, I in id order; sonnet: C for all 5).
	got := cellsOf(r)
	for k, want := range map[cellKey]float64{
		{"ollama/qwen2.5:0.5b", "inspect_evals/arc_easy/1"}:                             1,
		{"anthropic/claude-sonnet-4-0", "inspect_evals/arc_easy/5"}:                     1,
		{"mistral/mistral-large-latest", "inspect_evals/cyse2_vulnerability_exploit/1"}: 0.65,
		{"demo-org/demo-model", "demo-source.demo_bench/demo_0001"}:                     1,
	} {
		if got[k] != want {
			t.Errorf("%v = %v, want %v", k, got[k], want)
		}
	}
	var names []string
	for _, l := range sum.Logs {
		names = append(names, l.Tool+" "+l.Metric)
	}
	sort.Strings(names)
	want := []string{"eee is_correct", "helm exact_match", "helm exact_match", "helm exact_match", "inspect choice", "inspect choice", "inspect choice", "inspect includes", "inspect vul_exploit_scorer", "lm-eval exact_match"}
	if len(names) != len(want) {
		t.Fatalf("logs %v", names)
	}
	for k := range want {
		if names[k] != want[k] {
			t.Errorf("logs %v, want %v", names, want)
			break
		}
	}
}
