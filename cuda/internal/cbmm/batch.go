// Package cbmm is batched cBMM on a GPU (backend.CBMMDevice; Qu, Heng, Zeng
// and Liu 2026, arXiv:2605.07046): a batch of problems concatenated for the
// kernels of cuda/kernels/cbmm.cu (the layout), and each iteration's passes,
// decisions and extrapolation run on the device, written against package
// gpu's device interface.
package cbmm

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/jeirt/jeirt/cuda/internal/gpu"
	"github.com/jeirt/jeirt/train/backend"
)

// Backend is batched cBMM on a GPU (backend.CBMMDevice): per iteration,
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
type Backend struct {
	Device string                  // registered name: "cuda"
	Open   func() (gpu.GPU, error) // the device, opened on first use
}

func (c Backend) Name() string { return c.Device }

// Available reports why the backend cannot run, or nil.
func (c Backend) Available() error { _, err := c.Open(); return err }

// Load implements backend.CBMMDevice.
func (c Backend) Load(problems []*backend.CBMMProblem, rank int, sigma float64, threads int) (backend.CBMMBatch, error) {
	for k, p := range problems {
		if p.Weighted() { // the kernels fit 0/1 answers (train/irt sends the others to the CPU)
			return nil, fmt.Errorf("problem %d has cells of several trials or graded scores: the CUDA backend fits 0/1 answers only", k)
		}
	}
	l, err := newLayout(problems, rank)
	if err != nil {
		return nil, err
	}
	g, err := c.Open()
	if err != nil {
		return nil, err
	}
	b := &batch{g: g, l: l, sigma: sigma, bufs: &gpu.Buffers{G: g},
		itemThreads:  blockThreads(int64(len(l.Cells)), l.Jt),
		modelThreads: blockThreads(int64(len(l.Cells)), l.Nt),
		activeHost:   make([]uint8, l.K), lossHost: make([]float64, l.K), reportHost: make([]uint8, 9*l.K)}
	r := rank
	err = g.Do(func() error {
		if err := g.CheckFree(fmt.Sprintf("a batch of %d cBMM problems (%d cells)", l.K, len(l.Cells)), l.deviceBytes()); err != nil {
			return err
		}
		m := b.bufs
		b.dCells = m.Alloc("cells", len(l.Cells), 4)
		b.dItemStart = m.Alloc("item offsets", l.Jt+1, 8)
		b.dItemProb = m.Alloc("item problems", l.Jt, 4)
		b.dItemBase = m.Alloc("problem offsets", l.K+1, 8)
		b.dModelStart = m.Alloc("model offsets", l.Nt+1, 8)
		b.dModelCell = m.Alloc("model-major cells", len(l.Cells), 4)
		b.dModelItem = m.Alloc("model-major items", len(l.Cells), 4)
		b.dModelProb = m.Alloc("model problems", l.Nt, 4)
		b.dActive = m.Alloc("active flags", l.K, 1)
		b.dTheta = m.Alloc("theta", l.Nt*r, 8)
		b.dA = m.Alloc("A", l.Jt*r, 8)
		b.dB = m.Alloc("b", l.Jt, 8)
		b.dYTilde = m.Alloc("surrogate targets", len(l.Cells), 8)
		b.dItemLoss = m.Alloc("item losses", l.Jt, 8)
		b.dMTheta = m.Alloc("theta (MM point)", l.Nt*r, 8)
		b.dMA = m.Alloc("A (MM point)", l.Jt*r, 8)
		b.dMB = m.Alloc("b (MM point)", l.Jt, 8)
		b.dPTheta = m.Alloc("theta (step start)", l.Nt*r, 8)
		b.dPA = m.Alloc("A (step start)", l.Jt*r, 8)
		b.dPB = m.Alloc("b (step start)", l.Jt, 8)
		b.dCtl = m.Alloc("control states", l.K*ctlWords, 8)
		// The losses (K doubles) and then the outcomes (K bytes): what the
		// host reads after an iteration, in one copy.
		b.dLoss = m.Alloc("losses and outcomes", 9*l.K, 1)
		if m.Err != nil {
			return m.Err
		}
		ctl := make([]float64, 0, l.K*ctlWords)
		for range l.K {
			s := backend.NewCBMMControl()
			ctl = append(ctl, s.Last, s.Beta, s.StepBeta, 0, 0)
		}
		// Parameters start at zero until Set.
		return gpu.FirstErr(g.HtoD(b.dCells, l.Cells), g.HtoD(b.dItemStart, l.ItemStart), g.HtoD(b.dItemProb, l.ItemProb),
			g.HtoD(b.dItemBase, l.ItemBase), g.HtoD(b.dModelStart, l.ModelStart), g.HtoD(b.dModelCell, l.ModelCell),
			g.HtoD(b.dModelItem, l.ModelItem), g.HtoD(b.dModelProb, l.ModelProb),
			g.HtoD(b.dCtl, ctl),
			g.Memset0(b.dTheta, int64(2*l.Nt*r)), g.Memset0(b.dA, int64(2*l.Jt*r)), g.Memset0(b.dB, int64(2*l.Jt)))
	})
	if err != nil {
		g.Do(b.bufs.Free)
		return nil, err
	}
	return b, nil
}

