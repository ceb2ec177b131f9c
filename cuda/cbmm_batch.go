package cuda

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/jeirt/jeirt/train/backend"
)

// cbmmBackend is batched cBMM on a GPU (backend.CBMM): per iteration,
// cbmm_item_pass (loss, surrogate and item block) over the items of every
// active problem, cbmm_sum_loss, and cbmm_model_pass (θ block) over their
// models. At rank 1 all three blocks are closed forms on the device; at rank
// r the kernels accumulate the small normal equations and the host solves
// them (r+1 unknowns per item, r per model) between the passes.
type cbmmBackend struct {
	device string              // registered name: "cuda"
	open   func() (gpu, error) // the device, opened on first use
}

func (c cbmmBackend) Name() string { return c.device }

// Available reports why the backend cannot run, or nil.
func (c cbmmBackend) Available() error { _, err := c.open(); return err }

func (c cbmmBackend) Load(problems []*backend.CBMMProblem, rank int, sigma float64, threads int) (backend.CBMMBatch, error) {
	l, err := newCBMMLayout(problems, rank)
	if err != nil {
		return nil, err
	}
	g, err := c.open()
	if err != nil {
		return nil, err
	}
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	b := &cbmmBatch{g: g, l: l, sigma: sigma, threads: threads, bufs: &buffers{g: g},
		itemThreads:  blockThreads(int64(len(l.Cells)), l.Jt),
		modelThreads: blockThreads(int64(len(l.Cells)), l.Nt),
		activeHost:   make([]uint8, l.K), lossHost: make([]float64, l.K)}
	r := rank
	if r > 1 {
		b.theta, b.a, b.b = make([]float64, l.Nt*r), make([]float64, l.Jt*r), make([]float64, l.Jt)
		b.itemGHost = make([]float64, l.Jt*itemEntries(r))
		b.modelGHost = make([]float64, l.Nt*modelEntries(r))
	}
	err = g.do(func() error {
		if err := g.checkFree(fmt.Sprintf("a batch of %d cBMM problems (%d cells)", l.K, len(l.Cells)), l.deviceBytes()); err != nil {
			return err
		}
		m := b.bufs
		b.dCells = m.alloc("cells", len(l.Cells), 4)
		b.dItemStart = m.alloc("item offsets", l.Jt+1, 8)
		b.dItemProb = m.alloc("item problems", l.Jt, 4)
		b.dItemBase = m.alloc("problem offsets", l.K+1, 8)
		b.dModelStart = m.alloc("model offsets", l.Nt+1, 8)
		b.dModelCell = m.alloc("model-major cells", len(l.Cells), 4)
		b.dModelItem = m.alloc("model-major items", len(l.Cells), 4)
		b.dModelProb = m.alloc("model problems", l.Nt, 4)
		b.dActive = m.alloc("active flags", l.K, 1)
		b.dTheta = m.alloc("theta", l.Nt*r, 8)
		b.dA = m.alloc("A", l.Jt*r, 8)
		b.dB = m.alloc("b", l.Jt, 8)
		b.dYTilde = m.alloc("surrogate targets", len(l.Cells), 8)
		b.dItemLoss = m.alloc("item losses", l.Jt, 8)
		b.dLoss = m.alloc("losses", l.K, 8)
		if r > 1 {
			b.dItemG = m.alloc("item normal equations", len(b.itemGHost), 8)
			b.dModelG = m.alloc("model normal equations", len(b.modelGHost), 8)
		}
		if m.err != nil {
			return m.err
		}
		// Parameters start at zero until Set.
		return firstErr(g.htod(b.dCells, l.Cells), g.htod(b.dItemStart, l.ItemStart), g.htod(b.dItemProb, l.ItemProb),
			g.htod(b.dItemBase, l.ItemBase), g.htod(b.dModelStart, l.ModelStart), g.htod(b.dModelCell, l.ModelCell),
			g.htod(b.dModelItem, l.ModelItem), g.htod(b.dModelProb, l.ModelProb),
			g.memset0(b.dTheta, int64(2*l.Nt*r)), g.memset0(b.dA, int64(2*l.Jt*r)), g.memset0(b.dB, int64(2*l.Jt)))
	})
	if err != nil {
		g.do(b.bufs.free)
		return nil, err
	}
	return b, nil
}

