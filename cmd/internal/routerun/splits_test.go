package routerun

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/jeirt/jeirt/model/progress"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/route"
)

func splitsData(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	r, _, err := synth.Generate(synth.Options{Kind: "jeirt", Models: 10, Items: 100, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	data, items := filepath.Join(dir, "responses.csv"), filepath.Join(dir, "items.csv")
	if err := read.WriteLongCSV(data, r); err != nil {
		t.Fatal(err)
	}
	if err := read.WriteItemsCSV(items, r); err != nil {
		t.Fatal(err)
	}
	return data, items
}

var tinyTraining = []string{"encoder.spec=hash:32", "model.dim=4", "train.epochs=2", "train.batch_size=256", "route.folds=2"}

// route eval --splits: each split trains a checkpoint with its routing
// cross-validation and scores it on its 20 test questions; the curve is the
// mean over the splits, with the recorded default as router,default,<rule>
// and the interval columns, and the table says both.
func TestRouteEvalSplits(t *testing.T) {
	data, items := splitsData(t)
	out := filepath.Join(t.TempDir(), "curve.csv")
	var w, log bytes.Buffer
	e := EvalRun{Data: data, Read: read.Options{Items: items}, Splits: 2, Seed: 1, SplitVal: 0.1, SplitTest: 0.2,
		Set: tinyTraining, Out: out, Shortlists: []int{2}, Margins: []float64{0.1}, Log: progress.LogTo(&log)}
	if err := e.Run(context.Background(), &w); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	pts, err := route.ReadRouteCSV(out)
	if err != nil {
		t.Fatal(err)
	}
	var def, best *route.RoutePoint
	for k := range pts {
		switch {
		case pts[k].Policy == "best-single":
			best = &pts[k]
		case pts[k].Rule == "default":
			def = &pts[k]
		}
	}
	if def == nil || best == nil || def.Spec == "" || def.Items != 40 || best.Items != 40 || math.IsNaN(def.AccuracySE) || def.Wins+def.Losses > 2 {
		t.Fatalf("curve %+v\n%s", pts, log.String())
	}
	// The columns are today's, then the intervals; best-single's own
	// difference is exactly zero, and the default row's param is its rule.
	raw, _ := os.ReadFile(out)
	lines := strings.Split(string(raw), "\n")
	if lines[0] != "policy,rule,param,accuracy,total_cost,mean_cost,items,fallbacks,accuracy_se,vs_best_single,vs_best_single_se,wins,losses" {
		t.Errorf("header %q", lines[0])
	}
	if best.VsBest != 0 || best.Wins != 0 || best.Losses != 0 || !(best.AccuracySE > 0) {
		t.Errorf("best-single row %+v", *best)
	}
	if !strings.Contains(string(raw), "\nrouter,default,"+def.Spec+",") {
		t.Errorf("no row router,default,%s:\n%s", def.Spec, raw)
	}
	if _, err := route.ParseRule(strings.Split(def.Spec, "*")[0]); err != nil {
		t.Errorf("default spec %q: %v", def.Spec, err)
	}
	for _, want := range []string{"split 1/2 (seed 1)", "split 2/2 (seed 2)"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}
	for _, want := range []string{"mean over 2 item splits", "router             default", "out-of-domain check on the held-out in-domain questions: flagged", "wrote " + out} {
		if !strings.Contains(w.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, w.String())
		}
	}
}

// Ctrl-C during a split keeps the splits completed: the curve holds them
// and the run says so.
func TestRouteEvalSplitsInterrupted(t *testing.T) {
	data, items := splitsData(t)
	out := filepath.Join(t.TempDir(), "curve.csv")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var lines []string
	logf := progress.Logf(func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		line := strings.TrimSpace(strings.ReplaceAll(format, "%", ""))
		lines = append(lines, line)
		if strings.HasPrefix(format, "route eval: split ") {
			cancel() // after the first split
		}
	})
	var w bytes.Buffer
	e := EvalRun{Data: data, Read: read.Options{Items: items}, Splits: 3, Seed: 1, SplitVal: 0.1, SplitTest: 0.2,
		Set: tinyTraining, Out: out, Log: logf}
	if err := e.Run(ctx, &w); err != nil {
		t.Fatal(err)
	}
	pts, err := route.ReadRouteCSV(out)
	if err != nil {
		t.Fatal(err)
	}
	if pts[0].Policy != "best-single" || pts[0].Items != 20 {
		t.Errorf("curve after one split: %+v", pts[0])
	}
	if !strings.Contains(strings.Join(lines, "\n"), "route eval: interrupted during split") || !strings.Contains(w.String(), "one split") {
		t.Errorf("log %v\ntable %s", lines, w.String())
	}
	if _, err := os.Stat(out); err != nil {
		t.Error(err)
	}
}
