//go:build cgo

package cuda

import (
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/backend"
	"github.com/jeirt/jeirt/train/irt"
)

// costGPU counts what the batch and stepper code asks of a device, on a dry
// device (no memory, no kernels): launches, host<->device copies and bytes,
// and device memory. On the cuda build every copy is a blocking call on the
// legacy default stream, so a copy down waits for every queued kernel: the
// copies down are the synchronisations.
type costGPU struct {
	dryGPU
	launchN                      int64
	up, down, upBytes, downBytes int64
	live, peak                   int64
	sizes                        map[handle]int64
	// report, when set, fills what the batch reads back after an Iterate
	// (the losses and outcomes of K problems: 9K bytes) in place of the
	// kernels, which do not run.
	report func(dst []uint8)
}

func newCostGPU() *costGPU {
	return &costGPU{dryGPU: dryGPU{launches: map[string][3]int{}}, sizes: map[handle]int64{}}
}

func (c *costGPU) alloc(what string, n int64) (handle, error) {
	h, err := c.dryGPU.alloc(what, n)
	c.sizes[h] = n
	c.live += n
	c.peak = max(c.peak, c.live)
	return h, err
}

func (c *costGPU) free(h handle) error {
	c.live -= c.sizes[h]
	delete(c.sizes, h)
	return nil
}

func (c *costGPU) htod(_ handle, src any) error {
	if _, n := sliceBytes(src); n > 0 {
		c.up++
		c.upBytes += n
	}
	return nil
}

func (c *costGPU) dtoh(dst any, _ handle) error {
	if _, n := sliceBytes(dst); n > 0 {
		c.down++
		c.downBytes += n
	}
	if b, ok := dst.([]uint8); ok && c.report != nil {
		c.report(b)
	}
	return nil
}

// fakeDecisions stands in for cbmm_sum_decide on the dry device: K
// problems whose losses fall, except every fourth iteration, when an
// extrapolation overshoots and is rejected; the outcomes are
// backend.CBMMControl's (which the kernel matches bit for bit:
// TestHarnessIterate).
func fakeDecisions(K int, tol float64) func([]uint8) {
	ctl := make([]backend.CBMMControl, K)
	for k := range ctl {
		ctl[k] = backend.NewCBMMControl()
	}
	t := 0
	return func(dst []uint8) {
		if len(dst) != 9*K {
			return
		}
		t++
		for k := range K {
			loss := 1e6 * (1 + 1/float64(t))
			if t%4 == 0 {
				loss *= 2
			}
			out := ctl[k].Next(loss, tol, true)
			binary.LittleEndian.PutUint64(dst[8*k:], math.Float64bits(loss))
			dst[8*K+k] = uint8(out)
		}
	}
}

// costDevice is the device of backend "cuda-cost", the batch code on a
// costGPU, for counting whole fits driven by train/irt.
var costDevice *costGPU

func init() {
	backend.Register("cuda-cost", cbmmBackend{device: "cuda-cost", open: func() (gpu, error) { return costDevice, nil }})
}

func (c *costGPU) launch(name string, gridX, gridY, block int, args ...any) error {
	c.launchN++
	return c.dryGPU.launch(name, gridX, gridY, block, args...)
}

type costs struct{ launches, up, down, upBytes, downBytes int64 }

func (c *costGPU) read() costs { return costs{c.launchN, c.up, c.down, c.upBytes, c.downBytes} }

func (a costs) minus(b costs) costs {
	return costs{a.launches - b.launches, a.up - b.up, a.down - b.down, a.upBytes - b.upBytes, a.downBytes - b.downBytes}
}