type cbmmBatch struct {
	g       gpu
	l       *cbmmLayout
	sigma   float64
	threads int
	bufs    *buffers

	itemThreads, modelThreads int

	dCells, dItemStart, dItemProb, dItemBase           handle
	dModelStart, dModelCell, dModelItem, dModelProb    handle
	dActive, dTheta, dA, dB, dYTilde, dItemLoss, dLoss handle
	dItemG, dModelG                                    handle

	activeHost            []uint8
	lossHost              []float64
	theta, a, b           []float64 // rank > 1: the host's copy, which the solves update
	itemGHost, modelGHost []float64
	err                   error // from Get or Set, which cannot return one
}

func (b *cbmmBatch) setActive(active []bool) error {
	for k, a := range active {
		b.activeHost[k] = 0
		if a {
			b.activeHost[k] = 1
		}
	}
	return b.g.htod(b.dActive, b.activeHost)
}

// itemPass launches cbmm_item_pass and cbmm_sum_loss.
func (b *cbmmBatch) itemPass(update bool) error {
	l := b.l
	if err := b.g.launch("cbmm_item_pass", l.Jt, 1, b.itemThreads, b.dCells, b.dItemStart, b.dItemProb, b.dActive,
		b.dTheta, b.dA, b.dB, b.dYTilde, b.dItemLoss, b.dItemG, l.Jt, l.Rank, b.sigma, update); err != nil {
		return err
	}
	return b.g.launch("cbmm_sum_loss", l.K, 1, 256, b.dItemLoss, b.dItemBase, b.dActive, b.dLoss, l.K)
}

func (b *cbmmBatch) modelPass() error {
	l := b.l
	return b.g.launch("cbmm_model_pass", l.Nt, 1, b.modelThreads, b.dModelStart, b.dModelCell, b.dModelItem, b.dModelProb,
		b.dActive, b.dA, b.dB, b.dYTilde, b.dTheta, b.dModelG, l.Nt, l.Rank)
}

func (b *cbmmBatch) readLoss(active []bool, loss []float64) error {
	if err := b.g.dtoh(b.lossHost, b.dLoss); err != nil {
		return err
	}
	for k, a := range active {
		if a {
			loss[k] = b.lossHost[k]
		}
	}
	return nil
}

func (b *cbmmBatch) check(ctx context.Context) error {
	if b.err != nil {
		return b.err
	}
	return ctx.Err()
}

func (b *cbmmBatch) Loss(ctx context.Context, active []bool, loss []float64) error {
	if err := b.check(ctx); err != nil {
		return err
	}
	return b.g.do(func() error {
		if err := b.setActive(active); err != nil {
			return err
		}
		if err := b.itemPass(false); err != nil {
			return err
		}
		return b.readLoss(active, loss)
	})
}

