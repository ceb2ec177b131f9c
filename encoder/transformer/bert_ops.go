package transformer

import (
	"fmt"
	"hash"
	"hash/fnv"
	"time"

	"github.com/chewxy/hm"
	"github.com/jeirt/jeirt/model/simd"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The custom Gorgonia ops of the BERT graph. Gorgonia has no erf, so no
// exact GELU; its LayerNorm would take eight elementwise nodes with float32
// sums; tensor v0.9.24's float32 softmax takes the row maximum from the first
// element of the whole tensor instead of the row's (a shift that is harmless
// in exact arithmetic but overflows exp for rows far from it), and the
// padding mask would have to be materialised (B·H·L·L) to be added; and a
// Mul followed by a bias add, or BatchedMatMul over heads after a transpose,
// pass over memory more often than the products need. So a Linear layer is
// one op (the bias added as the product is stored), attention is one op (the
// same kernel as MPNet's and ModernBERT's: heads read in place, masked
// softmax, both products), and GELU, LayerNorm and the residual add run on
// model/simd's vector kernels. Each op works on float32 tensors and is
// inference only (no DoDiff): the encoder is frozen.

// forRows runs f over [0,n) split into one contiguous range per core, on
// model/simd's workers (which stay awake between the many short passes of
// a forward).
func forRows(n int, f func(lo, hi int)) { simd.ParallelRange(n, 1, f) }

// outBuf is an op's output tensor, kept from one run to the next and shared
// by the ops of the same role in every layer and every compiled shape of one
// BERT (see bertBuffers). That is safe because graphs run one at a time
// (BERT.mu), every op writes all of its output, and layer i+1 starts only
// after everything of layer i has been consumed. It spares allocating and
// zeroing tens of megabytes per layer and bounds the memory held to one
// layer's worth for the largest shape.
type outBuf struct{ t *tensor.Dense }

func (b *outBuf) get(shape tensor.Shape) *tensor.Dense {
	if b.t == nil || !b.t.Shape().Eq(shape) {
		b.t = tensor.New(tensor.WithShape(shape.Clone()...), tensor.Of(tensor.Float32))
	}
	return b.t
}

func opHash(op fmt.Stringer) uint32 {
	h := fnv.New32a()
	h.Write([]byte(op.String()))
	return h.Sum32()
}

// geluOp is the exact GELU of Hendrycks and Gimpel (2016):
// gelu(x) = x·Φ(x) = 0.5·x·(1 + erf(x/√2)), BERT's hidden_act "gelu".
type geluOp struct{ buf *outBuf }

func (geluOp) Arity() int    { return 1 }
func (geluOp) Type() hm.Type { a := hm.TypeVariable('a'); return hm.NewFnType(a, a) }
func (geluOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return in[0].(tensor.Shape).Clone(), nil
}
func (geluOp) ReturnsPtr() bool         { return false }
func (geluOp) CallsExtern() bool        { return false }
func (geluOp) OverwritesInput() int     { return -1 }
func (op geluOp) WriteHash(h hash.Hash) { h.Write([]byte(op.String())) }
func (op geluOp) Hashcode() uint32      { return opHash(op) }
func (geluOp) String() string           { return "GELU(erf)" }

func (op *geluOp) Do(in ...G.Value) (G.Value, error) {
	x, ok := in[0].(*tensor.Dense)
	if !ok || x.Dtype() != tensor.Float32 {
		return nil, fmt.Errorf("GELU: want a float32 tensor, got %T", in[0])
	}
	out := op.buf.get(x.Shape())
	geluInto(out.Float32s(), x.Float32s())
	return out, nil
}

// layerNormOp is LayerNorm over the last axis of an (N, D) matrix (Ba, Kiros
// and Hinton 2016): y = (x − mean)/√(var + eps)·γ + β with the biased
// variance, as torch.nn.LayerNorm computes it.
type layerNormOp struct {
	eps float64
	buf *outBuf
}

func (layerNormOp) Arity() int { return 3 }

// Type has γ and β as (1, D) matrices: Gorgonia's type inference mixes up
// two tensor type variables of different ranks.
func (layerNormOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(a, a, a, a)
}
func (layerNormOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return in[0].(tensor.Shape).Clone(), nil
}
func (layerNormOp) ReturnsPtr() bool         { return false }
func (layerNormOp) CallsExtern() bool        { return false }
func (layerNormOp) OverwritesInput() int     { return -1 }
func (op layerNormOp) WriteHash(h hash.Hash) { h.Write([]byte(op.String())) }
func (op layerNormOp) Hashcode() uint32      { return opHash(op) }
func (op layerNormOp) String() string        { return fmt.Sprintf("LayerNorm(eps=%g)", op.eps) }

func (op *layerNormOp) Do(in ...G.Value) (G.Value, error) {
	x, ok := in[0].(*tensor.Dense)
	if !ok || x.Dtype() != tensor.Float32 || x.Dims() != 2 {
		return nil, fmt.Errorf("LayerNorm: want a float32 matrix, got %v", in[0].Shape())
	}
	gamma, beta := in[1].(*tensor.Dense).Float32s(), in[2].(*tensor.Dense).Float32s()
	n, d := x.Shape()[0], x.Shape()[1]
	if len(gamma) != d || len(beta) != d {
		return nil, fmt.Errorf("LayerNorm: weight %d and bias %d for width %d", len(gamma), len(beta), d)
	}
	out := op.buf.get(x.Shape())
	layerNorm(out.Float32s(), x.Float32s(), gamma, beta, n, d, op.eps)
	return out, nil
}

// addRowOp adds a (1, D) row to every row of an (N, D) matrix: a Linear
// layer's bias. Gorgonia's BroadcastAdd would first materialise the bias
// repeated N times.
type addRowOp struct{ buf *outBuf }

func (addRowOp) Arity() int { return 2 }
func (addRowOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(a, a, a)
}
func (addRowOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return in[0].(tensor.Shape).Clone(), nil
}
func (addRowOp) ReturnsPtr() bool         { return false }
func (addRowOp) CallsExtern() bool        { return false }
func (addRowOp) OverwritesInput() int     { return -1 }
func (op addRowOp) WriteHash(h hash.Hash) { h.Write([]byte(op.String())) }
func (op addRowOp) Hashcode() uint32      { return opHash(op) }
func (addRowOp) String() string           { return "AddRow" }

func (op *addRowOp) Do(in ...G.Value) (G.Value, error) {
	x, ok := in[0].(*tensor.Dense)
	if !ok || x.Dtype() != tensor.Float32 || x.Dims() != 2 {
		return nil, fmt.Errorf("AddRow: want a float32 matrix, got %v", in[0].Shape())
	}
	n, d := x.Shape()[0], x.Shape()[1]
	b := in[1].(*tensor.Dense).Float32s()
	if len(b) != d {
		return nil, fmt.Errorf("AddRow: row of %d for width %d", len(b), d)
	}
	src := x.Float32s()
	out := op.buf.get(x.Shape())
	dst := out.Float32s()
	forRows(n, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			simd.Add(dst[r*d:(r+1)*d], src[r*d:(r+1)*d], b)
		}
	})
	return out, nil
}

