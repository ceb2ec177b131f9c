package jeirt

import (
	_ "github.com/jeirt/jeirt/encoder/gblas" // the BLAS of the graphs

	"fmt"
	"hash"
	"hash/fnv"

	"github.com/chewxy/hm"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/jeirt/jeirt/train/backend"
)

// graphGradient is the JE-IRT loss and gradient as a Gorgonia graph, in
// float32, compiled once per batch-shape bucket and run again on every step
// (the default CPU step, StepGraph):
//
//	h = relu(x·W1ᵀ + c1) ⊙ mask            (dropout as a mask input)
//	q = h·W2ᵀ + c2 (+ R[item])              (the residual, when on)
//	ℓ = mean over pairs of BCE(σ(q_row·m_model/(‖q_row‖+1e-8) − ‖q_row‖), y)
//	    (+ λ · Σ_rows w_row ‖R[item_row]‖²)
//
// The adapter's matrix products, bias adds, ReLU, mask and the residual
// gather (ByIndices on axis 0 of a matrix, whose gradient tensor v0.9.24 gets
// right) are Gorgonia nodes differentiated by Gorgonia. The link and the
// binary cross-entropy over the batch's pairs are one custom op (linkBCEOp):
// as Gorgonia nodes they would be two gathers of B×d rows and a dozen
// elementwise nodes per step, and the model-table gather by pair would need
// a B×d scatter-add in the backward pass. The op computes the loss and its
// gradient with respect to q and the model table in one pass over the pairs;
// its backward nodes hand out that gradient.
//
// Shapes: a batch of U rows (questions, or pairs when batching per pair) runs
// the graph of the smallest bucket (a power of two, at least 8) that holds
// it; padded rows have zero features and a zero dropout mask and no pair
// refers to them, so they add nothing to the loss or the gradient. The pairs
// are not a tensor shape (the link op reads them from the batch), so the
// number of pairs needs no bucket. The parameter nodes are bound to tensors
// backed by the parameter slices themselves, so AdamW's in-place update
// outside the graph is what the next run reads; the input nodes are bound to
// buffers that each step overwrites.
type graphGradient struct {
	p      *backend.JEIRTParams
	graphs map[int]*jeirtGraph // by bucket (padded U)
}

func newGraphGradient(p *backend.JEIRTParams) *graphGradient {
	return &graphGradient{p: p, graphs: map[int]*jeirtGraph{}}
}

// rowBucket is the padded row count of a batch of u rows.
func rowBucket(u int) int {
	b := 8
	for b < u {
		b *= 2
	}
	return b
}

// jeirtGraph is the compiled graph of one bucket.
type jeirtGraph struct {
	u       int
	vm      G.VM
	cost    *G.Node
	params  []*G.Node // W1, c1, W2, c2, M, R (when on), as in JEIRTParams.Slices
	x, mask []float32 // backing of the input nodes: U x InputDim, U x Hidden
	item    []int     // U: residual row of each row (padded rows: 0)
	rowW    []float32 // U: residual penalty weight of each row (pairs on it / B)
	link    *linkBCEOp
}