type batch struct {
	g     gpu.GPU
	l     *layout
	sigma float64
	bufs  *gpu.Buffers

	itemThreads, modelThreads int

	dCells, dItemStart, dItemProb, dItemBase           gpu.Handle
	dModelStart, dModelCell, dModelItem, dModelProb    gpu.Handle
	dActive, dTheta, dA, dB, dYTilde, dItemLoss, dLoss gpu.Handle
	dMTheta, dMA, dMB, dPTheta, dPA, dPB, dCtl         gpu.Handle // the fit's control (Iterate)

	activeHost []uint8 // the active flags on the device
	activeSent bool    // activeHost is on the device
	lossHost   []float64
	reportHost []uint8 // the losses and outcomes of an Iterate
	err        error   // from Get or Set, which cannot return one
}

// setActive uploads the active flags when they changed since the last upload.
func (b *batch) setActive(active []bool) error {
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
	if err := b.g.HtoD(b.dActive, b.activeHost); err != nil {
		return err
	}
	b.activeSent = true
	return nil
}

// itemPass launches cbmm_item_pass_rR (R the rank) and cbmm_sum_loss.
func (b *batch) itemPass(update bool) error {
	l := b.l
	if err := b.g.Launch(fmt.Sprintf("cbmm_item_pass_r%d", l.Rank), l.Jt, 1, b.itemThreads, b.dCells, b.dItemStart, b.dItemProb, b.dActive,
		b.dTheta, b.dA, b.dB, b.dYTilde, b.dItemLoss, l.Jt, b.sigma, update); err != nil {
		return err
	}
	return b.g.Launch("cbmm_sum_loss", l.K, 1, 256, b.dItemLoss, b.dItemBase, b.dActive, b.dLoss, l.K)
}

// modelPass launches cbmm_model_pass_rR over the models of the problems
// whose flag (one byte per problem) has bit 0 set.
func (b *batch) modelPass(flags gpu.Handle) error {
	l := b.l
	return b.g.Launch(fmt.Sprintf("cbmm_model_pass_r%d", l.Rank), l.Nt, 1, b.modelThreads, b.dModelStart, b.dModelCell, b.dModelItem, b.dModelProb,
		flags, b.dA, b.dB, b.dYTilde, b.dTheta, l.Nt)
}

// extrapolate launches cbmm_extrapolate over every parameter of the batch:
// the outcomes of the last cbmm_sum_decide, or with only ≥ 0 the return of
// problem only to its kept MM point.
func (b *batch) extrapolate(only int) error {
	l := b.l
	n := (l.Nt+l.Jt)*l.Rank + l.Jt
	return b.g.Launch("cbmm_extrapolate", gpu.Blocks(n, 256), 1, 256, b.dModelProb, b.dItemProb, b.dLoss, b.dCtl,
		b.dTheta, b.dA, b.dB, b.dMTheta, b.dMA, b.dMB, b.dPTheta, b.dPA, b.dPB, l.Nt, l.Jt, l.Rank, l.K, true, only)
}