// linearOp is a Linear layer on an (N, in) matrix, y = x·Wᵀ + b, in one
// product (the bias added as each tile is stored); the weights are the op's,
// packed once at load.
type linearOp struct {
	w   linear
	buf *outBuf
}

// linearTimed, when set (by benchmarks, never while a forward runs), is
// told the shape and the wall time of every Linear product of the BERT
// graph: the products' speed inside a forward, where their inputs, outputs
// and weights are wherever the forward left them.
var linearTimed func(rows, in, out int, d time.Duration)

func (linearOp) Arity() int { return 1 }
func (linearOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(a, a)
}
func (op linearOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{in[0].(tensor.Shape)[0], op.w.out}, nil
}
func (linearOp) ReturnsPtr() bool     { return false }
func (linearOp) CallsExtern() bool    { return false }
func (linearOp) OverwritesInput() int { return -1 }
func (op linearOp) String() string    { return fmt.Sprintf("Linear(%d→%d)", op.w.in, op.w.out) }

// WriteHash names the weights too: Gorgonia merges nodes of equal hash on
// the same input, and Q, K and V are three Linear layers of one input.
func (op linearOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "%v %p", op, op.w.w) }
func (op linearOp) Hashcode() uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}

func (op *linearOp) Do(in ...G.Value) (G.Value, error) {
	x, ok := in[0].(*tensor.Dense)
	if !ok || x.Dtype() != tensor.Float32 || x.Dims() != 2 || x.Shape()[1] != op.w.in {
		return nil, fmt.Errorf("%v: want a float32 matrix of width %d, got %v", op, op.w.in, in[0].Shape())
	}
	n := x.Shape()[0]
	out := op.buf.get(tensor.Shape{n, op.w.out})
	if linearTimed == nil {
		applyLinear(out.Float32s(), x.Float32s(), op.w.w, op.w.b, n, op.w.in, op.w.out)
		return out, nil
	}
	t0 := time.Now()
	applyLinear(out.Float32s(), x.Float32s(), op.w.w, op.w.b, n, op.w.in, op.w.out)
	linearTimed(n, op.w.in, op.w.out, time.Since(t0))
	return out, nil
}

