package cuda

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"

	"github.com/jeirt/jeirt/train/backend"
)

// jeirtStepper is the JE-IRT training step on a GPU (backend.JEIRTStepper
// and backend.JEIRTEpochStepper): the parameters, their gradients and
// AdamW's moments stay on the device, in one contiguous buffer each. Epoch
// runs a whole epoch with the items' encoder vectors uploaded once
// (SetFeatures), the epoch's index lists in two copies up, six launches a
// step (kernels/jeirt.cu: the dropout masks drawn on the device) and one
// copy down of the steps' losses at the end: no synchronisation inside the
// epoch. Step runs one batch the same way, its vectors and mask uploaded with
// it.
type jeirtStepper struct {
	g   gpu
	p   *backend.JEIRTParams // host copy, current when !stale
	opt backend.AdamW
	t   int

	stale bool
	err   error

	bufs                *buffers
	param, grad, mo, ve []handle  // per parameter array, in Slices order, in one buffer each
	sizes, offs         []int     // each array's length and offset in floats
	total               int       // the buffers' length in floats
	all                 []float32 // Params' staging for the whole parameter buffer

	// The items' encoder vectors (SetFeatures).
	feats *buffers
	dF    handle
	nF    int

	// The schedule's index lists and floats, and the step's work buffers,
	// grown as needed.
	sched                  *buffers
	intsCap, floatsCap     int
	dInts, dFloats         handle
	work                   *buffers
	caps                   jeirtCaps
	dX, dMask              handle // Step's batch vectors and mask
	dH, dQ, dGQ, dGH       handle
	dLoss, dPen, dStepLoss handle
	dCoefM                 handle

	plan     jeirtPlan
	lossHost []float64

	// Validation (SetEvalCells): the identity 0..NumItems-1 and the sets'
	// items and models in one buffer, their labels in another, the question
	// embeddings of every item, a chunk of adapter activations, the block
	// sums and the results.
	eval                            *buffers
	evalSets                        []jeirtEvalSet
	dEvalInts, dEvalLabel, dQAll    handle
	dHChunk, dEvalPart, dEvalResult handle
	evalChunk                       int
	evalHost                        []float64
}

// jeirtEvalSet is a cell set of SetEvalCells: its offsets in the eval
// buffers (items and models in ints, labels in floats) and its size.
type jeirtEvalSet struct{ item, model, label, n int }

// jeirtCaps are the largest step a set of work buffers holds.
type jeirtCaps struct{ rows, pairs, slots, steps, x, mask int }

