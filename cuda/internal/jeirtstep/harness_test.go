//go:build cgo

package jeirtstep

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/jeirt/jeirt/cuda/internal/gpu"
	"github.com/jeirt/jeirt/cuda/internal/harness"
	"github.com/jeirt/jeirt/cuda/kernels"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/backend"
)

// The tests run the stepper on the kernel sources compiled for the CPU
// (package harness); the acceptance test against train's CPU step, through
// jeirt.Trainer, is package cuda's.

func TestMain(m *testing.M) { harness.Main(m) }

// smallParams are the parameters of a small JE-IRT model with a residual,
// the same values each time: N(0, 0.3²) draws of a fixed seed.
func smallParams(D, H, dim, N, J int) *backend.JEIRTParams {
	r := rand.New(rand.NewPCG(1, 2))
	fill := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64() * 0.3)
		}
		return x
	}
	return &backend.JEIRTParams{InputDim: D, Hidden: H, Dim: dim, NumModels: N, NumItems: J, ResidualL2: 0.01,
		W1: fill(H * D), C1: fill(H), W2: fill(dim * H), C2: fill(dim), M: fill(N * dim), R: fill(J * dim)}
}

// TestHarnessJEIRTBatchErrors checks the batch validation messages.
func TestHarnessJEIRTBatchErrors(t *testing.T) {
	p := &backend.JEIRTParams{InputDim: 3, Hidden: 4, Dim: 2, NumModels: 2, NumItems: 2,
		W1: make([]float32, 12), C1: make([]float32, 4), W2: make([]float32, 8), C2: make([]float32, 2), M: make([]float32, 4)}
	s, err := newStepper(harness.NewGPU(), p, backend.AdamW{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, c := range []struct {
		b    backend.JEIRTBatch
		want string
	}{
		{backend.JEIRTBatch{X: make([]float32, 5), Item: []int32{0, 1}, Row: []int32{0}, Model: []int32{0}, Label: []float32{1}}, "cuda: JE-IRT batch has 5 encoder values for 2 rows of dimension 3"},
		{backend.JEIRTBatch{X: make([]float32, 3), Item: []int32{0}, Row: []int32{1}, Model: []int32{0}, Label: []float32{1}}, "cuda: JE-IRT batch pair 0 uses row 1 of 1"},
		{backend.JEIRTBatch{X: make([]float32, 3), Item: []int32{0}, Row: []int32{0}, Model: []int32{2}, Label: []float32{1}}, "cuda: JE-IRT batch pair 0 has model 2 of 2"},
		{backend.JEIRTBatch{X: make([]float32, 3), Item: []int32{0}, Mask: make([]float32, 3), Row: []int32{0}, Model: []int32{0}, Label: []float32{1}}, "cuda: JE-IRT batch has a dropout mask of 3 values for 1 rows x 4 hidden units"},
	} {
		if _, err := s.Step(&c.b, 0.1); err == nil || err.Error() != c.want {
			t.Errorf("err = %v, want %s", err, c.want)
		}
	}
}

// TestLaunchLimitsAtFullSize runs the launch code at the largest shapes the
// commands use, on a dry device that checks every launch against sm_90's
// limits: JE-IRT steps at EmbedLLM size (768-d inputs, hidden 1,536, d 256,
// 112 models, 36,054 items with residuals, 512-pair batches) and their
// validation.
func TestLaunchLimitsAtFullSize(t *testing.T) {
	d := harness.NewDry()
	const D, H, dim, N, J, U = 768, 1536, 256, 112, 36054, 512
	p := &backend.JEIRTParams{InputDim: D, Hidden: H, Dim: dim, NumModels: N, NumItems: J, ResidualL2: 0.01,
		W1: make([]float32, H*D), C1: make([]float32, H), W2: make([]float32, dim*H), C2: make([]float32, dim),
		M: make([]float32, N*dim), R: make([]float32, J*dim)}
	s, err := newStepper(d, p, backend.AdamW{})
	if err != nil {
		t.Fatal(err)
	}
	b := &backend.JEIRTBatch{X: make([]float32, U*D), Item: make([]int32, U), Mask: make([]float32, U*H),
		Row: make([]int32, U), Model: make([]int32, U), Label: make([]float32, U)}
	for u := range U {
		b.Item[u], b.Row[u], b.Model[u] = int32(u*70), int32(u), int32(u%N)
	}
	if _, err := s.Step(b, 1e-3); err != nil {
		t.Fatal(err)
	}
	// Validation: every item's question embedding and 10% of the cells.
	var cells backend.JEIRTCells
	for k := range N * J / 10 {
		cells.Item, cells.Model, cells.Label = append(cells.Item, int32(k%J)), append(cells.Model, int32(k%N)), append(cells.Label, 1)
	}
	if err := gpu.FirstErr(s.SetFeatures(make([]float32, J*D)), s.SetEvalCells([]backend.JEIRTCells{cells})); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Evaluate(nil, nil); err != nil {
		t.Fatal(err)
	}
	for _, name := range kernels.JEIRT.Names {
		if name == "sgemm" {
			continue // the text encoder's
		}
		g, ok := d.Largest(name)
		if !ok {
			t.Errorf("kernel %s was not launched", name)
		}
		t.Logf("%-16s largest grid %d x %d, block %d", name, g[0], g[1], g[2])
	}
}

// TestHarnessJEIRTDeterministic runs the same JE-IRT steps twice, with the
// CUDA threads as fibers and as OS threads (another schedule): the
// parameters must be bit-identical, as every gradient sum has one writer
// adding its terms in the batch's order (no float atomics).
func TestHarnessJEIRTDeterministic(t *testing.T) {
	const D, H, dim, N, J, U, B = 16, 32, 8, 4, 10, 8, 24
	rng := rand.New(rand.NewPCG(5, 9))
	params := func() *backend.JEIRTParams { return smallParams(D, H, dim, N, J) }
	var batches []*backend.JEIRTBatch
	for range 3 {
		b := &backend.JEIRTBatch{X: make([]float32, U*D), Item: make([]int32, U), Mask: make([]float32, U*H),
			Row: make([]int32, B), Model: make([]int32, B), Label: make([]float32, B)}
		for i := range b.X {
			b.X[i] = float32(rng.NormFloat64())
		}
		for i := range b.Mask {
			if rng.Float64() < 0.8 {
				b.Mask[i] = 1.25
			}
		}
		for u := range U {
			b.Item[u] = int32(rng.IntN(J)) // items may repeat across rows
		}
		for k := range B {
			b.Row[k], b.Model[k], b.Label[k] = int32(rng.IntN(U)), int32(rng.IntN(N)), float32(rng.IntN(2))
		}
		batches = append(batches, b)
	}
	run := func(mode harness.Mode) []float32 {
		defer harness.UseMode(mode)()
		s, err := newStepper(harness.NewGPU(), params(), backend.AdamW{WeightDecay: 0.01})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var out []float32
		for _, b := range batches {
			loss, err := s.Step(b, 1e-2)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, float32(loss))
		}
		for _, x := range s.Params().Slices() {
			out = append(out, x...)
		}
		return out
	}
	f, th := run(harness.Fibers), run(harness.Threads)
	for i := range f {
		if math.Float32bits(f[i]) != math.Float32bits(th[i]) {
			t.Fatalf("value %d: fibers %v, threads %v: not bit-identical", i, f[i], th[i])
		}
	}
}

// TestHarnessJEIRTEpochDeterministic runs two epochs of a schedule with
// dropout through Epoch (the masks drawn on the device), with the CUDA
// threads as fibers, again as fibers, and as OS threads (another schedule),
// and through Step with the masks drawn on the host
// (backend.JEIRTSchedule.Batch): the losses and parameters must be
// bit-identical every time.
func TestHarnessJEIRTEpochDeterministic(t *testing.T) {
	const D, H, dim, N, J = 16, 32, 8, 4, 10
	rng := rand.New(rand.NewPCG(3, 4))
	params := func() *backend.JEIRTParams { return smallParams(D, H, dim, N, J) }
	feats := make([]float32, J*D)
	for i := range feats {
		feats[i] = float32(rng.NormFloat64())
	}
	sc := &backend.JEIRTSchedule{RowStart: []int{0}, PairStart: []int{0}, Dropout: backend.JEIRTDropout{P: 0.3, Seed: 11}}
	for _, st := range [][2]int{{8, 24}, {3, 3}, {70, 90}} { // rows, pairs; 70 rows take two row tiles
		U, B := st[0], st[1]
		for range U {
			sc.Item = append(sc.Item, int32(rng.IntN(J))) // items repeat across rows
		}
		for range B {
			sc.Row = append(sc.Row, int32(rng.IntN(U)))
			sc.Model = append(sc.Model, int32(rng.IntN(N)))
			sc.Label = append(sc.Label, float32(rng.IntN(2)))
		}
		sc.RowStart = append(sc.RowStart, len(sc.Item))
		sc.PairStart = append(sc.PairStart, len(sc.Row))
	}
	run := func(mode harness.Mode, epochs bool) []float32 {
		defer harness.UseMode(mode)()
		s, err := newStepper(harness.NewGPU(), params(), backend.AdamW{WeightDecay: 0.01})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := s.SetFeatures(feats); err != nil {
			t.Fatal(err)
		}
		var out []float32
		sc := *sc
		var b *backend.JEIRTBatch
		for e := range 2 {
			sc.FirstStep = int64(e * sc.Steps())
			if epochs {
				loss, err := s.Epoch(t.Context(), &sc, 1e-2, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, l := range loss {
					out = append(out, float32(l))
				}
				continue
			}
			for k := range sc.Steps() {
				b = sc.Batch(k, feats, D, H, b)
				l, err := s.Step(b, 1e-2)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, float32(l))
			}
		}
		for _, x := range s.Params().Slices() {
			out = append(out, x...)
		}
		return out
	}
	want := run(harness.Fibers, true)
	for _, c := range []struct {
		what   string
		mode   harness.Mode
		epochs bool
	}{{"Epoch, fibers again", harness.Fibers, true}, {"Epoch, OS threads", harness.Threads, true}, {"Step with host masks", harness.Fibers, false}} {
		got := run(c.mode, c.epochs)
		for i := range want {
			if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
				t.Fatalf("%s: value %d is %v, first run %v: not bit-identical", c.what, i, got[i], want[i])
			}
		}
	}
}