func (gg *graphGradient) gradient(p *backend.JEIRTParams, b *backend.JEIRTBatch, grad *backend.JEIRTParams) (float64, error) {
	if p != gg.p {
		// The graph is bound to one set of parameter slices; another set
		// (a test's copy) gets graphs of its own.
		gg.p, gg.graphs = p, map[int]*jeirtGraph{}
	}
	U, B := b.Rows(), len(b.Row)
	if B == 0 {
		return 0, fmt.Errorf("jeirt graph: a batch without pairs")
	}
	u := rowBucket(U)
	jg := gg.graphs[u]
	if jg == nil {
		var err error
		if jg, err = buildJEIRTGraph(p, u); err != nil {
			return 0, err
		}
		gg.graphs[u] = jg
	}
	D, H := p.InputDim, p.Hidden
	copy(jg.x, b.X)
	clear(jg.x[U*D:])
	if b.Mask != nil {
		copy(jg.mask, b.Mask)
	} else {
		for k := range jg.mask[:U*H] {
			jg.mask[k] = 1
		}
	}
	clear(jg.mask[U*H:])
	if p.R != nil {
		clear(jg.rowW)
		for _, r := range b.Row {
			jg.rowW[r] += 1 / float32(B)
		}
		for k := range jg.item {
			jg.item[k] = 0
			if k < U {
				jg.item[k] = int(b.Item[k])
			}
		}
	}
	jg.link.row, jg.link.model, jg.link.label, jg.link.weight = b.Row, b.Model, b.Label, b.Weight
	defer jg.vm.Reset()
	if err := jg.vm.RunAll(); err != nil {
		return 0, fmt.Errorf("jeirt graph (%d rows): %w", u, err)
	}
	out := grad.Slices()
	for k, n := range jg.params {
		gv, err := n.Grad()
		if err != nil {
			return 0, fmt.Errorf("jeirt graph: gradient of %s: %w", n.Name(), err)
		}
		copy(out[k], gv.Data().([]float32))
	}
	return float64(jg.cost.Value().Data().(float32)), nil
}

// buildJEIRTGraph builds, differentiates and compiles the graph for batches of u rows.
func buildJEIRTGraph(p *backend.JEIRTParams, u int) (jg *jeirtGraph, err error) {
	defer func() {
		if r := recover(); r != nil { // G.Must panics on a graph construction error
			err = fmt.Errorf("jeirt graph for %d rows: %v", u, r)
		}
	}()
	D, H, d := p.InputDim, p.Hidden, p.Dim
	jg = &jeirtGraph{u: u, x: make([]float32, u*D), mask: make([]float32, u*H)}
	g := G.NewGraph()
	mat := func(name string, rows, cols int, data []float32) *G.Node {
		return G.NewMatrix(g, tensor.Float32, G.WithShape(rows, cols), G.WithName(name),
			G.WithValue(tensor.New(tensor.WithShape(rows, cols), tensor.WithBacking(data))))
	}
	vec := func(name string, data []float32) *G.Node {
		return G.NewVector(g, tensor.Float32, G.WithShape(len(data)), G.WithName(name),
			G.WithValue(tensor.New(tensor.WithShape(len(data)), tensor.WithBacking(data))))
	}
	x := mat("x", u, D, jg.x)
	mask := mat("mask", u, H, jg.mask)
	w1, c1 := mat("W1", H, D, p.W1), vec("c1", p.C1)
	w2, c2 := mat("W2", d, H, p.W2), vec("c2", p.C2)
	m := mat("M", p.NumModels, d, p.M)
	jg.params = []*G.Node{w1, c1, w2, c2, m}

	xw1 := G.Must(G.ApplyOp(&matMulTOp{input: true, r: u, c: H}, x, w1))
	a := G.Must(G.BroadcastAdd(xw1, c1, nil, []byte{0}))
	h := G.Must(G.HadamardProd(G.Must(G.Rectify(a)), mask))
	hw2 := G.Must(G.ApplyOp(&matMulTOp{r: u, c: d}, h, w2))
	q := G.Must(G.BroadcastAdd(hw2, c2, nil, []byte{0}))
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
	jg.link = &linkBCEOp{u: u, n: p.NumModels, d: d}
	cost := G.Must(G.ApplyOp(jg.link, q, m))
	if p.R != nil {
		// λ · mean over pairs of ‖r_j‖² = λ · Σ_rows (pairs on the row / B) ‖r_row‖².
		pen := G.Must(G.Sum(G.Must(G.HadamardProd(vec("rowWeight", jg.rowW), G.Must(G.Sum(G.Must(G.Square(rows)), 1))))))
		cost = G.Must(G.Add(cost, G.Must(G.Mul(G.NewConstant(float32(p.ResidualL2)), pen))))
	}
	if _, err := G.Grad(cost, jg.params...); err != nil {
		return nil, err
	}
	jg.cost = cost
	jg.vm = G.NewTapeMachine(g)
	return jg, nil
}

