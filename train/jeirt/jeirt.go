package jeirt

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/machine"
	"github.com/jeirt/jeirt/model/simd"
	"github.com/jeirt/jeirt/train/backend"
)

// Trainer trains a joint-embedding IRT model (JE-IRT; Yao et al. 2025,
// arXiv:2509.22888): question embeddings
// q_j = W2·dropout(relu(W1·x_j + c1)) + c2 from frozen encoder vectors x_j,
// model embeddings m_i, P(correct) = σ(q·m/(‖q‖+1e-8) − ‖q‖), trained by
// minimising binary cross-entropy with AdamW and a learning rate multiplied by
// Gamma after every epoch, stopping early when the validation loss has not
// improved for Patience epochs and keeping the best epoch's parameters.
//
// Zero fields take the defaults of DefaultConfig (Dim 256, Hidden 2D,
// Dropout 0.5, Epochs 100, BatchSize 512, LR 1e-3, WeightDecay 0.3,
// Gamma 0.97, Patience 10, Device "auto", Batching
// "by-question"); a negative Dropout, WeightDecay or Patience means none (no
// dropout, no decay, never stop early). A fixed Seed gives the
// same run twice, on the CPU and on a GPU (whose sums run in a fixed order).
// The dropout masks are a hash of the seed, the step and the unit
// (backend.JEIRTDropout), so the CPU and a GPU drop the same units.
type Trainer struct {
	Dim     int     // d
	Hidden  int     // adapter hidden width; 0 means 2·D
	Dropout float64 // adapter dropout probability; 0 means 0.5, negative none
	// Residual > 0 adds a free per-question vector r_j (learned for training
	// items) with penalty Residual · mean over a batch's pairs of ‖r_j‖².
	Residual float64

	Epochs      int
	BatchSize   int
	LR          float64
	WeightDecay float64 // AdamW's decoupled decay; 0 means 0.3 (the reference's is 0.01), negative none
	Gamma       float64
	Patience    int   // epochs without a better validation loss before stopping; 0 means 10, negative never
	Seed        int64 // initialisation, shuffling and dropout
	// Device is where the steps run: a device Resolve returned (cpu, the
	// Gorgonia graph step; cpu:fused, the hand-written one; cuda), or auto
	// ("", resolved by Fit).
	Device string
	// Batching is "by-question" (a batch is all training pairs of a few
	// questions, so the adapter runs once per question) or "per-pair" (a
	// random batch of pairs, the adapter run once per pair, as the reference
	// implementation does).
	Batching string

	// MaxMemory is the memory, in bytes, the parameter tables may take
	// (CheckMemory); 0 means the machine's available memory.
	MaxMemory int64

	// Progress, when set, is called after every epoch.
	Progress func(checkpoint.Epoch)
	// Warn, when set, is called with each warning as it arises (also kept in
	// Result.Warnings): the learning rate has decayed below 1% of its start
	// while the validation loss is still falling, or training reached the
	// epoch limit while still improving.
	Warn func(string)
}

// Result is a trained model and how training went.
type Result struct {
	Model           *model.JEIRT
	Device          string
	Step            string // the step that ran: StepGraph or StepFused on the CPU, else the device
	BestEpoch       int
	EpochsRun       int
	SecondsPerEpoch float64 // mean training seconds per epoch
	History         []checkpoint.Epoch
	Interrupted     bool // ctx was cancelled; Model is the best epoch so far
	// Stop says why training stopped: "early stop at epoch N (no better
	// validation loss for P epochs), best epoch M", "epoch limit N reached,
	// best epoch M" or "interrupted at epoch N, best epoch M".
	Stop     string
	Warnings []string
}

