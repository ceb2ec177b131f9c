package analyzerun

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
)

func TestCollectLOBO(t *testing.T) {
	dir := t.TempDir()
	var dirs []string
	// Accuracy rises with the cosine: correlations 1.
	for k, c := range []float64{0.2, 0.5, 0.9} {
		m := &checkpoint.RunMetrics{SplitBy: "benchmark", HeldOutBenchmarks: []string{string(rune('a' + k))},
			Test:      model.Scores{Accuracy: model.Float(0.5 + c/4), N: 10},
			Baselines: map[string]model.Scores{"model_mean": {Accuracy: 0.6}},
			Alignment: &checkpoint.Alignment{Cosine: c, Nearest: "x"}}
		raw, _ := m.Marshal()
		d := filepath.Join(dir, string(rune('a'+k)))
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, checkpoint.MetricsFile), raw, 0o644)
		dirs = append(dirs, d)
	}
	l, err := CollectLOBO(dirs)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Rows) != 3 || math.Abs(l.PearsonAcc-1) > 1e-12 || l.SpearmanAcc != 1 || math.Abs(l.PearsonGain-1) > 1e-12 {
		t.Errorf("%+v", l)
	}
	var buf bytes.Buffer
	if err := l.Write(&buf); err != nil || !strings.HasPrefix(buf.String(), "held_out,cells,jeirt,majority,model_mean,knn,irt_2pl,cosine,nearest,run\na,10,0.55,,0.6,,,0.2,x,") {
		t.Errorf("lobo.csv (%v):\n%s", err, buf.String())
	}
	m := &checkpoint.RunMetrics{SplitBy: "cell"}
	raw, _ := m.Marshal()
	os.WriteFile(filepath.Join(dirs[0], checkpoint.MetricsFile), raw, 0o644)
	if _, err := CollectLOBO(dirs); err == nil || !strings.Contains(err.Error(), "not a leave-benchmark-out run") {
		t.Errorf("cell run: %v", err)
	}
}