// linkBCEOp is the mean over a batch's pairs of the binary cross-entropy of
// the JE-IRT link (the JE-IRT paper's P(correct), as model.Logit computes it):
//
//	z = q_row·m_model/(‖q_row‖+1e-8) − ‖q_row‖,  ℓ = softplus(z) − y·z,
//
// from q (U x d) and the model table M (N x d), the pairs being the batch's
// (set before each run). It accumulates in float64 and computes, in the same
// pass, ∂ℓ/∂q and ∂ℓ/∂M, which its backward nodes (linkGradOp) return.
type linkBCEOp struct {
	u, n, d int
	row     []int32
	model   []int32
	label   []float32
	weight  []float32     // nil: one trial per pair
	gq, gm  *tensor.Dense // ∂(mean loss)/∂q and ∂(mean loss)/∂M of the last run
}

func (*linkBCEOp) Arity() int { return 2 }
func (*linkBCEOp) Type() hm.Type {
	m := G.TensorType{Dims: 2, Of: tensor.Float32}
	return hm.NewFnType(m, m, tensor.Float32)
}
func (*linkBCEOp) InferShape(...G.DimSizer) (tensor.Shape, error) { return tensor.ScalarShape(), nil }
func (*linkBCEOp) ReturnsPtr() bool                               { return false }
func (*linkBCEOp) CallsExtern() bool                              { return false }
func (*linkBCEOp) OverwritesInput() int                           { return -1 }
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

func (op *linkBCEOp) Do(in ...G.Value) (G.Value, error) {
	qt, ok1 := in[0].(*tensor.Dense)
	mt, ok2 := in[1].(*tensor.Dense)
	if !ok1 || !ok2 || qt.Dtype() != tensor.Float32 || mt.Dtype() != tensor.Float32 {
		return nil, fmt.Errorf("%v: want two float32 matrices, got %T and %T", op, in[0], in[1])
	}
	if op.gq == nil {
		op.gq = tensor.New(tensor.WithShape(op.u, op.d), tensor.Of(tensor.Float32))
		op.gm = tensor.New(tensor.WithShape(op.n, op.d), tensor.Of(tensor.Float32))
	}
	Q, M := qt.Float32s(), mt.Float32s()
	gq, gm := op.gq.Float32s(), op.gm.Float32s()
	clear(gq)
	clear(gm)
	return G.NewF32(float32(linkLoss(Q, M, gq, gm, op.d, op.row, op.model, op.label, op.weight))), nil
}

// linkGradOp is the gradient of linkBCEOp's output with respect to q
// (wrtM false) or M, scaled by the incoming gradient of that output. Its
// inputs are the forward output (which orders it after the forward run that
// computed the gradient) and the incoming gradient.
type linkGradOp struct {
	of   *linkBCEOp
	wrtM bool
	buf  *tensor.Dense // the scaled copy when the incoming gradient is not 1
}

func (*linkGradOp) Arity() int { return 2 }
func (*linkGradOp) Type() hm.Type {
	return hm.NewFnType(tensor.Float32, tensor.Float32, G.TensorType{Dims: 2, Of: tensor.Float32})
}
func (op *linkGradOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	if op.wrtM {
		return tensor.Shape{op.of.n, op.of.d}, nil
	}
	return tensor.Shape{op.of.u, op.of.d}, nil
}
func (*linkGradOp) ReturnsPtr() bool         { return false }
func (*linkGradOp) CallsExtern() bool        { return false }
func (*linkGradOp) OverwritesInput() int     { return -1 }
func (op *linkGradOp) WriteHash(h hash.Hash) { h.Write([]byte(op.String())) }
func (op *linkGradOp) Hashcode() uint32      { return strHash(op.String()) }
func (op *linkGradOp) String() string {
	if op.wrtM {
		return fmt.Sprintf("∂%v/∂M", op.of)
	}
	return fmt.Sprintf("∂%v/∂q", op.of)
}

