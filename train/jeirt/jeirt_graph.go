package jeirt

import (
	_ "github.com/jeirt/jeirt/encoder/gblas" // the BLAS of the graphs

	"fmt"
	"hash"
	"hash/fnv"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/jeirt/jeirt/model/simd"
	"github.com/jeirt/jeirt/train/backend"
)

// graphGradient is the JE-IRT loss and gradient as a Gorgonia graph, in
// float32, compiled once per row count of a batch and run again on every
// step (the default CPU step, StepGraph):
//
//	a = x·W1ᵀ + c1,  h = relu(a) ⊙ mask     (linearOp, reluMaskOp: x and the dropout mask are the batch's)
//	q = h·W2ᵀ + c2 (+ R[item])               (linearOp; the residual, when on, by Gorgonia's ByIndices and Add)
//	ℓ = mean over pairs of BCE(σ(q_row·m_model/(‖q_row‖+1e-8) − ‖q_row‖), y)   (linkBCEOp)
//	    (+ λ · Σ_rows w_row ‖R[item_row]‖²)
//
// Gorgonia differentiates the graph (G.Grad applies the chain rule through
// each op's SymDiff), and the forward and backward ops run in Gorgonia's
// topological order (graphRun). The ops are jeirt's own, each one call of what the fused step
// calls (model/simd's Linear and Sgemm, linearBackward, reluMaskBackward,
// the link pass), so that the two steps compute the same bits
// (TestJEIRTGraphMatchesFused) and the graph costs only the dispatch of
// its ops on top. That is what it took to bring the graph to the fused
// step's speed; it was 1.3–1.8 times slower with Gorgonia's own ops and
// tape machine:
//
//   - Gorgonia's elementwise ops (the bias adds, ReLU, the mask and their
//     gradients) allocate their results on every run (the tape machine's
//     Reset drops its memory) and run unvectorised; its MatMul allocates too.
//   - Every parameter's gradient was copied out of the graph for AdamW
//     (every parameter, every step: 2 MB at the EmbedLLM size); now AdamW
//     reads the gradients where the ops wrote them.
//   - The tape machine hands every run to another thread and back (see
//     graphRun).
//   - Batches were padded to a power of two of rows (6 questions ran as 8);
//     now a graph is compiled for each row count met (at most BatchSize of
//     them, a few in practice), cheap because the ops of every graph write
//     into the same buffers (graphState): the graphs run one at a time.
//
// The link and the binary cross-entropy over the batch's pairs are one op:
// as Gorgonia nodes they would be two gathers of B×d rows and a dozen
// elementwise nodes per step, and the model-table gather by pair would need
// a B×d scatter-add in the backward pass. The pairs are not a tensor shape
// (the link op reads them from the batch). The parameter nodes are bound to
// tensors backed by the parameter slices themselves, so that AdamW's update
// in place is what the next run reads.
type graphGradient struct {
	p      *backend.JEIRTParams
	graphs map[int]*jeirtGraph // by row count
	st     *graphState
	grads  [][]float32
}

func newGraphGradient(p *backend.JEIRTParams) *graphGradient {
	return &graphGradient{p: p, graphs: map[int]*jeirtGraph{}, st: &graphState{}}
}

// graphState is what the ops of every compiled graph share: the batch being
// run, and the buffers they write, one per kind of output, grown to the
// most rows met.
type graphState struct {
	b     *backend.JEIRTBatch
	slots [numSlots][]float32
}

// The outputs of the ops: the adapter's forward values, the gradients on
// the way back and the gradients of the parameters.
const (
	slotA = iota
	slotH
	slotQ
	slotGQ
	slotGH
	slotGW1
	slotGC1
	slotGW2
	slotGC2
	slotGM
	numSlots
)

// out is an op's output: a float32 tensor of its shape over one slot of
// the shared buffers, made again only when the slot has grown.
type out struct {
	st    *graphState
	slot  int
	shape []int
	t     *tensor.Dense
}