// WithDefaults is t with each zero field set to its default (see Trainer)
// and each negative "none" made 0; Fit trains with it.
func (t Trainer) WithDefaults(inputDim int) Trainer {
	if t.Dim == 0 {
		t.Dim = 256
	}
	if t.Hidden == 0 {
		t.Hidden = 2 * inputDim
	}
	if t.Epochs == 0 {
		t.Epochs = 100
	}
	if t.BatchSize == 0 {
		t.BatchSize = 512
	}
	if t.LR == 0 {
		t.LR = 1e-3
	}
	if t.Gamma == 0 {
		t.Gamma = 0.97
	}
	t.Dropout = orNone(t.Dropout, 0.5)
	t.WeightDecay = orNone(t.WeightDecay, 0.3)
	switch {
	case t.Patience == 0:
		t.Patience = 10
	case t.Patience < 0:
		t.Patience = 0 // never stop early
	}
	if t.Batching == "" {
		t.Batching = "by-question"
	}
	return t
}

// Fit trains on the cells of trainR, early-stopping on valR. features holds
// the encoder vector of every item of trainR.Items, row-major
// (len(Items) x inputDim); trainR and valR share Models and Items.
func (t Trainer) Fit(ctx context.Context, trainR, valR *model.Responses, features []float32, inputDim int) (*Result, error) {
	t = t.WithDefaults(inputDim)
	if !finite(t.LR) || t.LR <= 0 || !finite(t.WeightDecay) || t.WeightDecay < 0 {
		return nil, fmt.Errorf("jeirt: train.lr (%g) must be finite and > 0 and train.weight_decay (%g) finite and >= 0", t.LR, t.WeightDecay)
	}
	J := trainR.NumItems()
	if len(features) != J*inputDim {
		return nil, fmt.Errorf("jeirt: %d feature values for %d items of dimension %d", len(features), J, inputDim)
	}
	if valR.NumModels() != trainR.NumModels() || valR.NumItems() != J {
		return nil, fmt.Errorf("jeirt: validation cells index %d models and %d items, training %d and %d", valR.NumModels(), valR.NumItems(), trainR.NumModels(), J)
	}
	if trainR.Len() == 0 {
		return nil, fmt.Errorf("jeirt: no training cells")
	}
	if t.Batching != "by-question" && t.Batching != "per-pair" {
		return nil, fmt.Errorf("jeirt: batching %q: want by-question or per-pair", t.Batching)
	}
	newStep, device, err := backend.Lookup[backend.NewJEIRTStepper](t.Device)
	if err != nil {
		return nil, err
	}
	if device == backend.CUDA && (trainR.Weighted() || valR.Weighted()) {
		return nil, model.FieldErrorf("Device", "jeirt: the GPU's JE-IRT step fits 0/1 answers; cells of several trials or graded scores train with {Device} cpu or cpu:fused")
	}
	stepName := device // a GPU has its own step
	switch device {
	case backend.CPU:
		stepName = StepGraph
		newStep = func(p *backend.JEIRTParams, opt backend.AdamW) (backend.JEIRTStepper, error) {
			return newHostStepper(p, opt, newGraphGradient(p)), nil
		}
	case backend.CPUFused:
		stepName, device = StepFused, backend.CPU
	}
	if err := t.CheckMemory(inputDim, trainR.NumModels(), J, 0); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(uint64(t.Seed), 0x4a45495254)) // "JEIRT"
	p := initJEIRTParams(rng, inputDim, t.Hidden, t.Dim, trainR.NumModels(), J, t.Residual)
	step, err := newStep(p, backend.AdamW{WeightDecay: t.WeightDecay})
	if err != nil {
		return nil, err
	}

	fit := &Result{Device: device, Step: stepName}
	var best *backend.JEIRTParams
	bestLoss := math.Inf(1)
	sinceBest := 0
	var trainSeconds float64
	monitor := sampleCells(trainR, 50000, rng)
	warn := func(format string, args ...any) {
		w := fmt.Sprintf(format, args...)
		fit.Warnings = append(fit.Warnings, w)
		if t.Warn != nil {
			t.Warn(w)
		}
	}
	lowLRWarned := false
	// A device stepper that runs whole epochs gets the encoder vectors once
	// and each epoch's schedule once; the others get one batch at a time.
	epochs, onDevice := step.(backend.JEIRTEpochStepper)
	if onDevice {
		// Validation runs there too: the validation cells and the monitored
		// training cells go up once.
		sets := []backend.JEIRTCells{cellsOf(valR, nil), cellsOf(trainR, monitor)}
		if err := firstErr(epochs.SetFeatures(features), epochs.SetEvalCells(sets)); err != nil {
			return nil, err
		}
	}
	var evLoss, evAcc []float64
	sched := &backend.JEIRTSchedule{Dropout: backend.JEIRTDropout{P: t.Dropout, Seed: rng.Uint64()}}
	var b *backend.JEIRTBatch
	var losses []float64
	for epoch := 1; epoch <= t.Epochs; epoch++ {
		lr := t.LR * math.Pow(t.Gamma, float64(epoch-1))
		start := time.Now()
		sched.FirstStep += int64(sched.Steps())
		t.schedule(trainR, rng, sched)
		var lossSum float64
		batches, pairs := 0, 0
		if onDevice {
			losses, err = epochs.Epoch(ctx, sched, lr, losses)
			if err != nil && ctx.Err() == nil {
				return nil, err
			}
			for _, l := range losses {
				lossSum += l
			}
			batches, pairs = len(losses), len(sched.Row)
		} else {
			for k := range sched.Steps() {
				if ctx.Err() != nil {
					break
				}
				b = sched.Batch(k, features, inputDim, t.Hidden, b)
				loss, err := step.Step(b, lr)
				if err != nil {
					return nil, err
				}
				lossSum += loss
				batches++
				pairs += len(b.Row)
			}
		}
		if ctx.Err() != nil {
			fit.Interrupted = true
			break
		}
		secs := time.Since(start).Seconds()
		trainSeconds += secs
		var cur *backend.JEIRTParams // read from the device only when needed
		var vl, va, ta float64
		if onDevice {
			evLoss, evAcc, err = epochs.Evaluate(evLoss, evAcc)
			if err != nil {
				return nil, err
			}
			vl, va, ta = evLoss[0], evAcc[0], evAcc[1]
		} else {
			cur = step.Params()
			vl, va = evalLoss(cur, features, valR, nil)
			_, ta = evalLoss(cur, features, trainR, monitor)
		}
		e := checkpoint.Epoch{Epoch: epoch, TrainLoss: lossSum / float64(batches), TrainAcc: ta, ValLoss: vl, ValAcc: va,
			LR: lr, ExamplesPerSec: float64(pairs) / secs, Seconds: secs}
		if (valR.Len() == 0 || (vl < bestLoss && !exploded(vl))) && !exploded(e.TrainLoss) {
			if cur == nil {
				cur = step.Params()
			}
			bestLoss, best, fit.BestEpoch, sinceBest, e.Best = vl, cur.Clone(), epoch, 0, true
		} else {
			sinceBest++
		}
		fit.History = append(fit.History, e)
		fit.EpochsRun = epoch
		if t.Progress != nil {
			t.Progress(e)
		}
		if exploded(e.TrainLoss) || (valR.Len() > 0 && exploded(vl)) {
			cause := fmt.Sprintf("epoch %d: the training loss is %g and the validation loss %g; the learning rate (train.lr %g) is likely too high, or train.weight_decay (%g) too large, or the data or features hold non-finite values", epoch, e.TrainLoss, vl, t.LR, t.WeightDecay)
			if best == nil || valR.Len() == 0 {
				return nil, fmt.Errorf("jeirt: training diverged at %s", cause)
			}
			warn("training diverged at %s; keeping the best epoch %d", cause, fit.BestEpoch)
			fit.Stop = fmt.Sprintf("diverged at epoch %d, best epoch %d", epoch, fit.BestEpoch)
			break
		}
		if e.Best && epoch > 1 && lr < 0.01*t.LR && !lowLRWarned {
			lowLRWarned = true
			warn("epoch %d: the learning rate (%.3g) is below 1%% of its start (%.3g) while the validation loss is still falling; raise train.gamma (now %g) or train.lr", epoch, lr, t.LR, t.Gamma)
		}
		if t.Patience > 0 && sinceBest >= t.Patience {
			fit.Stop = fmt.Sprintf("early stop at epoch %d (no better validation loss for %d epochs), best epoch %d", epoch, t.Patience, fit.BestEpoch)
			break
		}
	}
	if best == nil {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return nil, errors.New("jeirt: no epoch produced a finite validation loss; lower train.lr or check the data")
	}
	switch {
	case fit.Interrupted:
		fit.Stop = fmt.Sprintf("interrupted after epoch %d, best epoch %d", fit.EpochsRun, fit.BestEpoch)
	case fit.Stop == "":
		fit.Stop = fmt.Sprintf("epoch limit %d reached, best epoch %d", t.Epochs, fit.BestEpoch)
		if valR.Len() > 0 && fit.BestEpoch > fit.EpochsRun-min(3, t.Epochs) && fit.EpochsRun > 1 {
			warn("training stopped at the epoch limit (%d) while the validation loss was still improving (best epoch %d); raise train.epochs", t.Epochs, fit.BestEpoch)
		}
	}
	fit.SecondsPerEpoch = trainSeconds / float64(fit.EpochsRun)
	fit.Model = paramsToModel(best, features, trainR.Models, trainR.Items)
	return fit, nil
}

