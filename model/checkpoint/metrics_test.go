package checkpoint

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
)

// metrics.json written and read back is the same; an undefined AUC travels as
// null and comes back NaN; the keys of a score stay in the order jeirt has
// always written them.
func TestRunMetricsRoundTrip(t *testing.T) {
	nan := model.Float(math.NaN())
	m := &RunMetrics{
		Test:             model.Scores{Accuracy: 0.75, AUC: nan, Brier: 0.2, ECE: 0.01, LogLoss: 0.5, N: 40},
		Val:              model.Scores{Accuracy: 0.5, AUC: 0.625, Brier: 0.25, ECE: 0, LogLoss: 0.69, N: 4},
		Baselines:        map[string]model.Scores{"majority": {Accuracy: 0.5, AUC: 0.5, N: 40}},
		BaselineNotes:    map[string]BaselineNote{"irt_2pl": {NA: "unseen questions", NewQuestionCells: 40}, "knn": {NewModelCells: 3}},
		BaselineSettings: map[string]string{"mf": "free question vectors, d = 8, weight decay 0.01"},
		KNNK:             5, BestEpoch: 2, EpochsRun: 3, SecondsPerEpoch: 0.25,
		Geometry: Geometry{NormErrorSpearman: 0.8, Items: 10},
		Device:   "cpu", Batching: "by-question", SplitBy: "cell", Cells: map[string]int{"train": 32, "val": 4, "test": 4},
		Interrupted: true,
		History:     []Epoch{{Epoch: 1, TrainLoss: 0.7, ValLoss: 0.69, Best: true}},
	}
	b, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "\"irt_2pl\": {\n      \"na\": \"unseen questions\",\n      \"new_question_cells\": 40\n    }") || !strings.Contains(string(b), "\"knn\": {\n      \"new_model_cells\": 3\n    }") {
		t.Errorf("baseline notes as written:\n%s", b)
	}
	if !strings.Contains(string(b), `"auc": null`) || !strings.Contains(string(b), "\"accuracy\": 0.75,\n    \"auc\": null,\n    \"brier\": 0.2,\n    \"ece\": 0.01,\n    \"log_loss\": 0.5,\n    \"n\": 40") {
		t.Errorf("test scores as written:\n%s", b)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, MetricsFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadRunMetrics(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(float64(got.Test.AUC)) {
		t.Errorf("AUC read back as %v, want NaN", got.Test.AUC)
	}
	again, _ := got.Marshal()
	if string(again) != string(b) {
		t.Errorf("written again:\n%s\nfirst:\n%s", again, b)
	}
	got.Test.AUC, m.Test.AUC = 0, 0
	if !reflect.DeepEqual(got, m) {
		t.Errorf("read back %+v\nwant %+v", got, m)
	}
	if _, err := ReadRunMetrics(t.TempDir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("no metrics.json: %v", err)
	}
	os.WriteFile(filepath.Join(dir, MetricsFile), []byte(`{"test": {"auc": "x"}}`), 0o644)
	if _, err := ReadRunMetrics(dir); err == nil || !strings.HasPrefix(err.Error(), filepath.Join(dir, MetricsFile)+": ") {
		t.Errorf("bad file: %v", err)
	}
}