func (o *out) get() (*tensor.Dense, []float32) {
	n := 1
	for _, s := range o.shape {
		n *= s
	}
	buf := &o.st.slots[o.slot]
	if cap(*buf) < n {
		*buf = make([]float32, n)
	}
	data := (*buf)[:n]
	if o.t == nil || &o.t.Float32s()[0] != &data[0] {
		o.t = tensor.New(tensor.WithShape(o.shape...), tensor.WithBacking(data))
	}
	return o.t, data
}

// jeirtGraph is the compiled graph of one row count.
type jeirtGraph struct {
	g      *G.ExprGraph
	run    *graphRun
	params []*G.Node // W1, c1, W2, c2, M, R (when on), as in JEIRTParams.Slices
	grads  []*G.Node // their gradients
	link   *linkBCEOp
	pen    *G.Node   // λ·penalty, with the residual
	item   []int     // U: residual row of each row
	rowW   []float32 // U: residual penalty weight of each row (pairs on it / B)
}

// graphRun runs a differentiated Gorgonia graph: every node in the
// topological order of G.Sort, each op's Do on its children's values, on
// the calling goroutine. It is Gorgonia's TapeMachine without what the
// JE-IRT step does not use (register reuse, batched cgo calls, the
// watchers): TapeMachine.RunAll locks the calling OS thread and runs the
// tape on a new goroutine, two thread handoffs per run: a fused step behind
// the same handoffs, timed in turn with the plain one on a loaded 2-core VM
// at the EmbedLLM size, was as slow as the graph step (1.09x at its fastest,
// 2x at its median). TestGraphRunMatchesTapeMachine checks graphRun against
// the tape machine.
type graphRun struct {
	nodes []*G.Node
	args  [][]int // the positions in nodes of each node's children, in order
	vals  []G.Value
	at    map[*G.Node]int
	in    []G.Value
}

func newGraphRun(g *G.ExprGraph) (*graphRun, error) {
	sorted, err := G.Sort(g) // roots first
	if err != nil {
		return nil, err
	}
	r := &graphRun{at: make(map[*G.Node]int, len(sorted))}
	for k := len(sorted) - 1; k >= 0; k-- {
		n := sorted[k]
		r.at[n] = len(r.nodes)
		r.nodes = append(r.nodes, n)
	}
	r.args = make([][]int, len(r.nodes))
	for k, n := range r.nodes {
		for it := g.From(n.ID()); it.Next(); {
			c, ok := it.Node().(*G.Node)
			if !ok {
				return nil, fmt.Errorf("graph node %v: a child of type %T", n, it.Node())
			}
			r.args[k] = append(r.args[k], r.at[c])
		}
	}
	r.vals = make([]G.Value, len(r.nodes))
	return r, nil
}

// all runs every node once.
func (r *graphRun) all() error {
	for k, n := range r.nodes {
		op := n.Op()
		if op == nil { // an input: its bound value
			r.vals[k] = n.Value()
			continue
		}
		r.in = r.in[:0]
		for _, a := range r.args[k] {
			r.in = append(r.in, r.vals[a])
		}
		v, err := op.Do(r.in...)
		if err != nil {
			return fmt.Errorf("%v: %w", n, err)
		}
		r.vals[k] = v
	}
	return nil
}

// value is n's value of the last run.
func (r *graphRun) value(n *G.Node) G.Value { return r.vals[r.at[n]] }