func (b *batch) readLoss(active []bool, loss []float64) error {
	if err := b.g.DtoH(b.lossHost, b.dLoss); err != nil {
		return err
	}
	for k, a := range active {
		if a {
			loss[k] = b.lossHost[k]
		}
	}
	return nil
}

func (b *batch) check(ctx context.Context) error {
	if b.err != nil {
		return b.err
	}
	return ctx.Err()
}

func (b *batch) Loss(ctx context.Context, active []bool, loss []float64) error {
	if err := b.check(ctx); err != nil {
		return err
	}
	return b.g.Do(func() error {
		if err := b.setActive(active); err != nil {
			return err
		}
		if err := b.itemPass(false); err != nil {
			return err
		}
		return b.readLoss(active, loss)
	})
}

func (b *batch) Step(ctx context.Context, active []bool, loss []float64) error {
	if err := b.check(ctx); err != nil {
		return err
	}
	return b.g.Do(func() error {
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
func (b *batch) Iterate(ctx context.Context, active []bool, tol float64, accelerate bool, loss []float64, outcome []backend.CBMMOutcome) error {
	if err := b.check(ctx); err != nil {
		return err
	}
	return b.g.Do(func() error {
		if err := b.setActive(active); err != nil {
			return err
		}
		l := b.l
		if err := b.g.Launch(fmt.Sprintf("cbmm_item_pass_r%d", l.Rank), l.Jt, 1, b.itemThreads, b.dCells, b.dItemStart, b.dItemProb, b.dActive,
			b.dTheta, b.dA, b.dB, b.dYTilde, b.dItemLoss, l.Jt, b.sigma, true); err != nil {
			return err
		}
		if err := b.g.Launch("cbmm_sum_decide", l.K, 1, 256, b.dItemLoss, b.dItemBase, b.dActive, b.dCtl, b.dLoss, l.K, tol, accelerate); err != nil {
			return err
		}
		outcomes := b.dLoss + gpu.Handle(8*l.K)
		if err := b.modelPass(outcomes); err != nil {
			return err
		}
		if accelerate {
			if err := b.extrapolate(-1); err != nil {
				return err
			}
		}
		if err := b.g.DtoH(b.reportHost, b.dLoss); err != nil {
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
func (b *batch) Revert(k int) error {
	if b.err != nil {
		return b.err
	}
	return b.g.Do(func() error { return b.extrapolate(k) })
}

// ranges returns the element ranges of problem k's θ, A and b.
func (b *batch) ranges(k int) (t0, t1, a0, a1, b0, b1 int64) {
	l, r := b.l, int64(b.l.Rank)
	return l.ModelBase[k] * r, l.ModelBase[k+1] * r, l.ItemBase[k] * r, l.ItemBase[k+1] * r, l.ItemBase[k], l.ItemBase[k+1]
}

// Get copies problem k's parameters out. A device error (which Get cannot
// return) fills them with NaN and is returned by the next Step, Loss or Close.
func (b *batch) Get(k int, theta, a, bb []float64) {
	t0, t1, a0, a1, b0, b1 := b.ranges(k)
	err := b.g.Do(func() error {
		return gpu.FirstErr(b.g.DtoH(theta[:t1-t0], b.dTheta+gpu.Handle(8*t0)),
			b.g.DtoH(a[:a1-a0], b.dA+gpu.Handle(8*a0)), b.g.DtoH(bb[:b1-b0], b.dB+gpu.Handle(8*b0)))
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
func (b *batch) Set(k int, theta, a, bb []float64) {
	t0, t1, a0, a1, b0, b1 := b.ranges(k)
	b.fail(b.g.Do(func() error {
		return gpu.FirstErr(b.g.HtoD(b.dTheta+gpu.Handle(8*t0), theta[:t1-t0]),
			b.g.HtoD(b.dA+gpu.Handle(8*a0), a[:a1-a0]), b.g.HtoD(b.dB+gpu.Handle(8*b0), bb[:b1-b0]))
	}))
}

func (b *batch) fail(err error) {
	if err != nil && b.err == nil {
		b.err = err
	}
}

func (b *batch) Close() error {
	err := b.g.Do(b.bufs.Free)
	if b.err != nil {
		return b.err
	}
	return err
}