// attentionOp is multi-head scaled dot-product attention (see attention)
// on the (B·L, 3·H·dh) output of the fused query, key and value projection
// with the (B, L) padding mask, giving the (B·L, H·dh) context.
type attentionOp struct {
	batch, l, heads int
	scale           float32
	buf             *outBuf
	scratch         arena
}

func (attentionOp) Arity() int { return 2 }
func (attentionOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(a, a, a)
}
func (attentionOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s := in[0].(tensor.Shape)
	return tensor.Shape{s[0], s[1] / 3}, nil
}
func (attentionOp) ReturnsPtr() bool         { return false }
func (attentionOp) CallsExtern() bool        { return false }
func (attentionOp) OverwritesInput() int     { return -1 }
func (op attentionOp) WriteHash(h hash.Hash) { h.Write([]byte(op.String())) }
func (op attentionOp) Hashcode() uint32      { return opHash(op) }
func (op attentionOp) String() string {
	return fmt.Sprintf("Attention(heads=%d, scale=%g)", op.heads, op.scale)
}

func (op *attentionOp) Do(in ...G.Value) (G.Value, error) {
	qkv, ok := in[0].(*tensor.Dense)
	m, okM := in[1].(*tensor.Dense)
	if !ok || !okM || qkv.Dtype() != tensor.Float32 || m.Dtype() != tensor.Float32 || qkv.Dims() != 2 {
		return nil, fmt.Errorf("%v: want a float32 matrix and mask, got %v and %v", op, in[0].Shape(), in[1].Shape())
	}
	s := qkv.Shape()
	n, d := op.batch*op.l, s[1]/3
	mask := m.Float32s()
	if s[0] != n || s[1] != 3*d || d%op.heads != 0 || len(mask) != n {
		return nil, fmt.Errorf("%v: queries, keys and values %v and a mask of %d for batch %d × %d tokens", op, s, len(mask), op.batch, op.l)
	}
	x := qkv.Float32s()
	out := op.buf.get(tensor.Shape{n, d})
	attention(out.Float32s(), x, x[d:], x[2*d:], 3*d, mask, nil, op.batch, op.l, op.heads, d/op.heads, op.scale, 0, op.scratch, "attn")
	return out, nil
}

// addOp is the residual add, x + y elementwise in float32 as torch adds.
type addOp struct{ buf *outBuf }

func (addOp) Arity() int { return 2 }
func (addOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(a, a, a)
}
func (addOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return in[0].(tensor.Shape).Clone(), nil
}
func (addOp) ReturnsPtr() bool         { return false }
func (addOp) CallsExtern() bool        { return false }
func (addOp) OverwritesInput() int     { return -1 }
func (op addOp) WriteHash(h hash.Hash) { h.Write([]byte(op.String())) }
func (op addOp) Hashcode() uint32      { return opHash(op) }
func (addOp) String() string           { return "Add" }

func (op *addOp) Do(in ...G.Value) (G.Value, error) {
	x, ok := in[0].(*tensor.Dense)
	y, okY := in[1].(*tensor.Dense)
	if !ok || !okY || x.Dtype() != tensor.Float32 || y.Dtype() != tensor.Float32 || !x.Shape().Eq(y.Shape()) {
		return nil, fmt.Errorf("Add: want two float32 tensors of one shape, got %v and %v", in[0].Shape(), in[1].Shape())
	}
	out := op.buf.get(x.Shape())
	addInto(out.Float32s(), x.Float32s(), y.Float32s())
	return out, nil
}
