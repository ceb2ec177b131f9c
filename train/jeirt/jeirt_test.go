package jeirt

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/backend"
	"github.com/jeirt/jeirt/train/eval"
)

func synthJEIRT(t testing.TB, models, items, D, d int, seed int64) (*model.Responses, *synth.Truth, []float32) {
	t.Helper()
	r, truth, err := synth.Generate(synth.Options{Kind: "jeirt", Models: models, Items: items, FeatureDim: D, EmbedDim: d, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	feat := make([]float32, 0, items*D)
	for _, x := range truth.Features {
		feat = append(feat, x...)
	}
	return r, truth, feat
}

// On data drawn from the JE-IRT model itself, the learned question norms rank
// item difficulty and test accuracy comes within 2 points of the oracle's.
func TestJEIRTSynthRecovery(t *testing.T) {
	r, truth, feat := synthJEIRT(t, 100, 1000, 32, 8, 3)
	tr, va, te, err := eval.Split(r, eval.SplitOptions{Val: 0.1, Test: 0.1, Seed: 42})
	if err != nil {
		t.Fatal(err)
	}
	fit, err := Trainer{Dim: 8, Hidden: 64, Dropout: 0.1, Epochs: 200, BatchSize: 256, LR: 3e-3, WeightDecay: 0.01, Gamma: 0.99,
		Patience: 8, Seed: 1}.Fit(context.Background(), tr, va, feat, 32)
	if err != nil {
		t.Fatal(err)
	}
	var acc, oracle float64
	for c := range te.Label {
		i, j := int(te.Model[c]), int(te.Item[c])
		y := te.Label[c] == 1
		if (fit.Model.Prob(i, fit.Model.ItemEmbedding(j)) >= 0.5) == y {
			acc++
		}
		if (truth.OracleP(i, j) >= 0.5) == y {
			oracle++
		}
	}
	acc /= float64(te.Len())
	oracle /= float64(te.Len())
	// Difficulty: the true probability of a wrong answer, averaged over models.
	// (The norm itself is identified only up to a shift along the models'
	// common direction, so difficulty, not the true norm, is the target.)
	norms, difficulty := make([]float64, r.NumItems()), make([]float64, r.NumItems())
	for j := range norms {
		norms[j] = model.Norm(fit.Model.ItemEmbedding(j))
		for i := 0; i < r.NumModels(); i++ {
			difficulty[j] += 1 - truth.OracleP(i, j)
		}
	}
	rho := eval.Spearman(norms, difficulty)
	t.Logf("test accuracy %.4f, oracle %.4f, Spearman(‖q‖, difficulty) %.3f, best epoch %d of %d", acc, oracle, rho, fit.BestEpoch, fit.EpochsRun)
	if acc < oracle-0.02 {
		t.Errorf("test accuracy %.4f is more than 2 points below the oracle's %.4f", acc, oracle)
	}
	if rho < 0.8 {
		t.Errorf("Spearman between learned question norms and item difficulty %.3f, want > 0.8", rho)
	}
}

// stepDevice is the CPU device that runs each step.
var stepDevice = map[string]string{StepGraph: backend.CPU, StepFused: backend.CPUFused}

func smallFit(t *testing.T, step, batching string, residual float64) *Result {
	t.Helper()
	r, _, feat := synthJEIRT(t, 20, 60, 8, 4, 5)
	tr, va, _, err := eval.Split(r, eval.SplitOptions{Val: 0.1, Test: 0.1, Seed: 42})
	if err != nil {
		t.Fatal(err)
	}
	fit, err := Trainer{Dim: 4, Hidden: 12, Dropout: 0.3, Residual: residual, Epochs: 2, BatchSize: 64, LR: 1e-2, WeightDecay: 0.01,
		Seed: 9, Device: stepDevice[step], Batching: batching}.Fit(context.Background(), tr, va, feat, 8)
	if err != nil {
		t.Fatal(err)
	}
	return fit
}

// A fixed seed gives the same run twice, bit for bit.
func TestJEIRTDeterministic(t *testing.T) {
	for _, batching := range []string{"by-question", "per-pair"} {
		a, b := smallFit(t, StepFused, batching, 0.1), smallFit(t, StepFused, batching, 0.1)
		if !reflect.DeepEqual(a.Model, b.Model) {
			t.Errorf("%s: two runs with seed 9 differ", batching)
		}
		if a.History[1].ValLoss != b.History[1].ValLoss {
			t.Errorf("%s: val loss %v vs %v", batching, a.History[1].ValLoss, b.History[1].ValLoss)
		}
	}
}

// Training with the Gorgonia graph and with the fused CPU step ends at the same parameters.
func TestJEIRTGorgoniaBackendAgrees(t *testing.T) {
	for _, batching := range []string{"by-question", "per-pair"} {
		a, b := smallFit(t, StepFused, batching, 0.1), smallFit(t, StepGraph, batching, 0.1)
		if a.Device != "cpu" || b.Device != "cpu" {
			t.Fatalf("devices %s, %s", a.Device, b.Device)
		}
		var worst float64
		for k, v := range a.Model.Q {
			worst = math.Max(worst, math.Abs(float64(v-b.Model.Q[k])))
		}
		if worst > 1e-3 {
			t.Errorf("%s: question embeddings differ by up to %g after 2 epochs", batching, worst)
		}
		if math.Abs(a.History[1].ValLoss-b.History[1].ValLoss) > 1e-4 {
			t.Errorf("%s: val loss %v (fused) vs %v (graph)", batching, a.History[1].ValLoss, b.History[1].ValLoss)
		}
	}
}

func TestJEIRTCancelKeepsBest(t *testing.T) {
	r, _, feat := synthJEIRT(t, 20, 60, 8, 4, 5)
	tr, va, _, _ := eval.Split(r, eval.SplitOptions{Val: 0.1, Test: 0.1, Seed: 42})
	ctx, cancel := context.WithCancel(context.Background())
	fit, err := Trainer{Dim: 4, Hidden: 12, Epochs: 50, LR: 1e-2, Seed: 1, Dropout: -1, WeightDecay: -1, Patience: -1, Progress: func(e checkpoint.Epoch) {
		if e.Epoch == 3 {
			cancel()
		}
	}}.Fit(ctx, tr, va, feat, 8)
	if err != nil {
		t.Fatal(err)
	}
	if !fit.Interrupted || fit.EpochsRun != 3 || fit.Model == nil || fit.BestEpoch < 1 {
		t.Errorf("interrupted %v after %d epochs, best %d", fit.Interrupted, fit.EpochsRun, fit.BestEpoch)
	}
}

// The graph step (the default) and the fused step train to the same
// validation accuracy on simulated JE-IRT data, and the fit says which ran.
func TestJEIRTGraphTrainsLikeFused(t *testing.T) {
	r, _, feat := synthJEIRT(t, 60, 500, 32, 8, 5)
	tr, va, _, err := eval.Split(r, eval.SplitOptions{Val: 0.1, Test: 0.1, Seed: 42})
	if err != nil {
		t.Fatal(err)
	}
	acc := map[string]float64{}
	for _, device := range []string{"", backend.CPUFused} {
		fit, err := Trainer{Dim: 8, Hidden: 64, Dropout: 0.1, Epochs: 25, BatchSize: 256, LR: 3e-3, WeightDecay: 0.01,
			Gamma: 0.97, Seed: 1, Device: device}.Fit(context.Background(), tr, va, feat, 32)
		if err != nil {
			t.Fatal(err)
		}
		acc[fit.Step] = fit.History[fit.BestEpoch-1].ValAcc
	}
	if len(acc) != 2 || math.IsNaN(acc[StepGraph]) {
		t.Fatalf("steps run: %v, want graph (the default) and fused", acc)
	}
	if math.Abs(acc[StepGraph]-acc[StepFused]) > 0.01 || acc[StepGraph] < 0.6 {
		t.Errorf("validation accuracy: graph %.4f, fused %.4f", acc[StepGraph], acc[StepFused])
	}
}

// Fit says why it stopped and warns when the learning rate has decayed away
// while the validation loss still falls, and at an epoch limit reached while
// still improving.
func TestJEIRTStopAndWarnings(t *testing.T) {
	r, _, feat := synthJEIRT(t, 40, 300, 16, 4, 6)
	tr, va, _, err := eval.Split(r, eval.SplitOptions{Val: 0.1, Test: 0.1, Seed: 42})
	if err != nil {
		t.Fatal(err)
	}
	var warned []string
	fit, err := Trainer{Dim: 4, Hidden: 32, Epochs: 6, BatchSize: 128, LR: 3e-3, Gamma: 0.3, Seed: 1,
		Warn: func(w string) { warned = append(warned, w) }}.Fit(context.Background(), tr, va, feat, 16)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("stop: %s; warnings: %q", fit.Stop, fit.Warnings)
	if !strings.HasPrefix(fit.Stop, "epoch limit 6 reached, best epoch") {
		t.Errorf("stop reason %q", fit.Stop)
	}
	if len(warned) != len(fit.Warnings) || len(warned) != 2 ||
		!strings.Contains(warned[0], "below 1% of its start") || !strings.Contains(warned[1], "raise train.epochs") {
		t.Errorf("warnings %q, want the spent learning rate and the epoch limit", warned)
	}
	fit, err = Trainer{Dim: 4, Hidden: 32, Epochs: 200, BatchSize: 128, LR: 3e-2, Gamma: 1, Patience: 2, Seed: 1}.Fit(context.Background(), tr, va, feat, 16)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("early stop at epoch %d (no better validation loss for 2 epochs), best epoch %d", fit.EpochsRun, fit.BestEpoch); fit.Stop != want || fit.EpochsRun != fit.BestEpoch+2 {
		t.Errorf("stop %q, want %q", fit.Stop, want)
	}
}

// A learning rate of 1000 makes every loss NaN: Fit stops with an error that
// names the learning rate instead of returning (nil, nil).
func TestJEIRTDivergenceIsAnError(t *testing.T) {
	r, _, feat := synthJEIRT(t, 20, 60, 8, 4, 5)
	tr, va, _, _ := eval.Split(r, eval.SplitOptions{Val: 0.1, Test: 0.1, Seed: 42})
	for _, lr := range []float64{1000, 1e30, math.Inf(1), math.NaN()} {
		fit, err := Trainer{Dim: 4, Hidden: 12, Epochs: 5, LR: lr, Seed: 1}.Fit(context.Background(), tr, va, feat, 8)
		if err == nil || fit != nil {
			t.Errorf("lr %v: fit %v, error %v", lr, fit, err)
			continue
		}
		if !strings.Contains(err.Error(), "lr") {
			t.Errorf("lr %v: error does not name the learning rate: %v", lr, err)
		}
	}
}