// initJEIRTParams initialises as PyTorch does: nn.Linear weights and biases
// uniform on ±1/√fan_in, nn.Embedding rows standard normal, the residual zero.
// paramCopies is how many float32 copies of the parameter tables training
// holds: the weights, their gradients, AdamW's two moments, the best
// epoch's copy and the step's working copy.
const paramCopies = 6

// CheckMemory refuses, with the estimate, a training whose parameter
// tables (an adapter of inputDim x Hidden x Dim, models x Dim and, with a
// residual, items x Dim, each held paramCopies times) and the items'
// encoder vectors (features bytes, when they are yet to be made) would take
// more than MaxMemory: before anything that large is allocated.
func (t Trainer) CheckMemory(inputDim, models, items int, features int64) error {
	t = t.WithDefaults(inputDim)
	D, H, d := int64(inputDim), int64(t.Hidden), int64(t.Dim)
	params := D*H + H + H*d + d + int64(models)*d
	if t.Residual > 0 {
		params += int64(items) * d
	}
	what := fmt.Sprintf("training JE-IRT (an adapter of %d x %d x %d for %d models and %d items)", inputDim, t.Hidden, t.Dim, models, items)
	return machine.CheckMemory(what, paramCopies*4*params+features, t.MaxMemory)
}

func initJEIRTParams(rng *rand.Rand, D, H, d, N, J int, residual float64) *backend.JEIRTParams {
	p := &backend.JEIRTParams{InputDim: D, Hidden: H, Dim: d, NumModels: N, NumItems: J, ResidualL2: residual}
	uniform := func(n, fanIn int) []float32 {
		bound := 1 / math.Sqrt(float64(fanIn))
		v := make([]float32, n)
		for k := range v {
			v[k] = float32((2*rng.Float64() - 1) * bound)
		}
		return v
	}
	p.W1, p.C1 = uniform(H*D, D), uniform(H, D)
	p.W2, p.C2 = uniform(d*H, H), uniform(d, H)
	p.M = make([]float32, N*d)
	for k := range p.M {
		p.M[k] = float32(rng.NormFloat64())
	}
	if residual > 0 {
		p.R = make([]float32, J*d)
	}
	return p
}

