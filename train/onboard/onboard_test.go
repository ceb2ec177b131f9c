package onboard

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/jeirt/jeirt/encoder"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/eval"
	"github.com/jeirt/jeirt/train/jeirt"
)

// The Newton fit recovers a known row from many answers: questions with
// random directions and norms, labels drawn from the JE-IRT link.
func TestFitRowRecoversKnownRow(t *testing.T) {
	const d, n = 4, 6000
	truth := []float64{1.5, -0.5, 0.8, 0.2}
	rng := rand.New(rand.NewPCG(1, 2))
	data := &RowData{Dim: d}
	for j := 0; j < n; j++ {
		q := make([]float32, d)
		for k := range q {
			q[k] = float32(rng.NormFloat64())
		}
		scale := float32((0.2 + 1.8*rng.Float64()) / model.Norm(q))
		for k := range q {
			q[k] *= scale
		}
		var y uint8
		if rng.Float64() < model.Sigmoid(model.Logit(q, []float32{1.5, -0.5, 0.8, 0.2})) {
			y = 1
		}
		data.Add(q, y)
	}
	ob := Onboard{Prior: "l2", L2: 1e-3}
	prior, err := ob.PriorFor(&model.JEIRT{Dim: d})
	if err != nil {
		t.Fatal(err)
	}
	m, info, err := ob.FitRow(data, prior)
	if err != nil {
		t.Fatal(err)
	}
	if !info.Converged || info.Iterations > 12 {
		t.Errorf("Newton: %d iterations, converged %v", info.Iterations, info.Converged)
	}
	var dist float64
	for k := range m {
		dist += (m[k] - truth[k]) * (m[k] - truth[k])
	}
	if dist = math.Sqrt(dist); dist > 0.15 {
		t.Errorf("fitted row %v is %.3f from the truth %v", m, dist, truth)
	}
	// At the optimum the gradient vanishes: Σ (p_j − y_j) u_j + Λ(m − μ) = 0.
	g := make([]float64, d)
	for j := 0; j < n; j++ {
		u := data.U[j*d : (j+1)*d]
		var z float64
		for k := range u {
			z += u[k] * m[k]
		}
		r := model.Sigmoid(z-data.Norm[j]) - float64(data.Y[j])
		for k := range u {
			g[k] += r * u[k]
		}
	}
	for k := range g {
		if g[k] += 1e-3 * m[k]; math.Abs(g[k]) > 1e-5 {
			t.Errorf("gradient[%d] = %g at the solution", k, g[k])
		}
	}
}

// checkpointFromTruth is a checkpoint whose question embeddings and model rows
// are the generator's own (rows of the models in keep only).
func checkpointFromTruth(r *model.Responses, truth *synth.Truth, keep []int) *model.JEIRT {
	d := len(truth.Q[0])
	out := &model.JEIRT{InputDim: 1, Hidden: 1, Dim: d, W1: []float32{0}, C1: []float32{0},
		W2: make([]float32, d), C2: make([]float32, d), Items: r.Items}
	for _, q := range truth.Q {
		for _, v := range q {
			out.Q = append(out.Q, float32(v))
		}
	}
	for _, i := range keep {
		out.Models = append(out.Models, r.Models[i])
		for _, v := range truth.M[i] {
			out.M = append(out.M, float32(v))
		}
	}
	return out
}