func (gg *graphGradient) gradient(p *backend.JEIRTParams, b *backend.JEIRTBatch) ([][]float32, float64, error) {
	if p != gg.p {
		// The graph is bound to one set of parameter slices; another set
		// (a test's copy) gets graphs of its own.
		gg.p, gg.graphs = p, map[int]*jeirtGraph{}
	}
	U, B := b.Rows(), len(b.Row)
	if B == 0 {
		return nil, 0, fmt.Errorf("jeirt graph: a batch without pairs")
	}
	jg := gg.graphs[U]
	if jg == nil {
		var err error
		if jg, err = buildJEIRTGraph(p, U, gg.st); err != nil {
			return nil, 0, err
		}
		gg.graphs[U] = jg
	}
	if p.R != nil {
		clear(jg.rowW)
		for _, r := range b.Row {
			jg.rowW[r] += 1 / float32(B)
		}
		for k, j := range b.Item {
			jg.item[k] = int(j)
		}
	}
	gg.st.b = b
	err := jg.run.all()
	gg.st.b = nil
	if err != nil {
		return nil, 0, fmt.Errorf("jeirt graph (%d rows): %w", U, err)
	}
	grads := gg.grads[:0]
	for k, n := range jg.grads {
		gv, ok := jg.run.value(n).Data().([]float32)
		if !ok {
			return nil, 0, fmt.Errorf("jeirt graph: gradient of %s: not float32", jg.params[k].Name())
		}
		grads = append(grads, gv)
	}
	gg.grads = grads
	loss := jg.link.loss
	if jg.pen != nil {
		loss += float64(jg.run.value(jg.pen).Data().(float32))
	}
	return grads, loss, nil
}

// buildJEIRTGraph builds, differentiates and compiles the graph for batches of u rows.
func buildJEIRTGraph(p *backend.JEIRTParams, u int, st *graphState) (jg *jeirtGraph, err error) {
	defer func() {
		if r := recover(); r != nil { // G.Must panics on a graph construction error
			err = fmt.Errorf("jeirt graph for %d rows: %v", u, r)
		}
	}()
	D, H, d := p.InputDim, p.Hidden, p.Dim
	jg = &jeirtGraph{}
	g := G.NewGraph()
	mat := func(name string, rows, cols int, data []float32) *G.Node {
		return G.NewMatrix(g, tensor.Float32, G.WithShape(rows, cols), G.WithName(name),
			G.WithValue(tensor.New(tensor.WithShape(rows, cols), tensor.WithBacking(data))))
	}
	vec := func(name string, data []float32) *G.Node {
		return G.NewVector(g, tensor.Float32, G.WithShape(len(data)), G.WithName(name),
			G.WithValue(tensor.New(tensor.WithShape(len(data)), tensor.WithBacking(data))))
	}
	w1, c1 := mat("W1", H, D, p.W1), vec("c1", p.C1)
	w2, c2 := mat("W2", d, H, p.W2), vec("c2", p.C2)
	m := mat("M", p.NumModels, d, p.M)
	jg.params = []*G.Node{w1, c1, w2, c2, m}

	a := G.Must(G.ApplyOp(newLinearOp(st, "1", u, D, H, slotA, slotGW1, slotGC1, -1), w1, c1))
	h := G.Must(G.ApplyOp(&reluMaskOp{st: st, rows: u, n: H, h: out{st: st, slot: slotH, shape: []int{u, H}},
		ga: out{st: st, slot: slotGH, shape: []int{u, H}}}, a)) // in place, as the fused step
	q := G.Must(G.ApplyOp(newLinearOp(st, "2", u, H, d, slotQ, slotGW2, slotGC2, slotGH), h, w2, c2))
	var rows *G.Node
	if p.R != nil {
		jg.item, jg.rowW = make([]int, u), make([]float32, u)
		r := mat("R", p.NumItems, d, p.R)
		jg.params = append(jg.params, r)
		idx := G.NewVector(g, tensor.Int, G.WithShape(u), G.WithName("item"),
			G.WithValue(tensor.New(tensor.WithShape(u), tensor.WithBacking(jg.item))))
		rows = G.Must(G.ByIndices(r, idx, 0))
		q = G.Must(G.Add(q, rows))
	}
	jg.link = &linkBCEOp{st: st, u: u, n: p.NumModels, d: d}
	cost := G.Must(G.ApplyOp(jg.link, q, m))
	if p.R != nil {
		// λ · mean over pairs of ‖r_j‖² = λ · Σ_rows (pairs on the row / B) ‖r_row‖².
		pen := G.Must(G.Sum(G.Must(G.HadamardProd(vec("rowWeight", jg.rowW), G.Must(G.Sum(G.Must(G.Square(rows)), 1))))))
		jg.pen = G.Must(G.Mul(G.NewConstant(float32(p.ResidualL2)), pen))
		cost = G.Must(G.Add(cost, jg.pen))
	}
	if jg.grads, err = G.Grad(cost, jg.params...); err != nil {
		return nil, err
	}
	jg.g = g
	jg.run, err = newGraphRun(g)
	return jg, err
}