// schedule fills s with the epoch's batches in a seeded random order, as
// indices into the items' encoder vectors (the step numbers and dropout
// setting of s are left as they are).
func (t Trainer) schedule(r *model.Responses, rng *rand.Rand, s *backend.JEIRTSchedule) {
	s.RowStart, s.PairStart = append(s.RowStart[:0], 0), append(s.PairStart[:0], 0)
	s.Item, s.Row, s.Model, s.Label = s.Item[:0], s.Row[:0], s.Model[:0], s.Label[:0]
	s.Weight = nil
	weighted := r.Weighted()
	if weighted {
		s.Weight = make([]float32, 0, r.Len())
	}
	stepRow := 0 // the first row of the open step
	// add appends a row (item j) with cells to the open step: a cell of
	// several trials or a graded score as its fraction k/n with weight n.
	add := func(j int32, cells []int32) {
		u := int32(len(s.Item) - stepRow)
		s.Item = append(s.Item, j)
		for _, c := range cells {
			s.Row = append(s.Row, u)
			s.Model = append(s.Model, r.Model[c])
			if weighted {
				s.Label = append(s.Label, float32(r.ScoreAt(int(c))))
				s.Weight = append(s.Weight, float32(r.TrialsAt(int(c))))
			} else {
				s.Label = append(s.Label, float32(r.Label[c]))
			}
		}
	}
	end := func() {
		s.RowStart = append(s.RowStart, len(s.Item))
		s.PairStart = append(s.PairStart, len(s.Row))
		stepRow = len(s.Item)
	}
	if t.Batching == "per-pair" {
		perm := rng.Perm(r.Len())
		var one [1]int32
		for lo := 0; lo < len(perm); lo += t.BatchSize {
			for _, c := range perm[lo:min(lo+t.BatchSize, len(perm))] {
				one[0] = int32(c)
				add(r.Item[c], one[:])
			}
			end()
		}
		return
	}
	// by-question: units are a question's training cells (split into chunks
	// of at most BatchSize); a batch packs whole units up to BatchSize pairs,
	// so each question's adapter output is computed once.
	byItem := r.ByItem()
	type unit struct {
		item  int32
		cells []int32
	}
	var units []unit
	for j := 0; j < r.NumItems(); j++ {
		cells := append([]int32(nil), byItem.Row(j)...)
		rng.Shuffle(len(cells), func(a, b int) { cells[a], cells[b] = cells[b], cells[a] })
		for lo := 0; lo < len(cells); lo += t.BatchSize {
			units = append(units, unit{int32(j), cells[lo:min(lo+t.BatchSize, len(cells))]})
		}
	}
	rng.Shuffle(len(units), func(a, b int) { units[a], units[b] = units[b], units[a] })
	n := 0
	for _, u := range units {
		if n > 0 && n+len(u.cells) > t.BatchSize {
			end()
			n = 0
		}
		add(u.item, u.cells)
		n += len(u.cells)
	}
	if n > 0 {
		end()
	}
}

