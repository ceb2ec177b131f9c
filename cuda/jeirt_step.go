package cuda

import (
	"fmt"
	"math"
	"runtime"

	"github.com/jeirt/jeirt/train/backend"
)

// jeirtStepper is the JE-IRT training step on a GPU (train.JEIRTStepper):
// the parameters, their gradients and AdamW's moments stay on the device;
// each step uploads the batch, runs the adapter and link forward and backward
// (sgemm for the adapter's matrix products) and the AdamW update, and reads
// back only the per-pair losses.
type jeirtStepper struct {
	g   gpu
	p   *backend.JEIRTParams // host copy, current when !stale
	opt backend.AdamW
	t   int

	stale bool
	err   error

	bufs                *buffers
	param, grad, mo, ve []handle // per parameter array, in Slices order, in one buffer each
	sizes               []int
	total               int // the buffers' length in floats

	// Batch buffers, grown as needed.
	batch                             *buffers
	rowsCap, pairsCap                 int
	dX, dItem, dMask, dCoef           handle
	dRow, dModel, dLabel              handle
	dInts                             handle  // every index array of a batch, one upload
	ints                              []int32 // their host staging
	dA, dH, dQ, dGQ, dGH, dLoss, dPen handle
	dCoefM                            handle
	// The batch's index lists, for the fixed-order gradient sums.
	dRowStart, dRowPairs, dModelStart, dModelPairs handle
	dItemOf, dItemStart, dItemRows                 handle
	lists                                          jeirtLists
	lossHost, penHost                              []float64
	coef                                           []float32
}

// jeirtLists are a batch's index lists (CSR), so that every gradient sum has
// one writer adding its terms in the batch's order: the pairs of each row,
// the pairs of each model, and the rows of each item of the batch (its slots,
// in order of first appearance) with the residual weight of each slot.
type jeirtLists struct {
	rowStart, rowPairs     []int32 // U+1, B
	modelStart, modelPairs []int32 // NumModels+1, B
	itemOf, itemStart      []int32 // slots, slots+1
	itemRows               []int32 // U
	slotCoef               []float32
	slot                   map[int32]int32
}

// csr fills start (n+1) and list with the indices 0..len(key)-1 grouped by
// key, each group in increasing order.
func csr(key []int32, n int, start, list []int32) ([]int32, []int32) {
	start = append(start[:0], make([]int32, n+1)...)
	for _, k := range key {
		start[k+1]++
	}
	for i := range n {
		start[i+1] += start[i]
	}
	list = append(list[:0], make([]int32, len(key))...)
	next := append([]int32(nil), start[:n]...)
	for i, k := range key {
		list[next[k]] = int32(i)
		next[k]++
	}
	return start, list
}

// build makes the lists of batch b; coef is residualCoef's per-row weights
// (nil without residuals).
func (l *jeirtLists) build(b *backend.JEIRTBatch, numModels int, coef []float32) {
	U := b.Rows()
	l.rowStart, l.rowPairs = csr(b.Row, U, l.rowStart, l.rowPairs)
	l.modelStart, l.modelPairs = csr(b.Model, numModels, l.modelStart, l.modelPairs)
	if coef == nil {
		return
	}
	if l.slot == nil {
		l.slot = map[int32]int32{}
	}
	clear(l.slot)
	l.itemOf, l.slotCoef = l.itemOf[:0], l.slotCoef[:0]
	slotOfRow := make([]int32, U)
	for u, j := range b.Item {
		s, ok := l.slot[j]
		if !ok {
			s = int32(len(l.itemOf))
			l.slot[j] = s
			l.itemOf = append(l.itemOf, j)
			l.slotCoef = append(l.slotCoef, coef[u])
		}
		slotOfRow[u] = s
	}
	l.itemStart, l.itemRows = csr(slotOfRow, len(l.itemOf), l.itemStart, l.itemRows)
}

// Parameter indices in JEIRTParams.Slices order.
const (
	pW1 = iota
	pC1
	pW2
	pC2
	pM
	pR
)

// jeirtBackend returns a backend.JEIRT on the device open returns.
func jeirtBackend(open func() (gpu, error)) backend.JEIRT {
	return func(p *backend.JEIRTParams, opt backend.AdamW) (backend.JEIRTStepper, error) {
		g, err := open()
		if err != nil {
			return nil, err
		}
		return newJEIRTStepper(g, p, opt)
	}
}