// opBase holds the methods every op of the graph has alike.
type opBase struct{}

func (opBase) ReturnsPtr() bool     { return false }
func (opBase) CallsExtern() bool    { return false }
func (opBase) OverwritesInput() int { return -1 }

func strHash(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}

var (
	matType = G.TensorType{Dims: 2, Of: tensor.Float32}
	vecType = G.TensorType{Dims: 1, Of: tensor.Float32}
)

func float32s(v G.Value) ([]float32, error) {
	t, ok := v.(*tensor.Dense)
	if !ok || t.Dtype() != tensor.Float32 {
		return nil, fmt.Errorf("want a float32 tensor, got %T", v)
	}
	return t.Float32s(), nil
}

// inputs returns the float32 data of the values, or the first error.
func inputs(op fmt.Stringer, in []G.Value) ([][]float32, error) {
	out := make([][]float32, len(in))
	for k, v := range in {
		s, err := float32s(v)
		if err != nil {
			return nil, fmt.Errorf("%v: input %d: %w", op, k, err)
		}
		out[k] = s
	}
	return out, nil
}

// linearOp is y = x·Wᵀ + c (torch.nn.Linear) on rows inputs: simd.Linear.
// The first layer's x is the batch's encoder vectors, not a node (there is
// no gradient for them), so its inputs are (W, c); the second's are
// (x, W, c). Its gradient ops (linearGradOp) are linearBackward's three
// products: gyᵀ·x for W, the column sums of gy for c and gy·W for x.
type linearOp struct {
	opBase
	st            *graphState
	name          string
	rows, in, out int
	y, gw, gc, gx int    // slots of y and of the gradients of W, c and x (gx −1: no x node)
	yOut          out    // y
	gOut          [3]out // ∂ℓ/∂x, ∂ℓ/∂W, ∂ℓ/∂c
}

func newLinearOp(st *graphState, name string, rows, in, outs, y, gw, gc, gx int) *linearOp {
	return &linearOp{st: st, name: name, rows: rows, in: in, out: outs, y: y, gw: gw, gc: gc, gx: gx,
		yOut: out{st: st, slot: y, shape: []int{rows, outs}},
		gOut: [3]out{{st: st, slot: gx, shape: []int{rows, in}}, {st: st, slot: gw, shape: []int{outs, in}}, {st: st, slot: gc, shape: []int{outs}}}}
}

func (op *linearOp) hasX() bool { return op.gx >= 0 }
func (op *linearOp) Arity() int {
	if op.hasX() {
		return 3
	}
	return 2
}
func (op *linearOp) Type() hm.Type {
	if op.hasX() {
		return hm.NewFnType(matType, matType, vecType, matType)
	}
	return hm.NewFnType(matType, vecType, matType)
}
func (op *linearOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.rows, op.out}, nil
}
func (op *linearOp) WriteHash(h hash.Hash) { h.Write([]byte(op.String())) }
func (op *linearOp) Hashcode() uint32      { return strHash(op.String()) }
func (op *linearOp) String() string {
	return fmt.Sprintf("Linear%s(%d,%d,%d)", op.name, op.rows, op.in, op.out)
}
func (op *linearOp) DiffWRT(n int) []bool {
	w := make([]bool, n)
	for k := range w {
		w[k] = true
	}
	return w
}

