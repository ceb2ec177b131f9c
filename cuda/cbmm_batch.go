package cuda

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/jeirt/jeirt/train/backend"
)

// cbmmBackend is batched cBMM on a GPU (backend.CBMM): per iteration,
// cbmm_item_pass_rR (loss, surrogate and item block) over the items of every
// active problem, cbmm_sum_loss, and cbmm_model_pass_rR (θ block) over their
// models, one kernel of each per rank R. Every block is solved on the device
// (closed forms at rank 1, the CPU fitter's small non-negative least squares
// and Cholesky solves at rank r). A batch is also a backend.CBMMIterator: the
// fit's decisions (convergence, the safeguarded extrapolation) run on the
// device too, in cbmm_sum_decide and cbmm_extrapolate, so that an
// accelerated iteration is four launches and one copy down of nine bytes per
// problem (the loss and the outcome), and the parameters cross PCIe only in
// the first Set and the last Get.
type cbmmBackend struct {
	device string              // registered name: "cuda"
	open   func() (gpu, error) // the device, opened on first use
}

func (c cbmmBackend) Name() string { return c.device }

// Available reports why the backend cannot run, or nil.
func (c cbmmBackend) Available() error { _, err := c.open(); return err }

func (c cbmmBackend) Load(problems []*backend.CBMMProblem, rank int, sigma float64, threads int) (backend.CBMMBatch, error) {
	for k, p := range problems {
		if p.Weighted() { // the kernels fit 0/1 answers (train/irt sends the others to the CPU)
			return nil, fmt.Errorf("problem %d has cells of several trials or graded scores: the CUDA backend fits 0/1 answers only", k)
		}
	}
	l, err := newCBMMLayout(problems, rank)
	if err != nil {
		return nil, err
	}
	g, err := c.open()
	if err != nil {
		return nil, err
	}
	b := &cbmmBatch{g: g, l: l, sigma: sigma, bufs: &buffers{g: g},
		itemThreads:  blockThreads(int64(len(l.Cells)), l.Jt),
		modelThreads: blockThreads(int64(len(l.Cells)), l.Nt),
		activeHost:   make([]uint8, l.K), lossHost: make([]float64, l.K), reportHost: make([]uint8, 9*l.K)}
	r := rank
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
		b.dMTheta = m.alloc("theta (MM point)", l.Nt*r, 8)
		b.dMA = m.alloc("A (MM point)", l.Jt*r, 8)
		b.dMB = m.alloc("b (MM point)", l.Jt, 8)
		b.dPTheta = m.alloc("theta (step start)", l.Nt*r, 8)
		b.dPA = m.alloc("A (step start)", l.Jt*r, 8)
		b.dPB = m.alloc("b (step start)", l.Jt, 8)
		b.dCtl = m.alloc("control states", l.K*ctlWords, 8)
		// The losses (K doubles) and then the outcomes (K bytes): what the
		// host reads after an iteration, in one copy.
		b.dLoss = m.alloc("losses and outcomes", 9*l.K, 1)
		if m.err != nil {
			return m.err
		}
		ctl := make([]float64, 0, l.K*ctlWords)
		for range l.K {
			s := backend.NewCBMMControl()
			ctl = append(ctl, s.Last, s.Beta, s.StepBeta, 0, 0)
		}
		// Parameters start at zero until Set.
		return firstErr(g.htod(b.dCells, l.Cells), g.htod(b.dItemStart, l.ItemStart), g.htod(b.dItemProb, l.ItemProb),
			g.htod(b.dItemBase, l.ItemBase), g.htod(b.dModelStart, l.ModelStart), g.htod(b.dModelCell, l.ModelCell),
			g.htod(b.dModelItem, l.ModelItem), g.htod(b.dModelProb, l.ModelProb),
			g.htod(b.dCtl, ctl),
			g.memset0(b.dTheta, int64(2*l.Nt*r)), g.memset0(b.dA, int64(2*l.Jt*r)), g.memset0(b.dB, int64(2*l.Jt)))
	})
	if err != nil {
		g.do(b.bufs.free)
		return nil, err
	}
	return b, nil
}

type cbmmBatch struct {
	g     gpu
	l     *cbmmLayout
	sigma float64
	bufs  *buffers

	itemThreads, modelThreads int

	dCells, dItemStart, dItemProb, dItemBase           handle
	dModelStart, dModelCell, dModelItem, dModelProb    handle
	dActive, dTheta, dA, dB, dYTilde, dItemLoss, dLoss handle
	dMTheta, dMA, dMB, dPTheta, dPA, dPB, dCtl         handle // the fit's control (Iterate)

	activeHost []uint8 // the active flags on the device
	activeSent bool    // activeHost is on the device
	lossHost   []float64
	reportHost []uint8 // the losses and outcomes of an Iterate
	err        error   // from Get or Set, which cannot return one
}

