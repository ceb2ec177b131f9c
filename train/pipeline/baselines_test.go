package pipeline

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/progress"
	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/backend"
	"github.com/jeirt/jeirt/train/eval"
	"github.com/jeirt/jeirt/train/irt"
	"github.com/jeirt/jeirt/train/irtguard"
)

// baselineData is a small simulated JE-IRT benchmark with its item features.
func baselineData(t *testing.T) (*model.Responses, []float32, int) {
	t.Helper()
	r, truth, err := synth.Generate(synth.Options{Kind: "jeirt", Models: 30, Items: 80, Seed: 3, FeatureDim: 16})
	if err != nil {
		t.Fatal(err)
	}
	var feat []float32
	for _, f := range truth.Features {
		feat = append(feat, f...)
	}
	return r, feat, 16
}

// On a split by item every test question is new: the baselines that learn a
// parameter per question print n/a, never the model mean's number; on a
// split by model the same holds for the ones that learn a parameter per model.
func TestBaselinesUnseen(t *testing.T) {
	r, feat, dim := baselineData(t)
	for _, tc := range []struct {
		by      string
		na      []string // n/a rows
		scored  []string // rows with numbers
		because string
	}{
		{"item", []string{"item_mean", "irt_2pl"}, []string{"majority", "model_mean", "knn"}, "unseen questions"},
		{"model", []string{"model_mean", "knn", "irt_2pl"}, []string{"majority", "item_mean"}, "unseen models"},
	} {
		trainR, valR, testR, err := eval.Split(r, eval.SplitOptions{Val: 0.1, Test: 0.2, Seed: 1, By: tc.by})
		if err != nil {
			t.Fatal(err)
		}
		b, err := RunBaselines(context.Background(), trainR, valR, testR, feat, dim, backend.CPU, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		met := &checkpoint.RunMetrics{Test: model.Scores{N: testR.Len()}, SplitBy: tc.by, Baselines: b.Scores, BaselineNotes: b.Notes, KNNK: b.KNNK}
		var out strings.Builder
		PrintScoreTable(&out, met)
		for _, n := range tc.na {
			if _, ok := b.Scores[n]; ok || b.Notes[n].NA != tc.because {
				t.Errorf("by %s: %s scored %v, note %+v; want n/a (%s)", tc.by, n, ok, b.Notes[n], tc.because)
			}
			if want := n + strings.Repeat(" ", 12-len(n)) + " n/a (" + tc.because + ")\n"; !strings.Contains(out.String(), want) {
				t.Errorf("by %s: the table lacks %q:\n%s", tc.by, want, out.String())
			}
		}
		for _, n := range tc.scored {
			if s, ok := b.Scores[n]; !ok || s.N != testR.Len() {
				t.Errorf("by %s: %s not scored on the %d test cells: %+v", tc.by, n, testR.Len(), s)
			}
		}
	}
}

// On a split by cell of sparse data a few test cells are of questions
// without training cells: the baselines that need the question name the
// fallback and count exactly those cells.
func TestBaselinesFallbackCounted(t *testing.T) {
	r, feat, dim := baselineData(t)
	trainR, valR, testR, err := eval.Split(r, eval.SplitOptions{Val: 0.1, Test: 0.2, Seed: 1, By: "cell"})
	if err != nil {
		t.Fatal(err)
	}
	// Drop the training cells of items 0..4: their test cells are new questions.
	var keep []int32
	for c := range trainR.Label {
		if trainR.Item[c] >= 5 {
			keep = append(keep, int32(c))
		}
	}
	trainR = trainR.Subset(keep)
	want := 0
	for c := range testR.Label {
		if testR.Item[c] < 5 {
			want++
		}
	}
	if want == 0 {
		t.Fatal("no test cell of items 0..4")
	}
	b, err := RunBaselines(context.Background(), trainR, valR, testR, feat, dim, backend.CPU, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"item_mean", "irt_2pl"} {
		if note := b.Notes[n]; note.NA != "" || note.NewQuestionCells != want || note.NewModelCells != 0 {
			t.Errorf("%s: note %+v, want %d new-question cells", n, note, want)
		}
		if _, ok := b.Scores[n]; !ok {
			t.Errorf("%s not scored", n)
		}
	}
	if _, ok := b.Notes["model_mean"]; ok {
		t.Errorf("model_mean has a note: %+v", b.Notes["model_mean"])
	}
	met := &checkpoint.RunMetrics{Test: model.Scores{N: testR.Len()}, SplitBy: "cell", Baselines: b.Scores, BaselineNotes: b.Notes, KNNK: b.KNNK}
	var out strings.Builder
	PrintScoreTable(&out, met)
	line := "fallback: irt_2pl: " + strconv.Itoa(want) + " of the " + strconv.Itoa(testR.Len()) + " test cells are of questions without training cells, predicted by their model's training accuracy (model_mean)"
	if !strings.Contains(out.String(), line) {
		t.Errorf("the table lacks %q:\n%s", line, out.String())
	}
}

// On rank-3 data the learned baselines find what the means cannot: irt_mirt
// climbs past rank 1 and, like mf, scores a log loss below item_mean's and
// model_mean's; a second run gives the same scores (the baselines are
// seeded and deterministic).
func TestBaselinesLowRank(t *testing.T) {
	r, _, err := synth.Generate(synth.Options{Kind: "mirt", Rank: 3, Models: 150, Items: 60, Seed: 8})
	if err != nil {
		t.Fatal(err)
	}
	trainR, valR, testR, err := eval.Split(r, eval.SplitOptions{Val: 0.15, Test: 0.2, Seed: 2, By: "cell"})
	if err != nil {
		t.Fatal(err)
	}
	feat := make([]float32, r.NumItems()*4) // the free form ignores the text
	var log strings.Builder
	b, err := RunBaselines(context.Background(), trainR, valR, testR, feat, 4, backend.CPU, 0, progress.LogTo(&log))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", log.String())
	means := min(b.Scores["item_mean"].LogLoss, b.Scores["model_mean"].LogLoss)
	for _, n := range []string{"mf", "irt_mirt"} {
		if s, ok := b.Scores[n]; !ok || !(s.LogLoss < means-0.02) {
			t.Errorf("%s: log loss %v, not below the means' %.4f", n, s.LogLoss, means)
		}
	}
	if s := b.Settings["irt_mirt"]; s == "rank 1" || !strings.HasPrefix(s, "rank ") {
		t.Errorf("irt_mirt chose %q on rank-3 data", s)
	}
	if !strings.HasPrefix(b.Settings["mf"], "free question vectors, d = ") {
		t.Errorf("mf settings %q", b.Settings["mf"])
	}
	// MF's determinism is eval's TestMFLowRank; irt_mirt's:
	g, err := irtguard.Guard{CBMM: irt.CBMM{Device: backend.CPU, Prior: model.DefaultPrior}}.Fit(context.Background(), trainR)
	if err != nil {
		t.Fatal(err)
	}
	again := &Baselines{Scores: map[string]model.Scores{}, Notes: map[string]checkpoint.BaselineNote{}, Settings: map[string]string{}}
	if err := again.runMIRT(context.Background(), trainR, valR, testR, backend.CPU, g.Fit, nil); err != nil {
		t.Fatal(err)
	}
	if again.Scores["irt_mirt"] != b.Scores["irt_mirt"] || again.Settings["irt_mirt"] != b.Settings["irt_mirt"] {
		t.Errorf("irt_mirt differs between two runs: %+v %q, %+v %q", b.Scores["irt_mirt"], b.Settings["irt_mirt"], again.Scores["irt_mirt"], again.Settings["irt_mirt"])
	}
}