func (c jeirtCaps) holds(n jeirtCaps) bool {
	return n.rows <= c.rows && n.pairs <= c.pairs && n.slots <= c.slots && n.steps <= c.steps && n.x <= c.x && n.mask <= c.mask
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
func jeirtBackend(open func() (gpu, error)) backend.NewJEIRTStepper {
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
	s := &jeirtStepper{g: g, p: p, opt: opt, bufs: &buffers{g: g}, feats: &buffers{g: g}, sched: &buffers{g: g}, work: &buffers{g: g}, eval: &buffers{g: g}}
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
			s.offs = append(s.offs, offs[k])
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
	// backend.JEIRTStepper has no Close: free the device memory when the
	// stepper is garbage (Close frees it at once; freeing twice is a no-op).
	runtime.AddCleanup(s, func(b [5]*buffers) {
		g.do(func() error { return firstErr(b[0].free(), b[1].free(), b[2].free(), b[3].free(), b[4].free()) })
	}, [5]*buffers{s.bufs, s.feats, s.sched, s.work, s.eval})
	return s, nil
}

// jeirtStepPlan is one step of a jeirtPlan: its sizes, the offsets (in
// words) of its lists in the plan's ints and floats, and its dropout key.
type jeirtStepPlan struct {
	U, B, slots                 int
	xRow, item, row, model      int
	rowStart, rowPairs          int // CSR: the pairs of each row
	modelStart, modelPairs      int // the pairs of each model
	itemOf, itemStart, itemRows int // the batch's item slots and the rows of each
	label, coef                 int // in floats
	key                         uint64
}

// jeirtPlan is what the device needs of a schedule: every step's index
// lists (so that every gradient sum has one writer adding its terms in the
// batch's order: the pairs of each row, the pairs of each model, the rows of
// each item slot, slots in order of first appearance) in one int32 array and
// the labels and residual weights in one float32 array, each uploaded in one
// copy.
type jeirtPlan struct {
	ints   []int32
	floats []float32
	steps  []jeirtStepPlan
	need   jeirtCaps

	slot  map[int32]int32
	count []int32
	next  []int32
}

func (pl *jeirtPlan) reset() {
	pl.ints, pl.floats, pl.steps, pl.need = pl.ints[:0], pl.floats[:0], pl.steps[:0], jeirtCaps{}
}

// appendCSR appends to pl.ints the indices 0..len(key)-1 grouped by key (n
// groups) as CSR: n+1 starts, then the list, each group in increasing order.
// It returns the offsets of the starts and of the list.
func (pl *jeirtPlan) appendCSR(key []int32, n int) (start, list int) {
	start = len(pl.ints)
	pl.ints = append(pl.ints, make([]int32, n+1+len(key))...)
	st := pl.ints[start : start+n+1]
	for _, k := range key {
		st[k+1]++
	}
	for i := range n {
		st[i+1] += st[i]
	}
	list = start + n + 1
	l := pl.ints[list : list+len(key)]
	pl.next = append(pl.next[:0], st[:n]...)
	for i, k := range key {
		l[pl.next[k]] = int32(i)
		pl.next[k]++
	}
	return start, list
}

// add appends a step: its rows' items, the rows of the encoder vectors they
// use (nil: the item's own), its pairs, the residual's λ (when p.R is on)
// and its dropout key. The indices must have been checked.
func (pl *jeirtPlan) add(p *backend.JEIRTParams, item, xRow, row, model []int32, label []float32, key uint64) {
	U, B := len(item), len(row)
	st := jeirtStepPlan{U: U, B: B, key: key}
	st.item = len(pl.ints)
	pl.ints = append(pl.ints, item...)
	st.xRow = st.item
	if xRow != nil {
		st.xRow = len(pl.ints)
		pl.ints = append(pl.ints, xRow...)
	}
	st.row = len(pl.ints)
	pl.ints = append(pl.ints, row...)
	st.model = len(pl.ints)
	pl.ints = append(pl.ints, model...)
	st.rowStart, st.rowPairs = pl.appendCSR(row, U)
	st.modelStart, st.modelPairs = pl.appendCSR(model, p.NumModels)
	st.label = len(pl.floats)
	pl.floats = append(pl.floats, label...)
	if p.R != nil {
		// Item slots in order of first appearance, each weighted λ·pairs_j/B
		// (residualCoef's weights).
		if pl.slot == nil {
			pl.slot = map[int32]int32{}
		}
		clear(pl.slot)
		st.itemOf = len(pl.ints)
		for _, j := range item {
			if _, ok := pl.slot[j]; !ok {
				pl.slot[j] = int32(len(pl.slot))
				pl.ints = append(pl.ints, j)
			}
		}
		st.slots = len(pl.slot)
		slotOfRow := make([]int32, U)
		for u, j := range item {
			slotOfRow[u] = pl.slot[j]
		}
		st.itemStart, st.itemRows = pl.appendCSR(slotOfRow, st.slots)
		pl.count = append(pl.count[:0], make([]int32, st.slots)...)
		for _, u := range row {
			pl.count[slotOfRow[u]]++
		}
		st.coef = len(pl.floats)
		invB := 1 / float64(B)
		for _, c := range pl.count {
			pl.floats = append(pl.floats, float32(p.ResidualL2*float64(c)*invB))
		}
	}
	pl.steps = append(pl.steps, st)
	pl.need.rows, pl.need.pairs = max(pl.need.rows, U), max(pl.need.pairs, B)
	pl.need.slots, pl.need.steps = max(pl.need.slots, st.slots), len(pl.steps)
}

// checkPairs validates a step's indices against the parameters' shapes (its
// items too when items); the messages name the pair or row.
func (s *jeirtStepper) checkPairs(item, row, model []int32, label []float32, items bool) error {
	p := s.p
	U, B := len(item), len(row)
	switch {
	case B == 0 || U == 0:
		return fmt.Errorf("batch has %d rows and %d pairs", U, B)
	case U > 64*maxGridY || 32*int64(max(U, B)) > 256*maxGridX:
		// The adapter kernels have a row of 64-row tiles in y; the link
		// kernel a warp per row.
		return fmt.Errorf("batch has %d rows and %d pairs, over the %d rows a GPU step takes; use smaller batches", U, B, 64*maxGridY)
	case len(model) != B || len(label) != B:
		return fmt.Errorf("batch has %d pairs but %d models and %d labels", B, len(model), len(label))
	}
	for k, u := range row {
		if u < 0 || int(u) >= U {
			return fmt.Errorf("batch pair %d uses row %d of %d", k, u, U)
		}
		if m := model[k]; m < 0 || int(m) >= p.NumModels {
			return fmt.Errorf("batch pair %d has model %d of %d", k, m, p.NumModels)
		}
	}
	for u, j := range item {
		if !items {
			break
		}
		if j < 0 || int(j) >= p.NumItems {
			return fmt.Errorf("batch row %d has item %d of %d", u, j, p.NumItems)
		}
	}
	return nil
}

// grow makes the schedule and work buffers hold the plan (and a Step's
// vectors and mask); inside do.
func (s *jeirtStepper) grow() error {
	pl, p := &s.plan, s.p
	if len(pl.ints) > s.intsCap || len(pl.floats) > s.floatsCap {
		if err := s.sched.free(); err != nil {
			return err
		}
		s.intsCap, s.floatsCap = max(len(pl.ints), s.intsCap), max(len(pl.floats), s.floatsCap)
		s.dInts = s.sched.alloc("the JE-IRT schedule's index lists", s.intsCap, 4)
		s.dFloats = s.sched.alloc("the JE-IRT schedule's labels and residual weights", max(s.floatsCap, 1), 4)
		if err := s.sched.err; err != nil {
			s.sched.free()
			s.intsCap, s.floatsCap = 0, 0
			return err
		}
	}
	if s.caps.holds(pl.need) {
		return nil
	}
	if err := s.work.free(); err != nil {
		return err
	}
	c := s.caps
	n := pl.need
	c = jeirtCaps{max(c.rows, n.rows), max(c.pairs, n.pairs), max(c.slots, n.slots, 1), max(c.steps, n.steps), max(c.x, n.x, 1), max(c.mask, n.mask, 1)}
	U, B, m := c.rows, c.pairs, s.work
	s.dX = m.alloc("batch encoder vectors", c.x, 4)
	s.dMask = m.alloc("dropout mask", c.mask, 4)
	s.dH = m.alloc("adapter activations", U*p.Hidden, 4)
	s.dQ = m.alloc("question embeddings", U*p.Dim, 4)
	s.dGQ = m.alloc("question embedding gradients", U*p.Dim, 4)
	s.dGH = m.alloc("activation gradients", U*p.Hidden, 4)
	s.dLoss = m.alloc("pair losses", B, 8)
	s.dPen = m.alloc("residual penalties", c.slots, 8)
	s.dCoefM = m.alloc("pair model-gradient factors", B, 4)
	s.dStepLoss = m.alloc("step losses", c.steps, 8)
	if m.err != nil {
		err := m.err
		m.free()
		s.caps = jeirtCaps{}
		return err
	}
	s.caps = c
	return nil
}

// dropoutArgs are jeirt_fwd1's keep24 and scale and jeirt_bwd1's hscale for
// d (no dropout when P is 0).
func dropoutArgs(d backend.JEIRTDropout) (keep24 int, scale, hscale float64) {
	if d.P == 0 {
		return 1 << 24, 1, 1
	}
	sc := float64(d.Scale())
	return int(d.Keep24()), sc, sc
}

// runStep launches step k of the plan (its loss to stepLoss[k]) and its AdamW
// update at learning rate lr, with the encoder vectors F and the uploaded
// mask (0: drop with the hash of the step's key); inside do.
func (s *jeirtStepper) runStep(k int, F, mask handle, drop backend.JEIRTDropout, lr float64) error {
	g, p, st := s.g, s.p, &s.plan.steps[k]
	in := func(off int) handle { return s.dInts + handle(4*off) }
	fl := func(off int) handle { return s.dFloats + handle(4*off) }
	U, B := st.U, st.B
	D, H, d, N := p.InputDim, p.Hidden, p.Dim, p.NumModels
	keep24, scale, hscale := dropoutArgs(drop)
	W1, C1, W2, C2, M := s.param[pW1], s.param[pC1], s.param[pW2], s.param[pC2], s.param[pM]
	var R, gR, coef, pen handle
	if p.R != nil {
		R, gR, coef, pen = s.param[pR], s.grad[pR], fl(st.coef), s.dPen
	}
	hTiles := blocks(H, 64)
	bwd1 := hTiles*blocks(d, 64) + hTiles*blocks(U, 64) + blocks(d, 32) + blocks(N, 8)
	if p.R != nil {
		bwd1 += blocks(st.slots, 8)
	}
	t := s.t + 1
	bc1 := 1 - math.Pow(s.opt.Beta1, float64(t))
	bc2 := 1 - math.Pow(s.opt.Beta2, float64(t))
	for _, l := range []struct {
		name   string
		gx, gy int
		args   []any
	}{
		{"jeirt_fwd1", hTiles, blocks(U, 64), []any{F, in(st.xRow), W1, C1, mask, s.dH, U, D, H, int(st.key), keep24, scale}},
		{"jeirt_fwd2", blocks(d, 64), blocks(U, 64), []any{s.dH, W2, C2, R, in(st.item), s.dQ, U, H, d}},
		{"pair_link", blocks(32*U, 256), 1, []any{s.dQ, M, in(st.rowStart), in(st.rowPairs), in(st.model), fl(st.label),
			s.dLoss, s.dCoefM, s.dGQ, U, d, 1 / float64(B)}},
		{"jeirt_bwd1", bwd1, 1, []any{s.dGQ, s.dH, W2, mask, hscale, s.grad[pW2], s.dGH, s.grad[pC2], s.dQ,
			in(st.row), in(st.modelStart), in(st.modelPairs), s.dCoefM, s.grad[pM],
			R, in(st.itemOf), in(st.itemStart), in(st.itemRows), coef, gR, pen, U, H, d, N, st.slots}},
		{"jeirt_bwd2", blocks(D, 64)*blocks(H, 64) + blocks(H, 32) + 1, 1, []any{s.dGH, F, in(st.xRow), s.grad[pW1], s.grad[pC1],
			s.dLoss, pen, s.dStepLoss + handle(8*k), U, D, H, B, st.slots}},
		// AdamW on every parameter array at once, with PyTorch's bias
		// corrections (the padding between the arrays stays zero).
		{"adamw", blocks(s.total, 256), 1, []any{s.param[0], s.grad[0], s.mo[0], s.ve[0], s.total,
			1 - lr*s.opt.WeightDecay, s.opt.Beta1, s.opt.Beta2, lr / bc1, 1 / math.Sqrt(bc2), s.opt.Eps}},
	} {
		if err := g.launch(l.name, l.gx, l.gy, 256, l.args...); err != nil {
			return err
		}
	}
	s.t = t
	return nil
}

// Step runs one batch: its vectors, index lists and mask go up (four
// copies), six launches, its loss comes down.
func (s *jeirtStepper) Step(b *backend.JEIRTBatch, lr float64) (float64, error) {
	if s.err != nil {
		return 0, s.err
	}
	if b.Weight != nil {
		return 0, errors.New("cuda: the JE-IRT step fits 0/1 answers; cells of several trials or graded scores train on the CPU (device cpu or cpu:fused)")
	}
	p := s.p
	U := b.Rows()
	if err := s.checkPairs(b.Item, b.Row, b.Model, b.Label, p.R != nil); err != nil {
		return 0, fmt.Errorf("cuda: JE-IRT %w", err)
	}
	switch {
	case len(b.X) != U*p.InputDim:
		return 0, fmt.Errorf("cuda: JE-IRT batch has %d encoder values for %d rows of dimension %d", len(b.X), U, p.InputDim)
	case b.Mask != nil && len(b.Mask) != U*p.Hidden:
		return 0, fmt.Errorf("cuda: JE-IRT batch has a dropout mask of %d values for %d rows x %d hidden units", len(b.Mask), U, p.Hidden)
	}
	pl := &s.plan
	pl.reset()
	xRow := make([]int32, U)
	for u := range xRow {
		xRow[u] = int32(u)
	}
	pl.add(p, b.Item, xRow, b.Row, b.Model, b.Label, 0)
	pl.need.x, pl.need.mask = len(b.X), len(b.Mask)
	s.lossHost = grow64(s.lossHost, 1)
	g := s.g
	err := g.do(func() error {
		if err := s.grow(); err != nil {
			return err
		}
		mask := handle(0)
		if b.Mask != nil {
			mask = s.dMask
		}
		if err := firstErr(g.htod(s.dX, b.X), g.htod(s.dInts, pl.ints), g.htod(s.dFloats, pl.floats), g.htod(s.dMask, b.Mask)); err != nil {
			return err
		}
		if err := s.runStep(0, s.dX, mask, backend.JEIRTDropout{}, lr); err != nil {
			return err
		}
		return g.dtoh(s.lossHost, s.dStepLoss)
	})
	if err != nil {
		s.err = err
		return 0, err
	}
	s.stale = true
	return s.lossHost[0], nil
}

// SetFeatures uploads every item's encoder vector, for Epoch.
func (s *jeirtStepper) SetFeatures(features []float32) error {
	p := s.p
	if len(features) != p.NumItems*p.InputDim {
		return fmt.Errorf("cuda: JE-IRT features have %d values for %d items of dimension %d", len(features), p.NumItems, p.InputDim)
	}
	return s.g.do(func() error {
		if s.nF != len(features) {
			if err := s.feats.free(); err != nil {
				return err
			}
			s.nF = 0
			if err := s.g.checkFree("the items' encoder vectors", 4*int64(len(features))); err != nil {
				return err
			}
			s.dF = s.feats.alloc("the items' encoder vectors", max(len(features), 1), 4)
			if s.feats.err != nil {
				return s.feats.err
			}
			s.nF = len(features)
		}
		return s.g.htod(s.dF, features)
	})
}

// Epoch runs the schedule's steps: two copies up, six launches a step, one
// copy down (the steps' losses).
func (s *jeirtStepper) Epoch(ctx context.Context, sc *backend.JEIRTSchedule, lr float64, loss []float64) ([]float64, error) {
	if s.err != nil {
		return loss[:0], s.err
	}
	if sc.Weight != nil {
		return loss[:0], errors.New("cuda: the JE-IRT step fits 0/1 answers; cells of several trials or graded scores train on the CPU (device cpu or cpu:fused)")
	}
	p := s.p
	if s.nF == 0 {
		return loss[:0], fmt.Errorf("cuda: JE-IRT epoch before SetFeatures")
	}
	n := sc.Steps()
	if len(sc.RowStart) != n+1 || len(sc.PairStart) != n+1 || sc.RowStart[n] != len(sc.Item) || sc.PairStart[n] != len(sc.Row) ||
		len(sc.Model) != len(sc.Row) || len(sc.Label) != len(sc.Row) {
		return loss[:0], fmt.Errorf("cuda: JE-IRT schedule of %d steps has %d row and %d pair starts for %d rows and %d pairs, %d models and %d labels",
			n, len(sc.RowStart), len(sc.PairStart), len(sc.Item), len(sc.Row), len(sc.Model), len(sc.Label))
	}
	pl := &s.plan
	pl.reset()
	for k := range n {
		r0, r1, p0, p1 := sc.RowStart[k], sc.RowStart[k+1], sc.PairStart[k], sc.PairStart[k+1]
		if r0 > r1 || p0 > p1 {
			return loss[:0], fmt.Errorf("cuda: JE-IRT schedule step %d has rows %d to %d and pairs %d to %d", k, r0, r1, p0, p1)
		}
		item, row, model, label := sc.Item[r0:r1], sc.Row[p0:p1], sc.Model[p0:p1], sc.Label[p0:p1]
		if err := s.checkPairs(item, row, model, label, true); err != nil {
			return loss[:0], fmt.Errorf("cuda: JE-IRT schedule step %d: %w", k, err)
		}
		pl.add(p, item, nil, row, model, label, sc.Dropout.StepKey(sc.FirstStep+int64(k)))
	}
	if n == 0 {
		return loss[:0], nil
	}
	g := s.g
	ran := 0
	err := g.do(func() error {
		if err := s.grow(); err != nil {
			return err
		}
		if err := firstErr(g.htod(s.dInts, pl.ints), g.htod(s.dFloats, pl.floats)); err != nil {
			return err
		}
		for k := range n {
			if ctx.Err() != nil {
				break
			}
			if err := s.runStep(k, s.dF, 0, sc.Dropout, lr); err != nil {
				return err
			}
			ran++
		}
		if ran == 0 {
			return nil
		}
		s.lossHost = grow64(s.lossHost, ran)
		return g.dtoh(s.lossHost, s.dStepLoss)
	})
	if ran > 0 {
		s.stale = true
	}
	if err != nil {
		s.err = err
		return loss[:0], err
	}
	loss = append(loss[:0], s.lossHost[:ran]...)
	return loss, ctx.Err()
}

// SetEvalCells uploads the cell sets Evaluate scores, in two copies.
func (s *jeirtStepper) SetEvalCells(sets []backend.JEIRTCells) error {
	for _, c := range sets {
		if c.Weight != nil {
			return errors.New("cuda: the JE-IRT step fits 0/1 answers; cells of several trials or graded scores train on the CPU (device cpu or cpu:fused)")
		}
	}
	p := s.p
	J := p.NumItems
	ints := make([]int32, J, J+64)
	for j := range ints {
		ints[j] = int32(j)
	}
	var labels []float32
	var evs []jeirtEvalSet
	most := 1
	for k, c := range sets {
		n := len(c.Item)
		if len(c.Model) != n || len(c.Label) != n {
			return fmt.Errorf("cuda: JE-IRT evaluation set %d has %d items, %d models and %d labels", k, n, len(c.Model), len(c.Label))
		}
		for i := range n {
			if j, m := c.Item[i], c.Model[i]; j < 0 || int(j) >= J || m < 0 || int(m) >= p.NumModels {
				return fmt.Errorf("cuda: JE-IRT evaluation set %d cell %d has item %d of %d and model %d of %d", k, i, j, J, m, p.NumModels)
			}
		}
		evs = append(evs, jeirtEvalSet{item: len(ints), model: len(ints) + n, label: len(labels), n: n})
		ints = append(append(ints, c.Item...), c.Model...)
		labels = append(labels, c.Label...)
		most = max(most, blocks(n, 8))
	}
	return s.g.do(func() error {
		if err := s.eval.free(); err != nil {
			return err
		}
		s.evalSets = nil
		s.evalChunk = max(min(J, 8192), 1)
		m := s.eval
		s.dEvalInts = m.alloc("the evaluation cells' items and models", len(ints), 4)
		s.dEvalLabel = m.alloc("the evaluation cells' labels", max(len(labels), 1), 4)
		s.dQAll = m.alloc("every item's question embedding", max(J*p.Dim, 1), 4)
		s.dHChunk = m.alloc("the evaluation's adapter activations", s.evalChunk*p.Hidden, 4)
		s.dEvalPart = m.alloc("the evaluation's block sums", 2*most, 8)
		s.dEvalResult = m.alloc("the evaluation's results", max(2*len(evs), 1), 8)
		if m.err != nil {
			err := m.err
			m.free()
			return err
		}
		if err := firstErr(s.g.htod(s.dEvalInts, ints), s.g.htod(s.dEvalLabel, labels)); err != nil {
			return err
		}
		s.evalSets = evs
		return nil
	})
}

// Evaluate computes every item's question embedding (two launches per 8,192
// items), scores each set of SetEvalCells (two launches) and reads the
// results in one copy.
func (s *jeirtStepper) Evaluate(loss, acc []float64) ([]float64, []float64, error) {
	loss, acc = loss[:0], acc[:0]
	if s.err != nil {
		return loss, acc, s.err
	}
	if s.nF == 0 || s.evalSets == nil {
		return loss, acc, fmt.Errorf("cuda: JE-IRT evaluation before SetFeatures and SetEvalCells")
	}
	p, g := s.p, s.g
	D, H, d, J := p.InputDim, p.Hidden, p.Dim, p.NumItems
	var R handle
	if p.R != nil {
		R = s.param[pR]
	}
	s.evalHost = grow64(s.evalHost, 2*len(s.evalSets))
	err := g.do(func() error {
		for r0 := 0; r0 < J; r0 += s.evalChunk {
			C := min(s.evalChunk, J-r0)
			ids := s.dEvalInts + handle(4*r0)
			if err := g.launch("jeirt_fwd1", blocks(H, 64), blocks(C, 64), 256, s.dF, ids, s.param[pW1], s.param[pC1], handle(0), s.dHChunk,
				C, D, H, 0, 1<<24, 1.0); err != nil {
				return err
			}
			if err := g.launch("jeirt_fwd2", blocks(d, 64), blocks(C, 64), 256, s.dHChunk, s.param[pW2], s.param[pC2], R, ids,
				s.dQAll+handle(4*r0*d), C, H, d); err != nil {
				return err
			}
		}
		for k, e := range s.evalSets {
			if e.n == 0 {
				continue
			}
			nb := blocks(e.n, 8)
			if err := g.launch("jeirt_eval_cells", nb, 1, 256, s.dQAll, s.param[pM], s.dEvalInts+handle(4*e.item), s.dEvalInts+handle(4*e.model),
				s.dEvalLabel+handle(4*e.label), s.dEvalPart, e.n, d); err != nil {
				return err
			}
			if err := g.launch("jeirt_eval_sum", 1, 1, 256, s.dEvalPart, s.dEvalResult+handle(16*k), nb, e.n); err != nil {
				return err
			}
		}
		return g.dtoh(s.evalHost, s.dEvalResult)
	})
	if err != nil {
		s.err = err
		return loss, acc, err
	}
	for k, e := range s.evalSets {
		if e.n == 0 {
			loss, acc = append(loss, math.NaN()), append(acc, math.NaN())
			continue
		}
		loss, acc = append(loss, s.evalHost[2*k]), append(acc, s.evalHost[2*k+1])
	}
	return loss, acc, nil
}

func grow64(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

// Params copies the parameters back to host memory, in one copy, when a step
// changed them.
// A device error (which Params cannot return) fills them with NaN and is
// returned by the next Step.
func (s *jeirtStepper) Params() *backend.JEIRTParams {
	if !s.stale {
		return s.p
	}
	// One copy of the whole parameter buffer.
	if len(s.all) != s.total {
		s.all = make([]float32, s.total)
	}
	err := s.g.do(func() error { return s.g.dtoh(s.all, s.param[0]) })
	if err == nil {
		for k, x := range s.p.Slices() {
			copy(x, s.all[s.offs[k]:])
		}
	}
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
	return s.g.do(func() error {
		return firstErr(s.eval.free(), s.work.free(), s.sched.free(), s.feats.free(), s.bufs.free())
	})
}