// cellsOf returns the given cells of r (all when cells is nil) for a
// device's evaluation.
func cellsOf(r *model.Responses, cells []int32) backend.JEIRTCells {
	var c backend.JEIRTCells
	add := func(k int) {
		c.Item = append(c.Item, r.Item[k])
		c.Model = append(c.Model, r.Model[k])
		if r.Weighted() {
			c.Label = append(c.Label, float32(r.ScoreAt(k)))
			c.Weight = append(c.Weight, float32(r.TrialsAt(k)))
		} else {
			c.Label = append(c.Label, float32(r.Label[k]))
		}
	}
	if cells == nil {
		for k := range r.Len() {
			add(k)
		}
	}
	for _, k := range cells {
		add(int(k))
	}
	return c
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// sampleCells returns up to n cells of r chosen at random (all when fewer).
func sampleCells(r *model.Responses, n int, rng *rand.Rand) []int32 {
	if r.Len() <= n {
		return nil
	}
	perm := rng.Perm(r.Len())[:n]
	out := make([]int32, n)
	for k, c := range perm {
		out[k] = int32(c)
	}
	return out
}

// paramsToModel freezes parameters into a model.JEIRT whose Q holds the
// question embedding of every item (adapter output plus residual).
func paramsToModel(p *backend.JEIRTParams, features []float32, models, items []string) *model.JEIRT {
	m := &model.JEIRT{InputDim: p.InputDim, Hidden: p.Hidden, Dim: p.Dim,
		W1: p.W1, C1: p.C1, W2: p.W2, C2: p.C2, M: p.M, R: p.R, Models: models, Items: items}
	m.Q = m.QuestionEmbeddings(features, len(items))
	if p.R != nil {
		simd.Axpy(m.Q, p.R, 1)
	}
	return m
}

// evalLoss is the mean binary cross-entropy and accuracy (p ≥ 0.5) on the
// given cells of r (all when cells is nil), without dropout; on cells of
// several trials or graded scores, the trial-weighted cross-entropy of the
// fractions and the accuracy of the rounded outcome (k/n ≥ ½).
func evalLoss(p *backend.JEIRTParams, features []float32, r *model.Responses, cells []int32) (loss, acc float64) {
	logit := predictCells(p, features, r, cells)
	if len(logit) == 0 {
		return math.NaN(), math.NaN()
	}
	total := 0.0
	for k, z := range logit {
		c := k
		if cells != nil {
			c = int(cells[k])
		}
		y, w := float64(r.Label[c]), 1.0
		if r.Weighted() {
			y, w = r.ScoreAt(c), float64(r.TrialsAt(c))
		}
		loss += w * model.BCE(z, y)
		total += w
		if (z >= 0) == (r.Label[c] == 1) {
			acc++
		}
	}
	return loss / total, acc / float64(len(logit))
}

// predictCells returns the logits of the given cells (all when nil),
// computing the adapter once per distinct item.
func predictCells(p *backend.JEIRTParams, features []float32, r *model.Responses, cells []int32) []float64 {
	n := r.Len()
	if cells != nil {
		n = len(cells)
	}
	cell := func(k int) int {
		if cells != nil {
			return int(cells[k])
		}
		return k
	}
	row := make(map[int32]int32)
	var items []int32
	for k := 0; k < n; k++ {
		j := r.Item[cell(k)]
		if _, ok := row[j]; !ok {
			row[j] = int32(len(items))
			items = append(items, j)
		}
	}
	D, d := p.InputDim, p.Dim
	x := make([]float32, 0, len(items)*D)
	for _, j := range items {
		x = append(x, features[int(j)*D:(int(j)+1)*D]...)
	}
	m := &model.JEIRT{InputDim: D, Hidden: p.Hidden, Dim: d, W1: p.W1, C1: p.C1, W2: p.W2, C2: p.C2}
	q := m.QuestionEmbeddings(x, len(items))
	if p.R != nil {
		for u, j := range items {
			simd.Axpy(q[u*d:(u+1)*d], p.R[int(j)*d:(int(j)+1)*d], 1)
		}
	}
	out := make([]float64, n)
	for k := 0; k < n; k++ {
		c := cell(k)
		u := int(row[r.Item[c]])
		i := int(r.Model[c])
		out[k] = model.Logit(q[u*d:(u+1)*d], p.M[i*d:(i+1)*d])
	}
	return out
}

// orNone is a setting whose zero value means def and a negative value none (0).
func orNone(v, def float64) float64 {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// maxLoss is the mean log loss above which training counts as diverged: a
// model that knows nothing scores ln 2 ≈ 0.69, and a mean of 1000 means
// probabilities near e^-1000 on the cells it gets wrong.
const maxLoss = 1000

func exploded(loss float64) bool { return !finite(loss) || loss > maxLoss }
