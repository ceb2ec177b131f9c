package route

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
)

// simulatedCells are n out-of-fold predictions whose outcomes follow
// σ(a·z + b·s + c): z the map's logit, spread as a noisy map's is, s a
// model's accuracy logit.
func simulatedCells(n int, a, b, c float64, seed uint64) *CalibrationCells {
	rng := rand.New(rand.NewPCG(seed, 1))
	cells := &CalibrationCells{}
	for k := 0; k < n; k++ {
		z := 2 * rng.NormFloat64()
		s := AccuracyLogit(0.2 + 0.7*rng.Float64())
		y := 0.0
		if rng.Float64() < model.Sigmoid(a*z+b*s+c) {
			y = 1
		}
		cells.add(z, s, y)
	}
	return cells
}

// The calibration recovers the weights that generated the outcomes, within
// their sampling error (about 0.02 at 40,000 cells), its log loss beats
// the map's own P, which is overconfident here (a = 0.4), and it is the
// maximum of the penalised likelihood: the gradient vanishes there.
func TestFitCalibrationRecoversWeights(t *testing.T) {
	cells := simulatedCells(40000, 0.4, 0.9, -0.3, 1)
	w, err := FitCalibration(cells)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(w.JEIRT-0.4) > 0.04 || math.Abs(w.Accuracy-0.9) > 0.06 || math.Abs(w.Intercept+0.3) > 0.06 || w.Cells != 40000 {
		t.Errorf("fitted %+v, want 0.4, 0.9, -0.3", w)
	}
	truth := checkpoint.Calibration{JEIRT: 0.4, Accuracy: 0.9, Intercept: -0.3}
	fitted, best, raw := cells.LogLoss(w), cells.LogLoss(truth), cells.LogLoss(checkpoint.Identity)
	if !(fitted <= best+1e-12) || !(fitted < raw-0.05) {
		t.Errorf("log loss fitted %.5f, true weights %.5f, the map's P %.5f", fitted, best, raw)
	}
	var g [3]float64
	for k, z := range cells.Z {
		r := model.Sigmoid(w.Logit(z, cells.S[k])) - cells.Y[k]
		g[0], g[1], g[2] = g[0]+r*z, g[1]+r*cells.S[k], g[2]+r
	}
	ws := []float64{w.JEIRT, w.Accuracy, w.Intercept}
	for a := range g { // the mean gradient plus the ridge's, 1e-6·w
		if math.Abs(g[a]/40000+1e-6*ws[a]) > 1e-9 {
			t.Errorf("gradient %v at the fit", g)
		}
	}
	if _, err := FitCalibration(simulatedCells(9, 1, 0, 0, 2)); err == nil {
		t.Error("9 cells calibrated")
	}
}

// Graded scores (fractions in [0, 1]) are fitted as expected labels: a
// cell scored as the mean of two trials gives the weights of its trials.
func TestFitCalibrationGraded(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cells := &CalibrationCells{}
	for k := 0; k < 20000; k++ {
		z, s := 2*rng.NormFloat64(), AccuracyLogit(0.2+0.7*rng.Float64())
		p, y := model.Sigmoid(0.7*z+0.5*s+0.2), 0.0
		for range 2 {
			if rng.Float64() < p {
				y += 0.5
			}
		}
		cells.add(z, s, y)
	}
	w, err := FitCalibration(cells)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(w.JEIRT-0.7) > 0.05 || math.Abs(w.Accuracy-0.5) > 0.08 || math.Abs(w.Intercept-0.2) > 0.08 {
		t.Errorf("graded fit %+v, want 0.7, 0.5, 0.2", w)
	}
}

func TestAccuracyLogit(t *testing.T) {
	for _, c := range []struct{ acc, want float64 }{{0.5, 0}, {0.75, math.Log(3)}, {0, math.Log(1e-3 / (1 - 1e-3))}, {1, math.Log((1 - 1e-3) / 1e-3)}} {
		if got := AccuracyLogit(c.acc); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("AccuracyLogit(%v) = %v, want %v", c.acc, got, c.want)
		}
	}
}

// A router without a calibration gives the map's P bit for bit, and the
// identity calibration (a = 1, b = c = 0) the same; one that trusts only
// the accuracies (a = 0) sends every question to the most accurate model.
func TestRouterCalibration(t *testing.T) {
	_, m := topicSet()
	plain := Router{Model: m}
	id := Router{Model: m, Calibration: NewCalibration(checkpoint.Identity, []float64{0.6, 0.4, 0, 0}, nil)}
	acc := Router{Model: m, Calibration: NewCalibration(checkpoint.Calibration{Accuracy: 1}, []float64{0.6, 0.4, 0.1, math.NaN()}, []float64{0, 0, 0, 0.3})}
	if err := acc.Check(); err != nil {
		t.Fatal(err)
	}
	for j := 0; j < m.NumItems(); j++ {
		q := m.ItemEmbedding(j)
		a, b := plain.Probs(q, nil), id.Probs(q, nil)
		for k := range a {
			if a[k].P != m.Prob(a[k].Model, q) || b[k].P != a[k].P {
				t.Fatalf("item %d model %d: P %v, identity-calibrated %v, map %v", j, k, a[k].P, b[k].P, m.Prob(a[k].Model, q))
			}
		}
		ch := acc.Route(q)
		if ch.Model != 0 || math.Abs(ch.P-0.6) > 1e-12 || math.Abs(ch.Ranked[1].P-0.4) > 1e-12 || math.Abs(ch.Ranked[2].P-0.3) > 1e-12 {
			t.Fatalf("item %d: accuracy-only calibration chose %+v", j, ch)
		}
	}
	bad := Router{Model: m, Calibration: &Calibration{Prior: []float64{0}}}
	if err := bad.Check(); err == nil {
		t.Error("a calibration with 1 prior for 4 models passed Check")
	}
}