// x is the layer's input: the batch's encoder vectors, or the value of the
// first input node.
func (op *linearOp) x(in [][]float32) []float32 {
	if op.hasX() {
		return in[0]
	}
	return op.st.b.X
}

func (op *linearOp) Do(vals ...G.Value) (G.Value, error) {
	in, err := inputs(op, vals)
	if err != nil {
		return nil, err
	}
	wc := in[len(in)-2:]
	t, y := op.yOut.get()
	simd.Linear(y, op.x(in), wc[0], wc[1], op.rows, op.in, op.out)
	return t, nil
}

func (op *linearOp) SymDiff(in G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	// One op computes the three gradients (linearBackward); the W and c
	// nodes take them from it in turn.
	args := G.Nodes{grad, in[len(in)-2]} // gy, and W for gy·W
	if op.hasX() {
		args = append(args, in[0])
	}
	all, err := G.ApplyOp(&linearGradOp{of: op, part: gradAll}, args...)
	if err != nil {
		return nil, err
	}
	gw, err := G.ApplyOp(&linearGradOp{of: op, part: gradW}, all)
	if err != nil {
		return nil, err
	}
	gc, err := G.ApplyOp(&linearGradOp{of: op, part: gradC}, all)
	if err != nil {
		return nil, err
	}
	if !op.hasX() {
		return G.Nodes{gw, gc}, nil
	}
	return G.Nodes{all, gw, gc}, nil
}

// The parts of a linear layer's gradient.
const (
	gradAll = iota // all three, its value the one for x (or for W, without x)
	gradW
	gradC
)

// linearGradOp is linearOp's gradient. The gradAll op runs linearBackward
// (inputs gy, W and, for the second layer, x) and returns ∂ℓ/∂x (∂ℓ/∂W for
// the first layer, which has no x node); the gradW and gradC ops, whose
// input is the gradAll node (which orders them after it), return ∂ℓ/∂W and
// ∂ℓ/∂c.
type linearGradOp struct {
	opBase
	of   *linearOp
	part int
}

func (op *linearGradOp) Arity() int {
	if op.part != gradAll {
		return 1
	}
	return op.of.Arity()
}
func (op *linearGradOp) Type() hm.Type {
	res := matType
	if op.part == gradC {
		res = vecType
	}
	switch {
	case op.part != gradAll:
		return hm.NewFnType(matType, res)
	case op.of.hasX():
		return hm.NewFnType(matType, matType, matType, res)
	}
	return hm.NewFnType(matType, matType, res)
}
func (op *linearGradOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	switch {
	case op.part == gradC:
		return tensor.Shape{op.of.out}, nil
	case op.part == gradAll && op.of.hasX():
		return tensor.Shape{op.of.rows, op.of.in}, nil
	}
	return tensor.Shape{op.of.out, op.of.in}, nil
}
func (op *linearGradOp) WriteHash(h hash.Hash) { h.Write([]byte(op.String())) }
func (op *linearGradOp) Hashcode() uint32      { return strHash(op.String()) }
func (op *linearGradOp) String() string {
	return fmt.Sprintf("∂%v/%s", op.of, [...]string{"∂all", "∂W", "∂c"}[op.part])
}
func (op *linearGradOp) DiffWRT(n int) []bool { return make([]bool, n) }
func (op *linearGradOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, fmt.Errorf("%v: not differentiable", op)
}

func (op *linearGradOp) Do(vals ...G.Value) (G.Value, error) {
	l := op.of
	if op.part != gradAll {
		return l.gOut[op.part].t, nil
	}
	in, err := inputs(op, vals)
	if err != nil {
		return nil, err
	}
	gy, w := in[0], in[1]
	x := l.st.b.X
	var gx []float32
	if l.hasX() {
		x = in[2]
		_, gx = l.gOut[0].get()
	}
	_, gW := l.gOut[1].get()
	_, gc := l.gOut[2].get()
	linearBackward(gW, gc, gx, gy, x, w, l.rows, l.in, l.out)
	if l.hasX() {
		return l.gOut[0].t, nil
	}
	return l.gOut[1].t, nil
}

