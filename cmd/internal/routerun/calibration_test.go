package routerun

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/train/pipeline"
	"github.com/jeirt/jeirt/train/route"
)

// jeirt route applies the calibrated P a checkpoint records: every
// candidate's P is σ(a·z + b·logit(training accuracy) + c) with the
// manifest's weights and accuracies, and the rule compares those. The same
// checkpoint without the calibration (as one trained before it existed)
// routes by the map's own P, bit for bit.
func TestRouteAppliesRecordedCalibration(t *testing.T) {
	data, items := splitsData(t)
	cfg := pipeline.DefaultConfig()
	cfg.Data = pipeline.DataConfig{Responses: data, Items: items, Format: "auto"}
	cfg.Split.By, cfg.Output = "item", filepath.Join(t.TempDir(), "ckpt")
	if err := cfg.SetAll(append(tinyTraining, "route.calibrate=true")); err != nil {
		t.Fatal(err)
	}
	if _, err := pipeline.Run(context.Background(), cfg, pipeline.Options{NoBaselines: true}); err != nil {
		t.Fatal(err)
	}
	ck, err := checkpoint.Open(cfg.Output, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := ck.Manifest.Routing
	w := rec.Calibration
	if w == nil {
		t.Fatalf("no calibration recorded: %+v", rec)
	}
	m := ck.Model
	rt, _, err := NewRouter(ck, RouterOptions{Rule: "max-p"})
	if err != nil {
		t.Fatal(err)
	}
	departs := 0
	for j := 0; j < m.NumItems(); j++ {
		q := m.ItemEmbedding(j)
		ch := rt.Route(q)
		for _, mp := range ch.Ranked {
			want := model.Sigmoid(w.JEIRT*m.Logit(mp.Model, q) + w.Accuracy*route.AccuracyLogit(rec.TrainAccuracy[m.Models[mp.Model]]) + w.Intercept)
			if mp.P != want {
				t.Fatalf("item %d, model %s: P %v, want the calibrated %v", j, m.Models[mp.Model], mp.P, want)
			}
		}
		old := ch.Model
		rec.Calibration = nil
		plain, _, err := NewRouter(ck, RouterOptions{Rule: "max-p"})
		rec.Calibration = w
		if err != nil {
			t.Fatal(err)
		}
		pc := plain.Route(q)
		for _, mp := range pc.Ranked {
			if mp.P != m.Prob(mp.Model, q) {
				t.Fatalf("uncalibrated P %v, the map's %v", mp.P, m.Prob(mp.Model, q))
			}
		}
		if pc.Model != old {
			departs++
		}
	}
	t.Logf("weights %+v; the calibration changed max-p's choice on %d of %d questions", *w, departs, m.NumItems())
}