func newJEIRTStepper(g gpu, p *backend.JEIRTParams, opt backend.AdamW) (*jeirtStepper, error) {
	if opt.Beta1 == 0 {
		opt.Beta1 = 0.9
	}
	if opt.Beta2 == 0 {
		opt.Beta2 = 0.999
	}
	if opt.Eps == 0 {
		opt.Eps = 1e-8
	}
	s := &jeirtStepper{g: g, p: p, opt: opt, bufs: &buffers{g: g}, batch: &buffers{g: g}}
	err := g.do(func() error {
		// One contiguous buffer each for the parameters, gradients and
		// AdamW moments (every array starting on a 256-byte boundary, the
		// padding zero), so that one adamw launch updates them all.
		var offs []int
		n := 0
		for _, x := range p.Slices() {
			offs = append(offs, n)
			n += (len(x) + 63) &^ 63
		}
		s.total = n
		if err := g.checkFree("the JE-IRT parameters, gradients and AdamW moments", 4*4*int64(n)); err != nil {
			return err
		}
		var base [4]handle
		for i, what := range []string{"parameters", "gradients", "AdamW m", "AdamW v"} {
			base[i] = s.bufs.alloc("the JE-IRT "+what, n, 4)
		}
		if s.bufs.err != nil {
			return s.bufs.err
		}
		for _, h := range base {
			if err := g.memset0(h, int64(n)); err != nil {
				return err
			}
		}
		for k, x := range p.Slices() {
			off := handle(4 * offs[k])
			s.param = append(s.param, base[0]+off)
			s.grad = append(s.grad, base[1]+off)
			s.mo = append(s.mo, base[2]+off)
			s.ve = append(s.ve, base[3]+off)
			s.sizes = append(s.sizes, len(x))
			if err := g.htod(s.param[k], x); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		g.do(s.bufs.free)
		return nil, err
	}
	// train.JEIRTStepper has no Close: free the device memory when the
	// stepper is garbage (Close frees it at once; freeing twice is a no-op).
	runtime.AddCleanup(s, func(b [2]*buffers) {
		g.do(func() error { return firstErr(b[0].free(), b[1].free()) })
	}, [2]*buffers{s.bufs, s.batch})
	return s, nil
}

// grow makes the batch buffers hold U rows and B pairs; inside do.
func (s *jeirtStepper) grow(U, B int) error {
	if U <= s.rowsCap && B <= s.pairsCap {
		return nil
	}
	if err := s.batch.free(); err != nil {
		return err
	}
	U, B = max(U, s.rowsCap), max(B, s.pairsCap)
	p, m := s.p, s.batch
	s.dX = m.alloc("batch encoder vectors", U*p.InputDim, 4)
	s.dInts = m.alloc("batch indices", 5*U+4*B+p.NumModels+3, 4)
	s.dMask = m.alloc("dropout mask", U*p.Hidden, 4)
	s.dCoef = m.alloc("residual weights", U, 4)
	s.dLabel = m.alloc("pair labels", B, 4)
	s.dA = m.alloc("adapter pre-activations", U*p.Hidden, 4)
	s.dH = m.alloc("adapter activations", U*p.Hidden, 4)
	s.dQ = m.alloc("question embeddings", U*p.Dim, 4)
	s.dGQ = m.alloc("question embedding gradients", U*p.Dim, 4)
	s.dGH = m.alloc("activation gradients", U*p.Hidden, 4)
	s.dLoss = m.alloc("pair losses", B, 8)
	s.dPen = m.alloc("residual penalties", U, 8)
	s.dCoefM = m.alloc("pair model-gradient factors", B, 4)
	if m.err != nil {
		err := m.err
		m.free()
		s.rowsCap, s.pairsCap = 0, 0
		return err
	}
	s.rowsCap, s.pairsCap = U, B
	return nil
}

// gemm launches sgemm: C (M x N) = op(A)·op(B) + beta·C.
func (s *jeirtStepper) gemm(A, B, C handle, M, N, K int, transA, transB bool, beta float64) error {
	return s.g.launch("sgemm", blocks(N, 64), blocks(M, 64), 256, A, B, C, M, N, K, transA, transB, 1.0, beta)
}

// check validates a batch against the parameters' shapes.
func (s *jeirtStepper) check(b *backend.JEIRTBatch) error {
	p := s.p
	U, B := b.Rows(), len(b.Row)
	switch {
	case B == 0 || U == 0:
		return fmt.Errorf("cuda: JE-IRT batch has %d rows and %d pairs", U, B)
	case U > 64*maxGridY || 32*int64(max(U, B)) > 256*maxGridX:
		// sgemm's grid has a row of 64-row tiles in y; the link kernels a
		// warp per row or pair.
		return fmt.Errorf("cuda: JE-IRT batch has %d rows and %d pairs, over the %d rows a GPU step takes; use smaller batches", U, B, 64*maxGridY)
	case len(b.X) != U*p.InputDim:
		return fmt.Errorf("cuda: JE-IRT batch has %d encoder values for %d rows of dimension %d", len(b.X), U, p.InputDim)
	case b.Mask != nil && len(b.Mask) != U*p.Hidden:
		return fmt.Errorf("cuda: JE-IRT batch has a dropout mask of %d values for %d rows x %d hidden units", len(b.Mask), U, p.Hidden)
	case len(b.Model) != B || len(b.Label) != B:
		return fmt.Errorf("cuda: JE-IRT batch has %d pairs but %d models and %d labels", B, len(b.Model), len(b.Label))
	}
	for k, u := range b.Row {
		if u < 0 || int(u) >= U {
			return fmt.Errorf("cuda: JE-IRT batch pair %d uses row %d of %d", k, u, U)
		}
		if m := b.Model[k]; m < 0 || int(m) >= p.NumModels {
			return fmt.Errorf("cuda: JE-IRT batch pair %d has model %d of %d", k, m, p.NumModels)
		}
	}
	if p.R != nil {
		for u, j := range b.Item {
			if j < 0 || int(j) >= p.NumItems {
				return fmt.Errorf("cuda: JE-IRT batch row %d has item %d of %d", u, j, p.NumItems)
			}
		}
	}
	return nil
}

func (s *jeirtStepper) Step(b *backend.JEIRTBatch, lr float64) (float64, error) {
	if s.err != nil {
		return 0, s.err
	}
	if err := s.check(b); err != nil {
		return 0, err
	}
	p := s.p
	U, B := b.Rows(), len(b.Row)
	D, H, d := p.InputDim, p.Hidden, p.Dim
	residual := p.R != nil
	var rowCoef []float32
	if residual {
		s.coef = residualCoef(b, p.ResidualL2, s.coef)
		rowCoef = s.coef
	}
	ls := &s.lists
	ls.build(b, p.NumModels, rowCoef)
	slots := len(ls.itemOf)
	s.lossHost = grow64(s.lossHost, B)
	s.penHost = grow64(s.penHost, slots)
	g := s.g
	err := g.do(func() error {
		if err := s.grow(U, B); err != nil {
			return err
		}
		mask := handle(0)
		if b.Mask != nil {
			mask = s.dMask
		}
		// The index arrays go up in one copy, each at its offset in dInts.
		s.ints = s.ints[:0]
		for _, x := range []struct {
			h   *handle
			src []int32
		}{{&s.dItem, b.Item}, {&s.dRow, b.Row}, {&s.dModel, b.Model}, {&s.dRowStart, ls.rowStart},
			{&s.dRowPairs, ls.rowPairs}, {&s.dModelStart, ls.modelStart}, {&s.dModelPairs, ls.modelPairs},
			{&s.dItemOf, ls.itemOf}, {&s.dItemStart, ls.itemStart}, {&s.dItemRows, ls.itemRows}} {
			*x.h = s.dInts + handle(4*len(s.ints))
			s.ints = append(s.ints, x.src...)
		}
		if err := firstErr(g.htod(s.dX, b.X), g.htod(s.dInts, s.ints), g.htod(s.dLabel, b.Label), g.htod(s.dMask, b.Mask)); err != nil {
			return err
		}
		if residual {
			if err := g.htod(s.dCoef, ls.slotCoef); err != nil {
				return err
			}
		}
		W1, C1, W2, C2, M := s.param[pW1], s.param[pC1], s.param[pW2], s.param[pC2], s.param[pM]
		for _, f := range []func() error{
			// Adapter forward: a = x·W1ᵀ + c1, h = dropout(relu(a)), q = h·W2ᵀ + c2 (+ r_j).
			func() error { return g.launch("set_rows", blocks(U*H, 256), 1, 256, s.dA, C1, U, H) },
			func() error { return s.gemm(s.dX, W1, s.dA, U, H, D, false, true, 1) },
			func() error { return g.launch("relu_mask", blocks(U*H, 256), 1, 256, s.dA, mask, s.dH, U*H) },
			func() error { return g.launch("set_rows", blocks(U*d, 256), 1, 256, s.dQ, C2, U, d) },
			func() error { return s.gemm(s.dH, W2, s.dQ, U, d, H, false, true, 1) },
			func() error {
				if !residual {
					return nil
				}
				return g.launch("add_rows", blocks(U*d, 256), 1, 256, s.dQ, s.param[pR], s.dItem, U, d)
			},
			// The residual rows outside the batch have no gradient.
			func() error {
				if !residual {
					return nil
				}
				return g.memset0(s.grad[pR], int64(s.sizes[pR]))
			},
			// Link and loss and ∂/∂q, one warp per row; ∂/∂m, one warp per
			// model; ∂/∂r, one warp per item: fixed-order sums, no atomics.
			func() error {
				return g.launch("pair_link", blocks(32*U, 256), 1, 256, s.dQ, M, s.dRowStart, s.dRowPairs, s.dModel, s.dLabel, s.dLoss, s.dCoefM, s.dGQ, U, d, 1/float64(B))
			},
			func() error {
				return g.launch("model_grad", blocks(32*p.NumModels, 256), 1, 256, s.dQ, s.dRow, s.dModelStart, s.dModelPairs, s.dCoefM, s.grad[pM], p.NumModels, d)
			},
			func() error {
				if !residual {
					return nil
				}
				return g.launch("residual_grad", blocks(32*slots, 256), 1, 256, s.dGQ, s.param[pR], s.dItemOf, s.dItemStart, s.dItemRows, s.dCoef, s.grad[pR], s.dPen, slots, d)
			},
			// Adapter backward.
			func() error { return g.launch("col_sum", blocks(d, 128), 1, 128, s.dGQ, s.grad[pC2], U, d) },
			func() error { return s.gemm(s.dGQ, s.dH, s.grad[pW2], d, H, U, true, false, 0) },
			func() error { return s.gemm(s.dGQ, W2, s.dGH, U, H, d, false, false, 0) },
			func() error { return g.launch("relu_back", blocks(U*H, 256), 1, 256, s.dA, mask, s.dGH, U*H) },
			func() error { return g.launch("col_sum", blocks(H, 128), 1, 128, s.dGH, s.grad[pC1], U, H) },
			func() error { return s.gemm(s.dGH, s.dX, s.grad[pW1], H, D, U, true, false, 0) },
			func() error { return g.dtoh(s.lossHost, s.dLoss) },
			func() error {
				if !residual {
					return nil
				}
				return g.dtoh(s.penHost, s.dPen)
			},
		} {
			if err := f(); err != nil {
				return err
			}
		}
		// AdamW on every parameter array at once, with PyTorch's bias
		// corrections (the padding between the arrays stays zero).
		t := s.t + 1
		bc1 := 1 - math.Pow(s.opt.Beta1, float64(t))
		bc2 := 1 - math.Pow(s.opt.Beta2, float64(t))
		if err := g.launch("adamw", blocks(s.total, 256), 1, 256, s.param[0], s.grad[0], s.mo[0], s.ve[0], s.total,
			1-lr*s.opt.WeightDecay, s.opt.Beta1, s.opt.Beta2, lr/bc1, 1/math.Sqrt(bc2), s.opt.Eps); err != nil {
			return err
		}
		s.t = t
		return nil
	})
	if err != nil {
		s.err = err
		return 0, err
	}
	s.stale = true
	var loss float64
	for _, l := range s.lossHost {
		loss += l
	}
	loss /= float64(B)
	if residual {
		for _, l := range s.penHost {
			loss += l
		}
	}
	return loss, nil
}

func grow64(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

// Params copies the parameters back to host memory when a step changed them.
// A device error (which Params cannot return) fills them with NaN and is
// returned by the next Step.
func (s *jeirtStepper) Params() *backend.JEIRTParams {
	if !s.stale {
		return s.p
	}
	err := s.g.do(func() error {
		for k, x := range s.p.Slices() {
			if err := s.g.dtoh(x, s.param[k]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		for _, x := range s.p.Slices() {
			for i := range x {
				x[i] = float32(math.NaN())
			}
		}
		if s.err == nil {
			s.err = err
		}
		return s.p
	}
	s.stale = false
	return s.p
}

// Close frees the device buffers now.
func (s *jeirtStepper) Close() error {
	return s.g.do(func() error { return firstErr(s.batch.free(), s.bufs.free()) })
}