// reluMaskOp is h = relu(a) ⊙ mask, the batch's dropout mask (none when
// the batch has none). Its gradient op is reluMaskBackward.
type reluMaskOp struct {
	opBase
	st      *graphState
	rows, n int
	h, ga   out
}

func (*reluMaskOp) Arity() int    { return 1 }
func (*reluMaskOp) Type() hm.Type { return hm.NewFnType(matType, matType) }
func (op *reluMaskOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.rows, op.n}, nil
}
func (op *reluMaskOp) WriteHash(h hash.Hash) { h.Write([]byte(op.String())) }
func (op *reluMaskOp) Hashcode() uint32      { return strHash(op.String()) }
func (op *reluMaskOp) String() string        { return fmt.Sprintf("ReLU⊙mask(%d,%d)", op.rows, op.n) }
func (*reluMaskOp) DiffWRT(int) []bool       { return []bool{true} }

func (op *reluMaskOp) Do(vals ...G.Value) (G.Value, error) {
	in, err := inputs(op, vals)
	if err != nil {
		return nil, err
	}
	t, h := op.h.get()
	mask := op.h.st.b.Mask
	for k, v := range in[0] {
		if v < 0 {
			v = 0
		}
		if mask != nil {
			v *= mask[k]
		}
		h[k] = v
	}
	return t, nil
}

func (op *reluMaskOp) SymDiff(in G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	ga, err := G.ApplyOp(&reluMaskGradOp{of: op}, in[0], grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{ga}, nil
}

// reluMaskGradOp is reluMaskOp's gradient: inputs a and ∂ℓ/∂h.
type reluMaskGradOp struct {
	opBase
	of *reluMaskOp
}

func (*reluMaskGradOp) Arity() int    { return 2 }
func (*reluMaskGradOp) Type() hm.Type { return hm.NewFnType(matType, matType, matType) }
func (op *reluMaskGradOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.of.rows, op.of.n}, nil
}
func (op *reluMaskGradOp) WriteHash(h hash.Hash) { h.Write([]byte(op.String())) }
func (op *reluMaskGradOp) Hashcode() uint32      { return strHash(op.String()) }
func (op *reluMaskGradOp) String() string        { return fmt.Sprintf("∂%v", op.of) }
func (*reluMaskGradOp) DiffWRT(int) []bool       { return []bool{false, false} }
func (op *reluMaskGradOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, fmt.Errorf("%v: not differentiable", op)
}

func (op *reluMaskGradOp) Do(vals ...G.Value) (G.Value, error) {
	in, err := inputs(op, vals)
	if err != nil {
		return nil, err
	}
	t, ga := op.of.ga.get()
	reluMaskBackward(ga, in[1], in[0], op.of.h.st.b.Mask)
	return t, nil
}

// linkBCEOp is the mean over a batch's pairs of the binary cross-entropy of
// the JE-IRT link (the JE-IRT paper's P(correct), as model.Logit computes it):
//
//	z = q_row·m_model/(‖q_row‖+1e-8) − ‖q_row‖,  ℓ = softplus(z) − y·z,
//
// from q (U x d) and the model table M (N x d), the pairs being the batch's.
// It is the fused step's link pass: in the same pass it computes ∂ℓ/∂q and
// ∂ℓ/∂M, which its backward nodes (linkGradOp) return, and it keeps the
// loss in float64 (loss), as the fused step reports it.
type linkBCEOp struct {
	opBase
	st      *graphState
	u, n, d int
	gq, gm  out // ∂(mean loss)/∂q and ∂(mean loss)/∂M of the last run
	pass    linkPass
	loss    float64
}