// noisySet is 200 questions and 4 models whose outcomes do not depend on
// the question (the models' accuracies 0.8, 0.6, 0.4, 0.2), with a map
// that only adds noise: question rows random, so z varies at random.
func noisySet() (*model.Responses, *model.JEIRT) {
	rng := rand.New(rand.NewPCG(5, 6))
	acc := []float64{0.8, 0.6, 0.4, 0.2}
	r := &model.Responses{Models: []string{"a", "b", "c", "d"}}
	const d = 4
	m := &model.JEIRT{Dim: d, Models: r.Models}
	for range acc {
		for k := 0; k < d; k++ {
			m.M = append(m.M, float32(2*rng.NormFloat64()))
		}
	}
	for j := 0; j < 200; j++ {
		r.Items = append(r.Items, "q"+strconv.Itoa(j))
		for k := 0; k < d; k++ {
			m.Q = append(m.Q, float32(rng.NormFloat64()))
		}
		for i, p := range acc {
			y := uint8(0)
			if rng.Float64() < p {
				y = 1
			}
			r.Model, r.Item, r.Label = append(r.Model, int32(i)), append(r.Item, int32(j)), append(r.Label, y)
		}
	}
	m.Items = r.Items
	return r, m
}

// With Calibrate, the cross-validation learns that the map's z says
// nothing here (a near 0) and the accuracies everything (b near 1), and
// the rules scored with the cross-fitted P then follow the accuracies:
// calibrated max-p comes within a few questions of best-single, where the
// map's own max-p is near random.
func TestCrossValidationCalibrates(t *testing.T) {
	r, m := noisySet()
	refit := func(ctx context.Context, fold int, train *model.Responses) (*model.JEIRT, error) { return m, nil }
	raw, err := CrossValidation{Folds: 5, Seed: 3, Refit: refit}.Run(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	cal, err := CrossValidation{Folds: 5, Seed: 3, Refit: refit, Calibrate: true}.Run(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if raw.Calibration != nil {
		t.Errorf("uncalibrated run recorded %+v", raw.Calibration)
	}
	w := cal.Calibration
	t.Logf("calibration %+v; raw %s", w, raw.Why)
	if w == nil || w.Cells != 800 || math.Abs(w.JEIRT) > 0.1 || math.Abs(w.Accuracy-1) > 0.35 || !(w.LogLoss < w.RawLogLoss-0.1) {
		t.Fatalf("calibration %+v", w)
	}
	score := func(res *CVResult, rule string) RuleScore {
		for _, s := range res.Scores {
			if s.Rule.String() == rule {
				return s
			}
		}
		t.Fatalf("no %s", rule)
		return RuleScore{}
	}
	bs, rawMax, calMax := score(raw, "best-single"), score(raw, "max-p"), score(cal, "max-p")
	if score(cal, "best-single").Accuracy != bs.Accuracy {
		t.Errorf("best-single changed with the calibration: %v, %v", score(cal, "best-single").Accuracy, bs.Accuracy)
	}
	t.Logf("best-single %.3f, max-p %.3f, calibrated max-p %.3f (departs %.2f); chose %s", bs.Accuracy, rawMax.Accuracy, calMax.Accuracy, calMax.Departures, cal.Rule)
	if !(rawMax.Accuracy < bs.Accuracy-0.15) || !(calMax.Accuracy > bs.Accuracy-0.03) || calMax.Departures > 0.1 {
		t.Errorf("best-single %.3f, max-p %.3f, calibrated max-p %.3f (departs %.2f)", bs.Accuracy, rawMax.Accuracy, calMax.Accuracy, calMax.Departures)
	}
}

// Too few out-of-fold predictions to calibrate on (4 questions of one
// model, 2 per fold) leave the rules on the map's P, and the log says so.
func TestCrossValidationTooFewToCalibrate(t *testing.T) {
	r, m := noisySet()
	var keep []int32
	for c := range r.Label {
		if r.Model[c] == 0 && r.Item[c] < 4 {
			keep = append(keep, int32(c))
		}
	}
	small := r.Subset(keep)
	var log []string
	cv := CrossValidation{Folds: 2, Seed: 3, Calibrate: true, Log: func(f string, a ...any) { log = append(log, fmt.Sprintf(f, a...)) },
		Refit: func(ctx context.Context, fold int, train *model.Responses) (*model.JEIRT, error) { return m, nil }}
	res, err := cv.Run(context.Background(), small)
	if err != nil {
		t.Fatal(err)
	}
	if res.Calibration != nil || res.Completed != 2 || !strings.Contains(strings.Join(log, "\n"), "not calibrated: route: 2 out-of-fold predictions are too few") {
		t.Errorf("calibration %+v, %d folds; log %q", res.Calibration, res.Completed, log)
	}
}