// TestHarnessJEIRTEvaluate scores cell sets on the device (Evaluate) and on
// the host (model.JEIRT's question embeddings plus the residual, model.Logit,
// the same loss and accuracy as train/jeirt's validation).
func TestHarnessJEIRTEvaluate(t *testing.T) {
	const D, H, dim, N, J = 16, 32, 8, 4, 10
	rng := rand.New(rand.NewPCG(8, 9))
	fill := func(n int, s float64) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * s)
		}
		return x
	}
	p := &backend.JEIRTParams{InputDim: D, Hidden: H, Dim: dim, NumModels: N, NumItems: J, ResidualL2: 0.01,
		W1: fill(H*D, 0.3), C1: fill(H, 0.3), W2: fill(dim*H, 0.3), C2: fill(dim, 0.3), M: fill(N*dim, 1), R: fill(J*dim, 0.1)}
	feats := fill(J*D, 1)
	var sets []backend.JEIRTCells
	for _, n := range []int{300, 0, 5} { // 300 cells: 38 blocks of 8 warps
		var c backend.JEIRTCells
		for range n {
			c.Item = append(c.Item, int32(rng.IntN(J)))
			c.Model = append(c.Model, int32(rng.IntN(N)))
			c.Label = append(c.Label, float32(rng.IntN(2)))
		}
		sets = append(sets, c)
	}
	s, err := newStepper(harness.NewGPU(), p.Clone(), backend.AdamW{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := gpu.FirstErr(s.SetFeatures(feats), s.SetEvalCells(sets)); err != nil {
		t.Fatal(err)
	}
	loss, acc, err := s.Evaluate(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := &model.JEIRT{InputDim: D, Hidden: H, Dim: dim, W1: p.W1, C1: p.C1, W2: p.W2, C2: p.C2}
	q := m.QuestionEmbeddings(feats, J)
	for k := range q {
		q[k] += p.R[k]
	}
	for k, c := range sets {
		if len(c.Item) == 0 {
			if !math.IsNaN(loss[k]) || !math.IsNaN(acc[k]) {
				t.Errorf("set %d (empty): loss %v, accuracy %v; want NaN", k, loss[k], acc[k])
			}
			continue
		}
		var wantLoss, right float64
		near := 0 // cells whose logit is too close to 0 for the accuracy to be sure
		for i := range c.Item {
			j, mi := int(c.Item[i]), int(c.Model[i])
			z := model.Logit(q[j*dim:(j+1)*dim], p.M[mi*dim:(mi+1)*dim])
			y := float64(c.Label[i])
			wantLoss += model.BCE(z, y)
			if (z >= 0) == (y == 1) {
				right++
			}
			if math.Abs(z) < 1e-5 {
				near++
			}
		}
		n := float64(len(c.Item))
		wantLoss, right = wantLoss/n, right/n
		if rel := math.Abs(loss[k]-wantLoss) / wantLoss; !(rel < 1e-6) {
			t.Errorf("set %d: loss %.10g on the device, %.10g on the host (relative %.2g)", k, loss[k], wantLoss, rel)
		}
		if math.Abs(acc[k]-right)*n > float64(near) {
			t.Errorf("set %d: accuracy %v on the device, %v on the host", k, acc[k], right)
		}
		t.Logf("set %d, %d cells: loss %.10g device, %.10g host; accuracy %.4f device, %.4f host", k, len(c.Item), loss[k], wantLoss, acc[k], right)
	}
}