// setActive uploads the active flags when they changed since the last upload.
func (b *cbmmBatch) setActive(active []bool) error {
	same := b.activeSent
	for k, a := range active {
		v := uint8(0)
		if a {
			v = 1
		}
		same = same && b.activeHost[k] == v
		b.activeHost[k] = v
	}
	if same {
		return nil
	}
	b.activeSent = false
	if err := b.g.htod(b.dActive, b.activeHost); err != nil {
		return err
	}
	b.activeSent = true
	return nil
}

// itemPass launches cbmm_item_pass_rR (R the rank) and cbmm_sum_loss.
func (b *cbmmBatch) itemPass(update bool) error {
	l := b.l
	if err := b.g.launch(fmt.Sprintf("cbmm_item_pass_r%d", l.Rank), l.Jt, 1, b.itemThreads, b.dCells, b.dItemStart, b.dItemProb, b.dActive,
		b.dTheta, b.dA, b.dB, b.dYTilde, b.dItemLoss, l.Jt, b.sigma, update); err != nil {
		return err
	}
	return b.g.launch("cbmm_sum_loss", l.K, 1, 256, b.dItemLoss, b.dItemBase, b.dActive, b.dLoss, l.K)
}

// modelPass launches cbmm_model_pass_rR over the models of the problems
// whose flag (one byte per problem) has bit 0 set.
func (b *cbmmBatch) modelPass(flags handle) error {
	l := b.l
	return b.g.launch(fmt.Sprintf("cbmm_model_pass_r%d", l.Rank), l.Nt, 1, b.modelThreads, b.dModelStart, b.dModelCell, b.dModelItem, b.dModelProb,
		flags, b.dA, b.dB, b.dYTilde, b.dTheta, l.Nt)
}

// extrapolate launches cbmm_extrapolate over every parameter of the batch:
// the outcomes of the last cbmm_sum_decide, or with only ≥ 0 the return of
// problem only to its kept MM point.
func (b *cbmmBatch) extrapolate(only int) error {
	l := b.l
	n := (l.Nt+l.Jt)*l.Rank + l.Jt
	return b.g.launch("cbmm_extrapolate", blocks(n, 256), 1, 256, b.dModelProb, b.dItemProb, b.dLoss, b.dCtl,
		b.dTheta, b.dA, b.dB, b.dMTheta, b.dMA, b.dMB, b.dPTheta, b.dPA, b.dPB, l.Nt, l.Jt, l.Rank, l.K, true, only)
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
	return b.g.do(func() error {
		if err := b.setActive(active); err != nil {
			return err
		}
		if err := b.itemPass(true); err != nil {
			return err
		}
		if err := b.modelPass(b.dActive); err != nil {
			return err
		}
		return b.readLoss(active, loss)
	})
}

// Iterate is one iteration of the fit on the device (backend.CBMMIterator):
// cbmm_item_pass_rR, cbmm_sum_decide (the loss and the decision of each
// active problem), cbmm_model_pass_rR (for the kept steps only), and with
// acceleration cbmm_extrapolate; then one copy down of the losses and
// outcomes. The active flags go up only when the caller changed them
// otherwise than by the convergence the device saw.
func (b *cbmmBatch) Iterate(ctx context.Context, active []bool, tol float64, accelerate bool, loss []float64, outcome []backend.CBMMOutcome) error {
	if err := b.check(ctx); err != nil {
		return err
	}
	return b.g.do(func() error {
		if err := b.setActive(active); err != nil {
			return err
		}
		l := b.l
		if err := b.g.launch(fmt.Sprintf("cbmm_item_pass_r%d", l.Rank), l.Jt, 1, b.itemThreads, b.dCells, b.dItemStart, b.dItemProb, b.dActive,
			b.dTheta, b.dA, b.dB, b.dYTilde, b.dItemLoss, l.Jt, b.sigma, true); err != nil {
			return err
		}
		if err := b.g.launch("cbmm_sum_decide", l.K, 1, 256, b.dItemLoss, b.dItemBase, b.dActive, b.dCtl, b.dLoss, l.K, tol, accelerate); err != nil {
			return err
		}
		outcomes := b.dLoss + handle(8*l.K)
		if err := b.modelPass(outcomes); err != nil {
			return err
		}
		if accelerate {
			if err := b.extrapolate(-1); err != nil {
				return err
			}
		}
		if err := b.g.dtoh(b.reportHost, b.dLoss); err != nil {
			return err
		}
		for k, a := range active {
			out := backend.CBMMOutcome(b.reportHost[8*l.K+k])
			outcome[k] = out
			if !a {
				continue
			}
			loss[k] = math.Float64frombits(binary.LittleEndian.Uint64(b.reportHost[8*k:]))
			if out == backend.CBMMConverged {
				b.activeHost[k] = 0 // as cbmm_sum_decide left it on the device
			}
		}
		return nil
	})
}

// Revert returns problem k to the MM point it was last extrapolated from
// (backend.CBMMIterator).
func (b *cbmmBatch) Revert(k int) error {
	if b.err != nil {
		return b.err
	}
	return b.g.do(func() error { return b.extrapolate(k) })
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