func (op *linkGradOp) Do(in ...G.Value) (G.Value, error) {
	src := op.of.gq
	if op.wrtM {
		src = op.of.gm
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

func strHash(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}

// matMulTOp is a·bᵀ for float32 matrices a (r x k) and b (c x k), on gonum's
// Sgemm, into a buffer it keeps from run to run. The adapter's weights are
// stored as PyTorch stores them (out x in), so x·Wᵀ is the linear layer;
// Gorgonia's Transpose node would copy the weight matrix through a strided
// iterator on every run. With transA it is aᵀ·b instead (a: k x r, b: k x c),
// the weight gradient gᵀ·x. Its gradient (of a·bᵀ only) is g·b for a, a
// plain Gorgonia Mul, and gᵀ·a for b, this op again.
type matMulTOp struct {
	transA bool
	input  bool // a is an input (the encoder vectors): no gradient for it
	r, c   int  // output shape
	buf    *tensor.Dense
}

func (*matMulTOp) Arity() int { return 2 }
func (*matMulTOp) Type() hm.Type {
	m := G.TensorType{Dims: 2, Of: tensor.Float32}
	return hm.NewFnType(m, m, m)
}
func (op *matMulTOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.r, op.c}, nil
}
func (*matMulTOp) ReturnsPtr() bool         { return false }
func (*matMulTOp) CallsExtern() bool        { return false }
func (*matMulTOp) OverwritesInput() int     { return -1 }
func (op *matMulTOp) WriteHash(h hash.Hash) { h.Write([]byte(op.String())) }
func (op *matMulTOp) Hashcode() uint32      { return strHash(op.String()) }
func (op *matMulTOp) String() string {
	if op.transA {
		return fmt.Sprintf("AᵀB(%d,%d)", op.r, op.c)
	}
	if op.input {
		return fmt.Sprintf("XBᵀ(%d,%d)", op.r, op.c)
	}
	return fmt.Sprintf("ABᵀ(%d,%d)", op.r, op.c)
}
func (op *matMulTOp) DiffWRT(int) []bool { return []bool{!op.transA && !op.input, !op.transA} }

func (op *matMulTOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	if op.transA {
		return nil, fmt.Errorf("%v: not differentiable", op)
	}
	a, b := inputs[0], inputs[1]
	var ga *G.Node
	if !op.input {
		var err error
		if ga, err = G.Mul(grad, b); err != nil {
			return nil, err
		}
	}
	gb, err := G.ApplyOp(&matMulTOp{transA: true, r: b.Shape()[0], c: b.Shape()[1]}, grad, a)
	if err != nil {
		return nil, err
	}
	return G.Nodes{ga, gb}, nil
}

func (op *matMulTOp) Do(in ...G.Value) (G.Value, error) {
	a, ok1 := in[0].(*tensor.Dense)
	b, ok2 := in[1].(*tensor.Dense)
	if !ok1 || !ok2 || a.Dtype() != tensor.Float32 || b.Dtype() != tensor.Float32 {
		return nil, fmt.Errorf("%v: want two float32 matrices, got %T and %T", op, in[0], in[1])
	}
	if op.buf == nil {
		op.buf = tensor.New(tensor.WithShape(op.r, op.c), tensor.Of(tensor.Float32))
	}
	as, bs := a.Shape(), b.Shape()
	out := mat32(op.r, op.c, op.buf.Float32s())
	if op.transA {
		blas32.Gemm(blas.Trans, blas.NoTrans, 1, mat32(as[0], as[1], a.Float32s()), mat32(bs[0], bs[1], b.Float32s()), 0, out)
	} else {
		blas32.Gemm(blas.NoTrans, blas.Trans, 1, mat32(as[0], as[1], a.Float32s()), mat32(bs[0], bs[1], b.Float32s()), 0, out)
	}
	return op.buf, nil
}