func (b *cbmmBatch) Step(ctx context.Context, active []bool, loss []float64) error {
	if err := b.check(ctx); err != nil {
		return err
	}
	l, r := b.l, b.l.Rank
	err := b.g.do(func() error {
		if err := b.setActive(active); err != nil {
			return err
		}
		if err := b.itemPass(true); err != nil {
			return err
		}
		if r == 1 {
			if err := b.modelPass(); err != nil {
				return err
			}
			return b.readLoss(active, loss)
		}
		if err := b.readLoss(active, loss); err != nil {
			return err
		}
		return b.g.dtoh(b.itemGHost, b.dItemG)
	})
	if err != nil || r == 1 {
		return err
	}
	// Rank r: the host solves the item blocks, the device accumulates the θ
	// blocks with the new (A, b), the host solves them.
	if err != nil {
		return err
	}
	E := itemEntries(r)
	b.parallel(l.Jt, func(s *hostSolver, g int) {
		if active[l.ItemProb[g]] && l.ItemStart[g+1] > l.ItemStart[g] {
			s.solveItem(b.itemGHost[g*E:(g+1)*E], b.a[g*r:g*r+r], &b.b[g])
		}
	})
	if err := ctx.Err(); err != nil {
		return err
	}
	err = b.g.do(func() error {
		if err := firstErr(b.g.htod(b.dA, b.a), b.g.htod(b.dB, b.b)); err != nil {
			return err
		}
		if err := b.modelPass(); err != nil {
			return err
		}
		return b.g.dtoh(b.modelGHost, b.dModelG)
	})
	if err != nil {
		return err
	}
	E = modelEntries(r)
	b.parallel(l.Nt, func(s *hostSolver, i int) {
		if active[l.ModelProb[i]] {
			s.solveModel(b.modelGHost[i*E:(i+1)*E], b.theta[i*r:i*r+r])
		}
	})
	return b.g.do(func() error { return b.g.htod(b.dTheta, b.theta) })
}

// parallel runs fn(s, 0..n-1) on the batch's threads, each with its own solver.
func (b *cbmmBatch) parallel(n int, fn func(s *hostSolver, i int)) {
	w := min(b.threads, max(1, n/256))
	var wg sync.WaitGroup
	chunk := (n + w - 1) / w
	for lo := 0; lo < n; lo += chunk {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			s := newHostSolver(b.l.Rank)
			for i := lo; i < hi; i++ {
				fn(s, i)
			}
		}(lo, min(lo+chunk, n))
	}
	wg.Wait()
}

// ranges returns the element ranges of problem k's θ, A and b.
func (b *cbmmBatch) ranges(k int) (t0, t1, a0, a1, b0, b1 int64) {
	l, r := b.l, int64(b.l.Rank)
	return l.ModelBase[k] * r, l.ModelBase[k+1] * r, l.ItemBase[k] * r, l.ItemBase[k+1] * r, l.ItemBase[k], l.ItemBase[k+1]
}

// Get copies problem k's parameters out. A device error (which Get cannot
// return) fills them with NaN and is returned by the next Step, Loss or Close.
func (b *cbmmBatch) Get(k int, theta, a, bb []float64) {
	t0, t1, a0, a1, b0, b1 := b.ranges(k)
	if b.l.Rank > 1 {
		copy(theta, b.theta[t0:t1])
		copy(a, b.a[a0:a1])
		copy(bb, b.b[b0:b1])
		return
	}
	err := b.g.do(func() error {
		return firstErr(b.g.dtoh(theta[:t1-t0], b.dTheta+handle(8*t0)),
			b.g.dtoh(a[:a1-a0], b.dA+handle(8*a0)), b.g.dtoh(bb[:b1-b0], b.dB+handle(8*b0)))
	})
	if err != nil {
		for _, s := range [][]float64{theta, a, bb} {
			for i := range s {
				s[i] = math.NaN()
			}
		}
		b.fail(err)
	}
}

// Set copies problem k's parameters in (a device error is returned by the
// next Step, Loss or Close).
func (b *cbmmBatch) Set(k int, theta, a, bb []float64) {
	t0, t1, a0, a1, b0, b1 := b.ranges(k)
	if b.l.Rank > 1 {
		copy(b.theta[t0:t1], theta)
		copy(b.a[a0:a1], a)
		copy(b.b[b0:b1], bb)
	}
	b.fail(b.g.do(func() error {
		return firstErr(b.g.htod(b.dTheta+handle(8*t0), theta[:t1-t0]),
			b.g.htod(b.dA+handle(8*a0), a[:a1-a0]), b.g.htod(b.dB+handle(8*b0), bb[:b1-b0]))
	}))
}

func (b *cbmmBatch) fail(err error) {
	if err != nil && b.err == nil {
		b.err = err
	}
}

func (b *cbmmBatch) Close() error {
	err := b.g.do(b.bufs.free)
	if b.err != nil {
		return b.err
	}
	return err
}