func (*linkBCEOp) Arity() int                                     { return 2 }
func (*linkBCEOp) Type() hm.Type                                  { return hm.NewFnType(matType, matType, tensor.Float32) }
func (*linkBCEOp) InferShape(...G.DimSizer) (tensor.Shape, error) { return tensor.ScalarShape(), nil }
func (op *linkBCEOp) WriteHash(h hash.Hash)                       { h.Write([]byte(op.String())) }
func (op *linkBCEOp) Hashcode() uint32                            { return strHash(op.String()) }
func (op *linkBCEOp) String() string                              { return fmt.Sprintf("JEIRTLinkBCE(%d,%d,%d)", op.u, op.n, op.d) }
func (*linkBCEOp) DiffWRT(int) []bool                             { return []bool{true, true} }

func (op *linkBCEOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	gq, err := G.ApplyOp(&linkGradOp{of: op, wrtM: false}, output, grad)
	if err != nil {
		return nil, err
	}
	gm, err := G.ApplyOp(&linkGradOp{of: op, wrtM: true}, output, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{gq, gm}, nil
}

func (op *linkBCEOp) Do(vals ...G.Value) (G.Value, error) {
	in, err := inputs(op, vals)
	if err != nil {
		return nil, err
	}
	if op.gq.st == nil {
		op.gq = out{st: op.st, slot: slotGQ, shape: []int{op.u, op.d}}
		op.gm = out{st: op.st, slot: slotGM, shape: []int{op.n, op.d}}
	}
	_, gq := op.gq.get()
	_, gm := op.gm.get()
	clear(gq)
	clear(gm)
	b := op.st.b
	op.loss = op.pass.run(in[0], in[1], gq, gm, op.d, b.Row, b.Model, b.Label, b.Weight)
	return G.NewF32(float32(op.loss)), nil
}

// linkGradOp is the gradient of linkBCEOp's output with respect to q
// (wrtM false) or M, scaled by the incoming gradient of that output. Its
// inputs are the forward output (which orders it after the forward run that
// computed the gradient) and the incoming gradient.
type linkGradOp struct {
	opBase
	of   *linkBCEOp
	wrtM bool
	buf  *tensor.Dense // the scaled copy when the incoming gradient is not 1
}

func (*linkGradOp) Arity() int    { return 2 }
func (*linkGradOp) Type() hm.Type { return hm.NewFnType(tensor.Float32, tensor.Float32, matType) }
func (op *linkGradOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	if op.wrtM {
		return tensor.Shape{op.of.n, op.of.d}, nil
	}
	return tensor.Shape{op.of.u, op.of.d}, nil
}
func (op *linkGradOp) WriteHash(h hash.Hash) { h.Write([]byte(op.String())) }
func (op *linkGradOp) Hashcode() uint32      { return strHash(op.String()) }
func (op *linkGradOp) String() string {
	if op.wrtM {
		return fmt.Sprintf("∂%v/∂M", op.of)
	}
	return fmt.Sprintf("∂%v/∂q", op.of)
}
func (*linkGradOp) DiffWRT(int) []bool { return []bool{false, false} }
func (op *linkGradOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, fmt.Errorf("%v: not differentiable", op)
}

func (op *linkGradOp) Do(in ...G.Value) (G.Value, error) {
	src := op.of.gq.t
	if op.wrtM {
		src = op.of.gm.t
	}
	if src == nil {
		return nil, fmt.Errorf("%v: run before its forward op", op)
	}
	scale, ok := in[1].Data().(float32)
	if !ok {
		return nil, fmt.Errorf("%v: want a float32 scalar gradient, got %T", op, in[1].Data())
	}
	if scale == 1 {
		return src, nil
	}
	if op.buf == nil {
		op.buf = tensor.New(tensor.WithShape(src.Shape().Clone()...), tensor.Of(tensor.Float32))
	}
	dst := op.buf.Float32s()
	for k, v := range src.Float32s() {
		dst[k] = scale * v
	}
	return op.buf, nil
}