// On data from the JE-IRT generator, a model left out of the checkpoint and
// onboarded from all its answers predicts as well as the generator's own row.
func TestOnboardMatchesTruthOnSynthetic(t *testing.T) {
	r, truth, err := synth.Generate(synth.Options{Kind: "jeirt", Models: 60, Items: 800, Seed: 3, EmbedDim: 8})
	if err != nil {
		t.Fatal(err)
	}
	var keep []int
	for i := 10; i < 60; i++ {
		keep = append(keep, i)
	}
	m := checkpointFromTruth(r, truth, keep)
	ck := &checkpoint.Checkpoint{Model: m}
	res, err := AddModels(context.Background(), ck, r, AddModelsOptions{Models: r.Models[:10], Fraction: 0.5, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Checkpoint.Model.NumModels(); got != 60 {
		t.Fatalf("new checkpoint has %d models, want 60", got)
	}
	if m.NumModels() != 50 {
		t.Fatalf("AddModels changed the input checkpoint")
	}
	var accFit, accOracle, llFit, llOracle, llMean float64
	byModel := r.ByModel()
	for k, a := range res.Added {
		if a.FitCells != 400 || a.HeldCells != 400 || !a.Converged {
			t.Errorf("%s: %d fit, %d held, converged %v", a.Name, a.FitCells, a.HeldCells, a.Converged)
		}
		// The oracle on the same held-out cells.
		fit, held := fractionSplit(byModel.Row(k), 0.5, 7, a.Name)
		if len(fit) != 400 {
			t.Fatal("fractionSplit is not reproducible")
		}
		var p []float64
		var y []uint8
		for _, c := range held {
			p = append(p, truth.OracleP(k, int(r.Item[c])))
			y = append(y, r.Label[c])
		}
		o := eval.Score(p, y)
		accFit += float64(a.Heldout.Accuracy) / 10
		accOracle += o.Accuracy / 10
		llFit += float64(a.Heldout.LogLoss) / 10
		llOracle += o.LogLoss / 10
		llMean += float64(a.ModelMean.LogLoss) / 10
	}
	t.Logf("held-out accuracy: onboarded %.4f, oracle %.4f; log loss %.4f, oracle %.4f, model mean %.4f", accFit, accOracle, llFit, llOracle, llMean)
	if accFit < accOracle-0.025 || llFit > llOracle+0.015 {
		t.Errorf("onboarded rows: accuracy %.4f, log loss %.4f; the generator's rows: %.4f, %.4f", accFit, llFit, accOracle, llOracle)
	}
	if llFit > llMean-0.05 {
		t.Errorf("onboarded log loss %.4f is not clearly below the model-mean baseline %.4f", llFit, llMean)
	}
}

// Onboarding a model from all its training answers, with the adapter of a
// checkpoint trained without it, predicts its held-out answers about as well
// as training it jointly with everyone else.
func TestOnboardCloseToJointTraining(t *testing.T) {
	if testing.Short() {
		t.Skip("trains two JE-IRT models")
	}
	ctx := context.Background()
	r, truth, err := synth.Generate(synth.Options{Kind: "jeirt", Models: 50, Items: 400, Seed: 11, EmbedDim: 8, FeatureDim: 16})
	if err != nil {
		t.Fatal(err)
	}
	var features []float32
	for _, x := range truth.Features {
		features = append(features, x...)
	}
	newModels := []int{0, 1, 2, 3, 4}
	isNew := map[int32]bool{0: true, 1: true, 2: true, 3: true, 4: true}
	// Each new model: 30% of its cells held out for the comparison.
	byModel := r.ByModel()
	var trainAll, trainOld, valCells, test []int32
	for i := 0; i < r.NumModels(); i++ {
		fit, held := fractionSplit(byModel.Row(i), 0.7, 5, r.Models[i])
		if isNew[int32(i)] {
			test = append(test, held...)
			trainAll = append(trainAll, fit...)
			continue
		}
		// Old models: 10% of cells for early stopping.
		k := len(fit) / 10
		valCells = append(valCells, fit[:k]...)
		trainAll = append(trainAll, fit[k:]...)
		trainOld = append(trainOld, fit[k:]...)
	}
	tr := jeirt.Trainer{Dim: 8, Hidden: 32, Dropout: -1, Epochs: 60, BatchSize: 256, LR: 3e-3, WeightDecay: -1, Gamma: 0.98, Patience: 8, Seed: 1}
	joint, err := tr.Fit(ctx, r.Subset(trainAll), r.Subset(valCells), features, 16)
	if err != nil {
		t.Fatal(err)
	}
	old, err := tr.Fit(ctx, r.Subset(trainOld), r.Subset(valCells), features, 16)
	if err != nil {
		t.Fatal(err)
	}
	// The checkpoint without the new models' rows.
	om := old.Model
	base := &model.JEIRT{InputDim: om.InputDim, Hidden: om.Hidden, Dim: om.Dim, W1: om.W1, C1: om.C1, W2: om.W2, C2: om.C2,
		Items: om.Items, Q: om.Q}
	for i := 5; i < r.NumModels(); i++ {
		base.Models = append(base.Models, om.Models[i])
		base.M = append(base.M, om.ModelEmbedding(i)...)
	}
	var names []string
	for _, i := range newModels {
		names = append(names, r.Models[i])
	}
	res, err := AddModels(ctx, &checkpoint.Checkpoint{Model: base}, r.Subset(trainAll), AddModelsOptions{Models: names})
	if err != nil {
		t.Fatal(err)
	}
	nm := res.Checkpoint.Model
	testR := r.Subset(test)
	var pOn, pJoint []float64
	for c := range testR.Label {
		i, j := int(testR.Model[c]), int(testR.Item[c])
		pOn = append(pOn, nm.Prob(nm.NumModels()-5+i, nm.ItemEmbedding(j)))
		pJoint = append(pJoint, joint.Model.Prob(i, joint.Model.ItemEmbedding(j)))
	}
	on, jo := eval.Score(pOn, testR.Label), eval.Score(pJoint, testR.Label)
	t.Logf("held-out cells of 5 new models: onboarded acc %.4f AUC %.4f logloss %.4f; joint acc %.4f AUC %.4f logloss %.4f",
		on.Accuracy, on.AUC, on.LogLoss, jo.Accuracy, jo.AUC, jo.LogLoss)
	if on.Accuracy < jo.Accuracy-0.02 || on.LogLoss > jo.LogLoss+0.03 {
		t.Errorf("onboarding (acc %.4f, log loss %.4f) is not close to joint training (acc %.4f, log loss %.4f)",
			on.Accuracy, on.LogLoss, jo.Accuracy, jo.LogLoss)
	}
}

func TestAddModelsErrorsAndNewItems(t *testing.T) {
	ctx := context.Background()
	r, truth, err := synth.Generate(synth.Options{Kind: "jeirt", Models: 12, Items: 60, Seed: 5, EmbedDim: 4})
	if err != nil {
		t.Fatal(err)
	}
	m := checkpointFromTruth(r, truth, []int{2, 3, 4, 5, 6, 7, 8, 9, 10, 11})
	// A real adapter on the hash encoder, so new items can be encoded.
	enc, _ := encoder.NewHash(8)
	rng := rand.New(rand.NewPCG(3, 4))
	m.InputDim, m.Hidden = 8, 6
	m.W1, m.C1, m.W2, m.C2 = randVec(rng, 48), randVec(rng, 6), randVec(rng, 24), randVec(rng, 4)
	m.Items, m.Q = m.Items[:50], m.Q[:50*4] // items 51..60 are new to the checkpoint
	man := checkpoint.Manifest{Encoder: checkpoint.EncoderInfo{Spec: "hash:8", Fingerprint: enc.Fingerprint(), Dim: 8}}
	ck := &checkpoint.Checkpoint{Model: m, Manifest: man}

	_, err = AddModels(ctx, ck, r, AddModelsOptions{Models: []string{"model_001", "model_003", "model_004"}})
	if want := `add-model: 2 models are already in the checkpoint (pass replace to refit, or models to choose others): "model_003", "model_004"`; err == nil || err.Error() != want {
		t.Errorf("existing models: %v, want %q", err, want)
	}
	for _, c := range []struct {
		opt  AddModelsOptions
		want string
	}{
		{AddModelsOptions{Models: []string{"nope"}}, `add-model: model "nope" has no responses in the file`},
		{AddModelsOptions{Models: []string{"model_001", "model_001"}}, `add-model: model "model_001" is named twice`},
		{AddModelsOptions{Models: []string{"model_001"}, Fraction: 1.5}, "add-model: fraction 1.5 is not in (0, 1]"},
		{AddModelsOptions{Models: []string{"model_001"}, Onboard: Onboard{Prior: "flat"}}, `onboard: unknown prior "flat" (want default, population, theta=normal(0,SD) or l2)`},
	} {
		if _, err := AddModels(ctx, ck, r, c.opt); err == nil || err.Error() != c.want {
			t.Errorf("%+v: %v, want %q", c.opt, err, c.want)
		}
	}

	res, err := AddModels(ctx, ck, r, AddModelsOptions{Models: []string{"model_001", "model_003"}, Replace: true, Fraction: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	nm := res.Checkpoint.Model
	if res.NewItems != 10 || nm.NumItems() != 60 || nm.NumModels() != 11 || nm.Models[10] != "model_001" {
		t.Fatalf("new items %d, items %d, models %d (%v)", res.NewItems, nm.NumItems(), nm.NumModels(), nm.Models)
	}
	if a := res.Added[0]; a.Replaced || a.Joint != nil || a.Heldout == nil {
		t.Errorf("model_001 is new: %+v", a)
	}
	if a := res.Added[1]; !a.Replaced || a.Joint == nil || a.FitCells+a.HeldCells != 60 {
		t.Errorf("model_003 is replaced: %+v", a)
	}
	// The new items' embeddings are the adapter's output on their hash vectors.
	x, _ := enc.Encode(ctx, []string{r.ItemText[55]})
	want := m.QuestionEmbedding(x[0])
	for k, v := range nm.ItemEmbedding(55) {
		if v != want[k] {
			t.Fatalf("item %s: embedding %v, want %v", nm.Items[55], nm.ItemEmbedding(55), want)
		}
	}
	if err := nm.Check(); err != nil {
		t.Fatal(err)
	}

	// A checkpoint whose encoder no longer matches cannot encode new items.
	bad := &checkpoint.Checkpoint{Model: m, Manifest: man}
	bad.Manifest.Encoder.Fingerprint = "hash/v0/old"
	_, err = AddModels(ctx, bad, r, AddModelsOptions{Models: []string{"model_001"}})
	if want := "encoding 10 items the checkpoint has not seen: encoder hash:8 now has fingerprint hash/v1/fnv1a64/dim=8, but the checkpoint was trained with hash/v0/old: new questions cannot be encoded the same way"; err == nil || err.Error() != want {
		t.Errorf("fingerprint mismatch: %v, want %q", err, want)
	}
	noText := *r
	noText.ItemText = nil
	_, err = AddModels(ctx, ck, &noText, AddModelsOptions{Models: []string{"model_001"}})
	if want := `item "item_00051" is not in the checkpoint and has no text to encode (give item texts with items)`; err == nil || err.Error() != want {
		t.Errorf("no text: %v, want %q", err, want)
	}
}

func randVec(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for k := range v {
		v[k] = float32(rng.NormFloat64())
	}
	return v
}

func TestFractionSplit(t *testing.T) {
	cells := make([]int32, 100)
	for k := range cells {
		cells[k] = int32(3 * k)
	}
	for _, c := range []struct {
		f    float64
		want int
	}{{0.01, 1}, {0.004, 1}, {0.25, 25}, {1, 100}} {
		fit, held := fractionSplit(cells, c.f, 42, "m")
		if len(fit) != c.want || len(fit)+len(held) != 100 {
			t.Errorf("f=%v: %d fit, %d held, want %d fit", c.f, len(fit), len(held), c.want)
		}
		again, _ := fractionSplit(cells, c.f, 42, "m")
		for k := range fit {
			if fit[k] != again[k] {
				t.Fatalf("f=%v: not reproducible", c.f)
			}
		}
	}
	a, _ := fractionSplit(cells, 0.1, 42, "m")
	b, _ := fractionSplit(cells, 0.1, 42, "other")
	same := true
	for k := range a {
		same = same && a[k] == b[k]
	}
	if same {
		t.Error("two models got the same draw")
	}
}

// TestRowPriorGrammar: add-model's --prior theta=normal(0,SD) is the l2
// prior of precision 1/SD², and default is the population prior.
func TestRowPriorGrammar(t *testing.T) {
	m := &model.JEIRT{Dim: 3}
	a, err := Onboard{Prior: "theta=normal(0,2)"}.PriorFor(m)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Onboard{Prior: "l2", L2: 0.25}.PriorFor(m)
	if err != nil {
		t.Fatal(err)
	}
	for k := range a.Precision {
		if a.Precision[k] != b.Precision[k] {
			t.Fatalf("theta=normal(0,2): precision %v, want l2 0.25's %v", a.Precision, b.Precision)
		}
	}
	if a.Precision[0] != 0.25 {
		t.Errorf("precision %v, want 0.25 on the diagonal", a.Precision[0])
	}
	if got := (Onboard{Prior: "default"}).WithDefaults().Prior; got != "population" {
		t.Errorf("default prior is %q, want population", got)
	}
	if _, err := (Onboard{Prior: "theta=normal(0,1),a=normal(1,1)"}).PriorFor(m); err == nil {
		t.Error("a slope term for a model's row: no error")
	}
}