// TestCosts counts the device work of a cBMM iteration (1,000 models x
// 100,000 items, ranks 1 and 4, one problem and 25 replicates) and of a
// JE-IRT step and epoch at EmbedLLM size, without running the kernels: the
// counts per iteration do not depend on the cells, so the cBMM problem has
// two cells per item, and the device memory is given for the dense matrix
// (10⁸ cells) from the layout's formula. scripts/cuda-cpu-check.sh prints
// the log lines.
func TestCosts(t *testing.T) {
	const models, items = 1000, 100000
	p := &backend.CBMMProblem{N: models, J: items, ItemStart: make([]int32, items+1)}
	for j := range items {
		for e := range 2 {
			p.Cells = append(p.Cells, uint32((j+e)%models)<<1|uint32(e&1))
		}
		p.ItemStart[j+1] = int32(len(p.Cells))
	}
	for _, rank := range []int{1, 4} {
		for _, K := range []int{1, 25} {
			g := newCostGPU()
			probs := make([]*backend.CBMMProblem, K)
			active := make([]bool, K)
			for k := range probs {
				probs[k], active[k] = p, true
			}
			if K > 1 && rank > 1 {
				continue // 25 replicates of 10⁸ cells do not fit; rank 1 shows the per-problem figures
			}
			b, err := cbmmBackend{device: "cost", open: func() (gpu, error) { return g, nil }}.Load(probs, rank, 1, 1)
			if err != nil {
				t.Fatal(err)
			}
			loss := make([]float64, K)
			if err := b.Step(t.Context(), active, loss); err != nil { // the first uploads the active flags
				t.Fatal(err)
			}
			before := g.read()
			const iters = 4
			for range iters {
				if err := b.Step(t.Context(), active, loss); err != nil {
					t.Fatal(err)
				}
			}
			d := g.read().minus(before)
			if d.launches != 3*iters || d.up != 0 || d.down != iters || d.downBytes != int64(8*K*iters) {
				t.Errorf("cBMM rank %d, %d problems: %+v over %d iterations; want 3 launches, no copy up and one copy of %d bytes down each", rank, K, d, iters, 8*K)
			}
			dense := cbmmDeviceBytes(int64(K)*models*items, int64(K)*models, int64(K)*items, int64(K), int64(rank))
			t.Logf("cBMM %d x %d rank %d, %d problem(s): passes per iteration %d launches, %d B up, %d B down (%.1f B per problem), %d synchronisation(s); device memory %s (dense)",
				models, items, rank, K, d.launches/iters, d.upBytes/iters, d.downBytes/iters, float64(d.upBytes+d.downBytes)/iters/float64(K), d.down/iters, mib(dense))
			b.Close()
		}
	}

	// Whole accelerated fits through train/irt at 1,000 x 100,000 (the SVD
	// start on the host, Load, the first Set, the iterations with their
	// extrapolations, rejections and the device's decisions, the final Loss,
	// Revert and Get), on the counting device with the decisions of
	// fakeDecisions: run for 8 and for 16 iterations, the difference is the
	// cost of 8 iterations, the rest the cost of starting and finishing.
	r := &model.Responses{Models: make([]string, models), Items: make([]string, items)}
	for j := range items {
		for e := range 2 {
			r.Model = append(r.Model, int32((j+e)%models))
			r.Item = append(r.Item, int32(j))
			r.Label = append(r.Label, uint8(e&1))
		}
	}
	for _, rank := range []int{1, 4} {
		for _, K := range []int{1, 4} {
			rs := make([]*model.Responses, K)
			for k := range rs {
				rs[k] = r
			}
			fit := func(iters int) costs {
				costDevice = newCostGPU()
				costDevice.report = fakeDecisions(K, 1e-300)
				c := irt.CBMM{Rank: rank, Tol: 1e-300, MaxIter: iters, Accelerate: true, Device: "cuda-cost", Threads: 2}
				out, err := c.FitBatch(context.Background(), rs)
				if err != nil {
					t.Fatal(err)
				}
				if out[0].Iterations != iters-iters/4 {
					t.Fatalf("%d kept steps in %d iterations, want %d", out[0].Iterations, iters, iters-iters/4)
				}
				return costDevice.read()
			}
			short, long := fit(8), fit(16)
			per := long.minus(short)
			once := short.minus(per)
			perProblem := float64(per.upBytes+per.downBytes) / 8 / float64(K)
			if per.launches != 4*8 || per.up != 0 || per.down != 8 || per.downBytes != int64(9*K*8) {
				t.Errorf("accelerated fit, rank %d, %d problems: %+v over 8 iterations; want 4 launches, no copy up and one copy of %d bytes down each", rank, K, per, 9*K)
			}
			if perProblem > 64 || per.launches > 8*8 {
				t.Errorf("accelerated fit, rank %d, %d problems: %.1f B per problem per iteration, %d launches per iteration; want at most 64 and 8", rank, K, perProblem, per.launches/8)
			}
			t.Logf("cBMM whole fit %d x %d rank %d, %d problem(s), accelerated, as train/irt drives it: per iteration %d launches, %d B up, %d B down (%.1f B per problem), %d synchronisation(s); once per fit %d launches, %d copies up (%.1f MiB), %d copies down (%.1f MiB)",
				models, items, rank, K, per.launches/8, per.upBytes/8, per.downBytes/8, perProblem, per.down/8,
				once.launches, once.up, float64(once.upBytes)/(1<<20), once.down, float64(once.downBytes)/(1<<20))
		}
	}

	// JE-IRT at EmbedLLM size: 768-d encoder vectors, hidden 1,536, d 256,
	// 112 models, 36,054 items with residuals, per-pair batches of 512 (one
	// row per pair) with dropout; an epoch is 0.8 x 112 x 36,054 training
	// pairs. Epoch: the encoder vectors went up before (SetFeatures, once
	// per fit), the schedule goes up in two copies, the steps only launch,
	// and the steps' losses come down in one copy at the end.
	const D, H, dim, N, J, U = 768, 1536, 256, 112, 36054, 512
	g := newCostGPU()
	jp := &backend.JEIRTParams{InputDim: D, Hidden: H, Dim: dim, NumModels: N, NumItems: J, ResidualL2: 0.01,
		W1: make([]float32, H*D), C1: make([]float32, H), W2: make([]float32, dim*H), C2: make([]float32, dim),
		M: make([]float32, N*dim), R: make([]float32, J*dim)}
	s, err := newJEIRTStepper(g, jp, backend.AdamW{})
	if err != nil {
		t.Fatal(err)
	}
	before := g.read()
	if err := s.SetFeatures(make([]float32, J*D)); err != nil {
		t.Fatal(err)
	}
	feats := g.read().minus(before)
	rng := rand.New(rand.NewPCG(1, 1))
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
	before = g.read()
	losses, err := s.Epoch(t.Context(), sc, 1e-3, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := g.read().minus(before)
	if int64(len(losses)) != steps || d.launches > 8*steps || d.up != 2 || d.down != 1 || d.downBytes != 8*steps {
		t.Errorf("JE-IRT epoch of %d steps: %+v; want at most 8 launches a step, 2 copies up and 1 copy of %d bytes down", steps, d, 8*steps)
	}
	t.Logf("JE-IRT EmbedLLM epoch (%d pairs, %d steps of %d): %.0f launches per step, %d copies up (%s, the schedule), %d copy down (%d B, the step losses): %d synchronisation, at the end; encoder vectors %d copy up (%s) once per fit; device memory %s",
		pairs, steps, U, float64(d.launches)/float64(steps), d.up, mib(d.upBytes), d.down, d.downBytes, d.down, feats.up, mib(feats.upBytes), mib(g.peak))

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
	before = g.read()
	if err := s.SetEvalCells(sets[:]); err != nil {
		t.Fatal(err)
	}
	setup := g.read().minus(before)
	before = g.read()
	if _, _, err := s.Evaluate(nil, nil); err != nil {
		t.Fatal(err)
	}
	d = g.read().minus(before)
	if d.up != 0 || d.down != 1 {
		t.Errorf("JE-IRT evaluation: %+v; want no copy up and one copy down", d)
	}
	t.Logf("JE-IRT EmbedLLM validation (%d + %d cells): %d launches, %d copies up, %d copy down (%d B) per epoch; the cells %d copies up (%s) once per fit",
		len(sets[0].Item), len(sets[1].Item), d.launches, d.up, d.down, d.downBytes, setup.up, mib(setup.upBytes))

	// A single Step (the API without SetFeatures) uploads its batch.
	jb := &backend.JEIRTBatch{X: make([]float32, U*D), Item: make([]int32, U), Mask: make([]float32, U*H),
		Row: make([]int32, U), Model: make([]int32, U), Label: make([]float32, U)}
	for u := range U {
		jb.Item[u], jb.Row[u], jb.Model[u] = int32(rng.IntN(J)), int32(u), int32(rng.IntN(N))
	}
	before = g.read()
	if _, err := s.Step(jb, 1e-3); err != nil {
		t.Fatal(err)
	}
	d = g.read().minus(before)
	t.Logf("JE-IRT EmbedLLM single Step (%d pairs, batch and mask uploaded): %d launches, %d copies up (%s), %d copy down (%d B)",
		U, d.launches, d.up, mib(d.upBytes), d.down, d.downBytes)
	s.Close()
}

// snapshot reads the harness device's traffic counters.
func (e *hostGPU) snapshot() costs {
	e.mu.Lock()
	defer e.mu.Unlock()
	var n int64
	for _, c := range e.launches {
		n += int64(c)
	}
	return costs{n, e.htodCopies, e.dtohCopies, e.htodBytes, e.dtohBytes}
}
