package transformer

import (
	"fmt"
	"hash"
	"hash/fnv"
	"math"
	"runtime"
	"sync"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The three custom Gorgonia ops of the BERT graph. Gorgonia has no erf, so no
// exact GELU; its LayerNorm would take eight elementwise nodes with float32
// sums; and tensor v0.9.24's float32 softmax takes the row maximum from the
// first element of the whole tensor instead of the row's (a shift that is
// harmless in exact arithmetic but overflows exp for rows far from it), and
// the padding mask would have to be materialised (B·H·L·L) to be added. Each
// op below works on float32 tensors, accumulates in float64, and is inference
// only (no DoDiff): the encoder is frozen.

// forRows runs f over [0,n) split into one contiguous range per core.
func forRows(n int, f func(lo, hi int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 || n < 64 {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	chunk := (n + workers - 1) / workers
	for lo := 0; lo < n; lo += chunk {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			f(lo, hi)
		}(lo, min(lo+chunk, n))
	}
	wg.Wait()
}

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
	src := x.Float32s()
	out := op.buf.get(x.Shape())
	dst := out.Float32s()
	forRows(len(src), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			dst[i] = gelu(src[i])
		}
	})
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

// maskedSoftmaxOp is softmax(S / scale) over keys of attention scores S
// (B·H, L, L) with the padding mask (B, 1, L): keys with mask 0 get
// probability exactly 0, which is what adding finfo.min before the softmax
// gives in torch. The float32 division is the one torch does (Q·Kᵀ / √dh).
type maskedSoftmaxOp struct {
	heads int
	scale float32
	buf   *outBuf
}

func (maskedSoftmaxOp) Arity() int { return 2 }

// Type has the mask as a (B, 1, L) tensor, the rank of the scores.
func (maskedSoftmaxOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(a, a, a)
}
func (maskedSoftmaxOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return in[0].(tensor.Shape).Clone(), nil
}
func (maskedSoftmaxOp) ReturnsPtr() bool         { return false }
func (maskedSoftmaxOp) CallsExtern() bool        { return false }
func (maskedSoftmaxOp) OverwritesInput() int     { return -1 }
func (op maskedSoftmaxOp) WriteHash(h hash.Hash) { h.Write([]byte(op.String())) }
func (op maskedSoftmaxOp) Hashcode() uint32      { return opHash(op) }
func (op maskedSoftmaxOp) String() string {
	return fmt.Sprintf("MaskedSoftmax(heads=%d, scale=%g)", op.heads, op.scale)
}

func (op *maskedSoftmaxOp) Do(in ...G.Value) (G.Value, error) {
	s, ok := in[0].(*tensor.Dense)
	if !ok || s.Dtype() != tensor.Float32 || s.Dims() != 3 {
		return nil, fmt.Errorf("MaskedSoftmax: want float32 scores (B·H, L, L), got %v", in[0].Shape())
	}
	m := in[1].(*tensor.Dense)
	bh, l := s.Shape()[0], s.Shape()[2]
	if m.Dims() != 3 || m.Shape()[0]*op.heads != bh || m.Shape()[2] != l {
		return nil, fmt.Errorf("MaskedSoftmax: mask %v does not fit scores %v with %d heads", m.Shape(), s.Shape(), op.heads)
	}
	src, mask := s.Float32s(), m.Float32s()
	out := op.buf.get(s.Shape())
	dst := out.Float32s()
	rows := bh * s.Shape()[1]
	forRows(rows, func(lo, hi int) {
		e := make([]float64, l)
		for r := lo; r < hi; r++ {
			keep := mask[(r/s.Shape()[1]/op.heads)*l : (r/s.Shape()[1]/op.heads+1)*l]
			row, o := src[r*l:(r+1)*l], dst[r*l:(r+1)*l]
			maxV := math.Inf(-1)
			for k, v := range row {
				if keep[k] != 0 {
					e[k] = float64(v / op.scale)
					maxV = math.Max(maxV, e[k])
				}
			}
			var sum float64
			for k := range row {
				if keep[k] != 0 {
					e[k] = math.Exp(e[k] - maxV)
					sum += e[k]
				} else {
					e[k] = 0
				}
			}
			if sum == 0 { // every key masked: no attention at all
				sum = 1
			}
			for k := range o {
				o[k] = float32(e[k] / sum)
			}
		}
	})
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
			row, o := src[r*d:(r+1)*d], dst[r*d:(r+1)*d]
			for k, v := range row {
				o[k] = v + b[k]
			}
		}
	})
	return out, nil
}

// headsOp moves attention heads between the two layouts of multi-head
// attention: split takes (B·L, H·dh) to (B·H, L, dh), merge takes it back.
// It is Reshape, Transpose(0, 2, 1, 3), Reshape in one copy of dh-long runs;
// Gorgonia's general Transpose walks an index iterator per element.
type headsOp struct {
	merge           bool
	batch, l, heads int
	buf             *outBuf
}

func (op *headsOp) Arity() int { return 1 }
func (op *headsOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	two, three := &G.TensorType{Dims: 2, Of: a}, &G.TensorType{Dims: 3, Of: a}
	if op.merge {
		return hm.NewFnType(three, two)
	}
	return hm.NewFnType(two, three)
}
func (op *headsOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s := in[0].(tensor.Shape)
	if op.merge {
		return tensor.Shape{op.batch * op.l, op.heads * s[2]}, nil
	}
	return tensor.Shape{op.batch * op.heads, op.l, s[1] / op.heads}, nil
}
func (op *headsOp) ReturnsPtr() bool      { return false }
func (op *headsOp) CallsExtern() bool     { return false }
func (op *headsOp) OverwritesInput() int  { return -1 }
func (op *headsOp) WriteHash(h hash.Hash) { h.Write([]byte(op.String())) }
func (op *headsOp) Hashcode() uint32      { return opHash(op) }
func (op *headsOp) String() string {
	if op.merge {
		return fmt.Sprintf("MergeHeads(%d)", op.heads)
	}
	return fmt.Sprintf("SplitHeads(%d)", op.heads)
}

func (op *headsOp) Do(in ...G.Value) (G.Value, error) {
	x, ok := in[0].(*tensor.Dense)
	if !ok || x.Dtype() != tensor.Float32 {
		return nil, fmt.Errorf("%v: want a float32 tensor, got %T", op, in[0])
	}
	src := x.Float32s()
	b, l, h := op.batch, op.l, op.heads
	dh := len(src) / (b * l * h)
	if dh*b*l*h != len(src) {
		return nil, fmt.Errorf("%v: %v does not hold batch %d × %d tokens × %d heads", op, x.Shape(), b, l, h)
	}
	var out *tensor.Dense
	if op.merge {
		out = op.buf.get(tensor.Shape{b * l, h * dh})
	} else {
		out = op.buf.get(tensor.Shape{b * h, l, dh})
	}
	dst := out.Float32s()
	// Token t of batch row i, head k: (i·L + t)·H·dh + k·dh in the token
	// layout, ((i·H + k)·L + t)·dh in the head layout.
	forRows(b*l, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			i, t := r/l, r%l
			for k := 0; k < h; k++ {
				tok := r*h*dh + k*dh
				hd := ((i*h+k)*l + t) * dh
				if op.merge {
					copy(dst[tok:tok+dh], src[hd:hd+dh])
				} else {
					copy(dst[hd:hd+dh], src[tok:tok+dh])
				}
			}
		}
	})
	return out, nil
}
