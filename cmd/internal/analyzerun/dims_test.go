package analyzerun

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/train/eval"
	"github.com/jeirt/jeirt/train/sweep"
)

func TestDims(t *testing.T) {
	m := func(acc, ll float64) eval.Metrics { return eval.Metrics{Accuracy: acc, LogLoss: ll} }
	tab := &sweep.Table{Dir: "s", Keys: []string{"model.dim", "train.lr"}, Rows: []sweep.Row{
		{ID: "r1", Status: "ok", Settings: []sweep.Setting{{Key: "model.dim", Value: "16"}, {Key: "train.lr", Value: "1e-3"}}, Val: m(0.7, 0.6), Test: m(0.70, 0.58)},
		{ID: "r2", Status: "ok", Settings: []sweep.Setting{{Key: "model.dim", Value: "16"}, {Key: "train.lr", Value: "3e-3"}}, Val: m(0.7, 0.5), Test: m(0.72, 0.52)},
		{ID: "r3", Status: "ok", Settings: []sweep.Setting{{Key: "model.dim", Value: "4"}, {Key: "train.lr", Value: "1e-3"}}, Val: m(0.6, 0.7), Test: m(0.6, 0.66)},
		{ID: "r4", Status: "missing", Settings: []sweep.Setting{{Key: "model.dim", Value: "64"}}},
	}}
	rows, err := Dims(tab, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Dim != 4 || rows[1].Dim != 16 || rows[1].Runs != 2 || rows[1].BestRun != "r2" ||
		rows[1].BestAccuracy != 0.72 || math.Abs(rows[1].MeanAccuracy-0.71) > 1e-12 || math.Abs(rows[1].MeanLogLoss-0.55) > 1e-12 {
		t.Errorf("rows %+v", rows)
	}
	var buf bytes.Buffer
	if err := WriteDimsFigure(&buf, rows); err != nil || !strings.Contains(buf.String(), "<svg") {
		t.Errorf("dims.svg: %v", err)
	}
	buf.Reset()
	if err := WriteDimsFigurePNG(&buf, rows); err != nil || !bytes.HasPrefix(buf.Bytes(), []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("dims.png: %v", err)
	}
	tab.Keys = []string{"train.lr"}
	if _, err := Dims(tab, ""); err == nil || !strings.Contains(err.Error(), "does not vary model.dim") {
		t.Errorf("no dim in the grid: %v", err)
	}
}
