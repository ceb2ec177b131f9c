//go:build cgo

package jeirtstep

import (
	"math/rand/v2"
	"testing"

	"github.com/jeirt/jeirt/cuda/internal/gpu"
	"github.com/jeirt/jeirt/cuda/internal/harness"
	"github.com/jeirt/jeirt/train/backend"
)

// TestCosts counts the device work of a JE-IRT step, epoch and validation at
// EmbedLLM size, without running the kernels (on harness.Dry): launches,
// copies each way and their bytes, the synchronisations (the copies down)
// and the device memory. scripts/cuda-cpu-check.sh prints the log lines.
func TestCosts(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	// JE-IRT at EmbedLLM size: 768-d encoder vectors, hidden 1,536, d 256,
	// 112 models, 36,054 items with residuals, per-pair batches of 512 (one
	// row per pair) with dropout; an epoch is 0.8 x 112 x 36,054 training
	// pairs. Epoch: the encoder vectors went up before (SetFeatures, once
	// per fit), the schedule goes up in two copies, the steps only launch,
	// and the steps' losses come down in one copy at the end.
	const D, H, dim, N, J, U = 768, 1536, 256, 112, 36054, 512
	g := harness.NewDry()
	jp := &backend.JEIRTParams{InputDim: D, Hidden: H, Dim: dim, NumModels: N, NumItems: J, ResidualL2: 0.01,
		W1: make([]float32, H*D), C1: make([]float32, H), W2: make([]float32, dim*H), C2: make([]float32, dim),
		M: make([]float32, N*dim), R: make([]float32, J*dim)}
	s, err := newStepper(g, jp, backend.AdamW{})
	if err != nil {
		t.Fatal(err)
	}
	before := g.Counts()
	if err := s.SetFeatures(make([]float32, J*D)); err != nil {
		t.Fatal(err)
	}
	feats := g.Counts().Minus(before)
	pairs := N * J * 8 / 10
	sc := &backend.JEIRTSchedule{RowStart: []int{0}, PairStart: []int{0}, Dropout: backend.JEIRTDropout{P: 0.5, Seed: 7}}
	for k := range pairs {
		sc.Item = append(sc.Item, int32(rng.IntN(J)))
		sc.Row = append(sc.Row, int32(k%U))
		sc.Model = append(sc.Model, int32(rng.IntN(N)))
		sc.Label = append(sc.Label, float32(k&1))
		if (k+1)%U == 0 || k+1 == pairs {
			sc.RowStart = append(sc.RowStart, len(sc.Item))
			sc.PairStart = append(sc.PairStart, len(sc.Row))
		}
	}
	steps := int64(sc.Steps())
	before = g.Counts()
	losses, err := s.Epoch(t.Context(), sc, 1e-3, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := g.Counts().Minus(before)
	if int64(len(losses)) != steps || d.Launches > 8*steps || d.Up != 2 || d.Down != 1 || d.DownBytes != 8*steps {
		t.Errorf("JE-IRT epoch of %d steps: %+v; want at most 8 launches a step, 2 copies up and 1 copy of %d bytes down", steps, d, 8*steps)
	}
	t.Logf("JE-IRT EmbedLLM epoch (%d pairs, %d steps of %d): %.0f launches per step, %d copies up (%s, the schedule), %d copy down (%d B, the step losses): %d synchronisation, at the end; encoder vectors %d copy up (%s) once per fit; device memory %s",
		pairs, steps, U, float64(d.Launches)/float64(steps), d.Up, gpu.MiB(d.UpBytes), d.Down, d.DownBytes, d.Down, feats.Up, gpu.MiB(feats.UpBytes), gpu.MiB(g.Peak))

	// Validation on the device: the validation cells (10% of 112 x 36,054)
	// and 50,000 monitored training cells go up once per fit; each epoch
	// computes every item's question embedding, scores both sets and reads
	// four numbers.
	var sets [2]backend.JEIRTCells
	for k, n := range []int{N * J / 10, 50000} {
		for range n {
			sets[k].Item = append(sets[k].Item, int32(rng.IntN(J)))
			sets[k].Model = append(sets[k].Model, int32(rng.IntN(N)))
			sets[k].Label = append(sets[k].Label, 1)
		}
	}
	before = g.Counts()
	if err := s.SetEvalCells(sets[:]); err != nil {
		t.Fatal(err)
	}
	setup := g.Counts().Minus(before)
	before = g.Counts()
	if _, _, err := s.Evaluate(nil, nil); err != nil {
		t.Fatal(err)
	}
	d = g.Counts().Minus(before)
	if d.Up != 0 || d.Down != 1 {
		t.Errorf("JE-IRT evaluation: %+v; want no copy up and one copy down", d)
	}
	t.Logf("JE-IRT EmbedLLM validation (%d + %d cells): %d launches, %d copies up, %d copy down (%d B) per epoch; the cells %d copies up (%s) once per fit",
		len(sets[0].Item), len(sets[1].Item), d.Launches, d.Up, d.Down, d.DownBytes, setup.Up, gpu.MiB(setup.UpBytes))

	// A single Step (the API without SetFeatures) uploads its batch.
	jb := &backend.JEIRTBatch{X: make([]float32, U*D), Item: make([]int32, U), Mask: make([]float32, U*H),
		Row: make([]int32, U), Model: make([]int32, U), Label: make([]float32, U)}
	for u := range U {
		jb.Item[u], jb.Row[u], jb.Model[u] = int32(rng.IntN(J)), int32(u), int32(rng.IntN(N))
	}
	before = g.Counts()
	if _, err := s.Step(jb, 1e-3); err != nil {
		t.Fatal(err)
	}
	d = g.Counts().Minus(before)
	t.Logf("JE-IRT EmbedLLM single Step (%d pairs, batch and mask uploaded): %d launches, %d copies up (%s), %d copy down (%d B)",
		U, d.Launches, d.Up, gpu.MiB(d.UpBytes), d.Down, d.DownBytes)
	s.Close()
}
