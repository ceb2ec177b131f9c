package cuda

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/jeirt/jeirt/cuda/internal/gpu"
	"github.com/jeirt/jeirt/encoder"
	"github.com/jeirt/jeirt/encoder/tokenizer"
	"github.com/jeirt/jeirt/encoder/transformer"
	"github.com/jeirt/jeirt/train/backend"
)

// The frozen text encoder's forward pass on a device: the kernels of
// kernels/encoder.cu for everything but the dense products, which go through
// dense (cuBLAS or the sgemm kernel of kernels/jeirt.cu on a GPU, a host
// gemm on the CPU harness). Tokenisation, length-sorted batching and the fingerprint are
// the CPU encoder's, so vectors made here and on the CPU share one cache.

// maxHeadDim is the largest head size of the attention kernels.
const maxHeadDim = 128

// attentionKernel returns the attention kernel for heads of size dh: the
// smallest capacity (32, 64, 96 or 128) that holds it.
func attentionKernel(dh int) string {
	return fmt.Sprintf("attention_dh%d", 32*gpu.Blocks(dh, 32))
}

// attentionRows is ENC_QROWS of kernels/encoder.cu: query rows per block of
// ENC_WARPS·32 = 128 threads.
const attentionRows, attentionThreads = 16, 128

// dense is the dense product of the encoder's linear layers.
type dense interface {
	// linear sets y (n × out, row-major) = x·wᵀ with x n × in and w out × in
	// (torch.nn.Linear's layout), all float32 device memory. Called inside do.
	linear(y, x, w gpu.Handle, n, out, in int) error
	// describe says what runs the products.
	describe() string
	// precision is the arithmetic of the products.
	precision() Precision
}

// kernelDense runs the linear layers with the sgemm kernel of
// kernels/jeirt.cu: float32 inputs, float32 accumulation.
type kernelDense struct {
	g   gpu.GPU
	why string // why not cuBLAS ("": not asked)
}

func (k kernelDense) describe() string { return "sgemm kernel (float32)" + k.why }

func (kernelDense) precision() Precision { return FP32 }

func (k kernelDense) linear(y, x, w gpu.Handle, n, out, in int) error {
	return k.g.Launch("sgemm", gpu.Blocks(out, 64), gpu.Blocks(n, 64), 256, x, w, y, n, out, in, false, true, 1.0, 0.0)
}

// transformerEncoder is what the GPU forward needs of a CPU encoder: its
// weights and its batching with another forward (transformer.BERT, MPNet and
// ModernBERT).
type transformerEncoder interface {
	encoder.Encoder
	Weights() *transformer.Weights
	EncodeWith(ctx context.Context, texts []string, f transformer.PooledForward) ([][]float32, error)
}

// Encoder is a transformer sentence encoder whose forward pass runs on the
// GPU: the same tokens, batches, pooling and fingerprint as the CPU encoder
// it was made from, and vectors that agree with the CPU's within float32
// rounding (about 1e-7 on the fixtures), so that one encoder cache serves
// both. SetPrecision trades that agreement for tensor-core speed.
type Encoder struct {
	cpu transformerEncoder
	f   *encoderForward
	// reduced makes the dense products of a precision (nil: FP32 only).
	reduced func(Precision) (dense, error)
}

// Dim implements encoder.Encoder.
func (e *Encoder) Dim() int { return e.cpu.Dim() }

// Fingerprint implements encoder.Encoder: the CPU encoder's in float32, with
// "/precision=tf32" or "/precision=bf16" appended in a reduced precision.
func (e *Encoder) Fingerprint() string {
	return e.cpu.Fingerprint() + e.Precision().fingerprintSuffix()
}

// Precision returns the arithmetic of the linear layers.
func (e *Encoder) Precision() Precision {
	e.f.mu.Lock()
	defer e.f.mu.Unlock()
	return e.f.mm.precision()
}

// SetPrecision sets the arithmetic of the linear layers: "fp32" (the
// default), "tf32" or "bf16" (see Precision). A reduced precision needs
// cuBLAS, and is checked against the float32 sgemm kernel on a test product
// before use; the fingerprint changes with it.
func (e *Encoder) SetPrecision(p string) error {
	prec, err := ParsePrecision(p)
	if err != nil {
		return err
	}
	f := e.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return fmt.Errorf("cuda: the GPU encoder is closed")
	}
	if f.mm.precision() == prec {
		return nil
	}
	if e.reduced == nil {
		return fmt.Errorf("cuda: precision %s is not available on %s (float32 only)", prec, f.g.Name())
	}
	mm, err := e.reduced(prec)
	if err != nil {
		return err
	}
	if err := f.g.Do(f.closeDense); err != nil {
		return err
	}
	f.mm = mm
	return nil
}

// Encode implements encoder.Encoder.
func (e *Encoder) Encode(ctx context.Context, texts []string) ([][]float32, error) {
	return e.cpu.EncodeWith(ctx, texts, e.f.forward)
}

// SetBatchSize sets the CPU encoder's batch size, which the GPU forward uses.
func (e *Encoder) SetBatchSize(n int) {
	if s, ok := e.cpu.(interface{ SetBatchSize(int) }); ok {
		s.SetBatchSize(n)
	}
}

// DenseProducts says what runs the linear layers: cuBLAS's float32 sgemm,
// or jeirt's own sgemm kernel and why cuBLAS is not used.
func (e *Encoder) DenseProducts() string { return e.f.mm.describe() }

// Close frees the encoder's device memory.
func (e *Encoder) Close() error { return e.f.close() }

// encoderSeam is backend.Encoders on a device: the transformer encoders'
// forward on it, every other kind left as it is.
type encoderSeam struct {
	open  func() (gpu.GPU, error)
	dense func(gpu.GPU) dense
	// reduced, when set, makes the dense products of a reduced precision
	// for Encoder.SetPrecision.
	reduced func(gpu.GPU, Precision) (dense, error)
}

func (s encoderSeam) OnDevice(enc backend.TextEncoder) (backend.TextEncoder, bool, error) {
	t, ok := enc.(transformerEncoder)
	if !ok {
		return nil, false, nil
	}
	g, err := s.open()
	if err != nil {
		return nil, false, err
	}
	e, err := newEncoder(g, s.dense(g), t)
	if err != nil {
		return nil, false, err
	}
	if s.reduced != nil {
		e.reduced = func(p Precision) (dense, error) { return s.reduced(g, p) }
	}
	return e, true, nil
}

// newEncoder uploads the weights of enc (a *transformer.BERT, MPNet or
// ModernBERT) to g.
func newEncoder(g gpu.GPU, mm dense, enc encoder.Encoder) (*Encoder, error) {
	t, ok := enc.(transformerEncoder)
	if !ok {
		return nil, fmt.Errorf("cuda: the %T encoder has no GPU forward (BERT, MPNet and ModernBERT folders have)", enc)
	}
	f, err := newEncoderForward(g, mm, t.Weights())
	if err != nil {
		return nil, err
	}
	return &Encoder{cpu: t, f: f}, nil
}

type linearDev struct {
	w, b    gpu.Handle
	out, in int
}

type layerDev struct {
	q, k, v, o, in, out                      linearDev
	attnNormW, attnNormB, mlpNormW, mlpNormB gpu.Handle
}

// encoderForward holds the weights on the device and the activation buffers
// of the largest batch seen.
type encoderForward struct {
	mu sync.Mutex
	g  gpu.GPU
	mm dense
	w  *transformer.Weights

	weights gpu.Buffers
	word, position, type0, embNormW, embNormB,
	relBias, finalNormW, finalNormB gpu.Handle
	layers []layerDev
	closed bool

	act   gpu.Buffers
	n, l  int // tokens and length the activations were allocated for
	batch int
	bias  gpu.Handle                // MPNet's relative position bias for length biasL
	biasL int                       // 0: not computed
	rope  map[float64][2]gpu.Handle // ModernBERT's rotary tables by theta, for length l

	// activations
	x, h, o, q, k, v, ctx, inter, gate, ids, pos, mask, out gpu.Handle
}

func newEncoderForward(g gpu.GPU, mm dense, w *transformer.Weights) (*encoderForward, error) {
	if w.Heads <= 0 || w.Hidden%w.Heads != 0 {
		return nil, fmt.Errorf("cuda: hidden size %d over %d heads", w.Hidden, w.Heads)
	}
	if dh := w.Hidden / w.Heads; dh > maxHeadDim {
		return nil, fmt.Errorf("cuda: head size %d is over the attention kernel's %d", dh, maxHeadDim)
	}
	for _, p := range w.Pooling {
		if poolMode(p) < 0 {
			return nil, fmt.Errorf("cuda: pooling mode %q is not supported", p)
		}
	}
	f := &encoderForward{g: g, mm: mm, w: w, weights: gpu.Buffers{G: g}, act: gpu.Buffers{G: g}, rope: map[float64][2]gpu.Handle{}}
	err := g.Do(func() error {
		up := func(what string, v []float32) gpu.Handle {
			if v == nil || f.weights.Err != nil {
				return 0
			}
			h := f.weights.Alloc(what, len(v), 4)
			if h != 0 {
				if err := g.HtoD(h, v); err != nil {
					f.weights.Err = err
				}
			}
			return h
		}
		lin := func(what string, l transformer.Linear) linearDev {
			if l.Out == 0 {
				return linearDev{}
			}
			return linearDev{w: up(what+".weight", l.W), b: up(what+".bias", l.B), out: l.Out, in: l.In}
		}
		f.word, f.position, f.type0 = up("word embeddings", w.Word), up("position embeddings", w.Position), up("token type embeddings", w.TokenType0)
		f.embNormW, f.embNormB = up("embedding norm", w.EmbNormW), up("embedding norm bias", w.EmbNormB)
		f.relBias = up("relative attention bias", w.RelBias)
		f.finalNormW, f.finalNormB = up("final norm", w.FinalNormW), up("final norm bias", w.FinalNormB)
		for i, l := range w.Layers {
			p := fmt.Sprintf("layer %d ", i)
			f.layers = append(f.layers, layerDev{
				q: lin(p+"query", l.Q), k: lin(p+"key", l.K), v: lin(p+"value", l.V), o: lin(p+"attention output", l.O),
				in: lin(p+"intermediate", l.In), out: lin(p+"output", l.Out),
				attnNormW: up(p+"attention norm", l.AttnNormW), attnNormB: up(p+"attention norm bias", l.AttnNormB),
				mlpNormW: up(p+"MLP norm", l.MLPNormW), mlpNormB: up(p+"MLP norm bias", l.MLPNormB),
			})
		}
		return f.weights.Err
	})
	if err != nil {
		g.Do(f.weights.Free)
		return nil, err
	}
	f.w = shapeOnly(w)
	return f, nil
}

// shapeOnly returns w without its weight values, which live on the device
// once uploaded (BERT's are copies the host need not keep).
func shapeOnly(w *transformer.Weights) *transformer.Weights {
	s := *w
	s.Word, s.Position, s.TokenType0, s.EmbNormW, s.EmbNormB, s.RelBias, s.FinalNormW, s.FinalNormB = nil, nil, nil, nil, nil, nil, nil, nil
	s.Layers = make([]transformer.LayerWeights, len(w.Layers))
	for i, l := range w.Layers {
		s.Layers[i] = transformer.LayerWeights{Window: l.Window, Theta: l.Theta}
	}
	return &s
}

func (f *encoderForward) close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	f.n, f.batch, f.l = 0, 0, 0
	return f.g.Do(func() error { return gpu.FirstErr(f.closeDense(), f.act.Free(), f.weights.Free()) })
}

// closeDense frees what the dense products keep on the device (bfloat16
// copies of the weights); inside do.
func (f *encoderForward) closeDense() error {
	if c, ok := f.mm.(interface{ close() error }); ok {
		return c.close()
	}
	return nil
}

func poolMode(p string) int {
	switch p {
	case transformer.PoolCLS:
		return 0
	case transformer.PoolMax:
		return 1
	case transformer.PoolMean:
		return 2
	case transformer.PoolMeanSqrtLen:
		return 3
	}
	return -1
}

// rowThreads is the block size of the one-block-per-row kernels.
func rowThreads(d int) int { return 32 * min(8, gpu.Blocks(d, 32)) }

// forward runs a batch and returns each encoding's pooled vector.
func (f *encoderForward) forward(batch []tokenizer.Encoding) ([][]float32, error) {
	l, ids, pos, mask, err := f.w.Pad(batch)
	if err != nil {
		return nil, err
	}
	return f.forwardPadded(len(batch), l, ids, pos, mask)
}

// forwardPadded runs b sequences of l tokens laid out by transformer.Weights.Pad:
// token ids, position ids (nil for none) and the attention mask, b·l each.
func (f *encoderForward) forwardPadded(b, l int, ids, pos []int32, mask []float32) ([][]float32, error) {
	w := f.w
	if len(ids) != b*l || len(mask) != b*l || pos != nil && len(pos) != b*l {
		return nil, fmt.Errorf("cuda: a batch of %d x %d tokens with %d ids, %d positions and %d mask values", b, l, len(ids), len(pos), len(mask))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, fmt.Errorf("cuda: the GPU encoder is closed")
	}
	dim := w.Hidden * len(w.Pooling)
	out := make([]float32, b*dim)
	err := f.g.Do(func() error {
		if err := f.grow(b, l); err != nil {
			return err
		}
		if err := gpu.FirstErr(f.g.HtoD(f.ids, ids), f.g.HtoD(f.mask, mask)); err != nil {
			return err
		}
		posH := gpu.Handle(0)
		if pos != nil {
			if err := f.g.HtoD(f.pos, pos); err != nil {
				return err
			}
			posH = f.pos
		}
		h, err := f.run(b, l, posH)
		if err != nil {
			return err
		}
		if err := f.pool(h, b, l); err != nil {
			return err
		}
		return f.g.DtoH(out, f.out)
	})
	if err != nil {
		return nil, err
	}
	vs := make([][]float32, b)
	for k := range vs {
		vs[k] = out[k*dim : (k+1)*dim : (k+1)*dim]
	}
	return vs, nil
}

// grow makes the activation buffers hold b sequences of l tokens.
func (f *encoderForward) grow(b, l int) error {
	n := b * l
	if n <= f.n && b <= f.batch && l <= f.l {
		return nil
	}
	if err := f.act.Free(); err != nil {
		return err
	}
	f.biasL = 0
	clear(f.rope)
	n, b, l = max(n, f.n), max(b, f.batch), max(l, f.l)
	w := f.w
	d, ff := w.Hidden, w.Intermediate
	a := &f.act
	f.x, f.h, f.o, f.ctx = a.Alloc("hidden states", n*d, 4), a.Alloc("normed states", n*d, 4), a.Alloc("layer outputs", n*d, 4), a.Alloc("attention context", n*d, 4)
	if w.Arch == "modernbert" {
		f.q = a.Alloc("fused QKV", n*3*d, 4)
		f.gate = a.Alloc("GeGLU input", n*2*ff, 4)
	} else {
		f.q, f.k, f.v = a.Alloc("queries", n*d, 4), a.Alloc("keys", n*d, 4), a.Alloc("values", n*d, 4)
	}
	f.inter = a.Alloc("intermediate", n*ff, 4)
	f.ids, f.pos, f.mask = a.Alloc("token ids", n, 4), a.Alloc("position ids", n, 4), a.Alloc("attention mask", n, 4)
	f.out = a.Alloc("pooled vectors", b*d*max(1, len(w.Pooling)), 4)
	if w.Arch == "mpnet" {
		f.bias = a.Alloc("relative position bias", w.Heads*l*l, 4)
	}
	if a.Err != nil {
		err := a.Err
		a.Free()
		f.n, f.batch, f.l = 0, 0, 0
		return err
	}
	f.n, f.batch, f.l = n, b, l
	return nil
}

// lin runs a linear layer and its bias (and GELU when gelu is set).
func (f *encoderForward) lin(y, x gpu.Handle, p linearDev, n int, gelu bool) error {
	if err := f.mm.linear(y, x, p.w, n, p.out, p.in); err != nil {
		return err
	}
	if p.b == 0 && !gelu {
		return nil
	}
	return f.g.Launch("bias_act", gpu.Blocks(n*p.out, 256), 1, 256, y, p.b, n, p.out, gelu)
}

func (f *encoderForward) norm(y, x, res, gamma, beta gpu.Handle, n int) error {
	d := f.w.Hidden
	return f.g.Launch("layer_norm", n, 1, rowThreads(d), y, x, res, gamma, beta, n, d, f.w.Eps)
}

// attention launches the attention kernel on q, k, v of leading dimension ld.
func (f *encoderForward) attention(q, k, v gpu.Handle, ld, b, l int, bias gpu.Handle, window int) error {
	w := f.w
	dh := w.Hidden / w.Heads
	return f.g.Launch(attentionKernel(dh), b*w.Heads, gpu.Blocks(l, attentionRows), attentionThreads, f.ctx, q, k, v, f.mask, bias, b, l, w.Heads, dh, ld, window, math.Sqrt(float64(dh)))
}

// run runs the transformer and returns the gpu.Handle of the last hidden states.
func (f *encoderForward) run(b, l int, pos gpu.Handle) (gpu.Handle, error) {
	w := f.w
	n, d := b*l, w.Hidden
	g := f.g
	if err := g.Launch("embed", gpu.Blocks(n*d, 256), 1, 256, f.x, f.ids, pos, f.word, f.position, f.type0, n, d); err != nil {
		return 0, err
	}
	if err := f.norm(f.x, f.x, 0, f.embNormW, f.embNormB, n); err != nil {
		return 0, err
	}
	if w.Arch == "modernbert" {
		return f.runModern(b, l)
	}
	bias := gpu.Handle(0)
	if w.Arch == "mpnet" {
		if f.biasL != l {
			if err := g.Launch("mpnet_rel_bias", gpu.Blocks(l*l, 256), 1, 256, f.bias, f.relBias, l, w.Heads, w.Buckets, w.MaxDistance); err != nil {
				return 0, err
			}
			f.biasL = l
		}
		bias = f.bias
	}
	for _, p := range f.layers {
		err := gpu.FirstErr(
			f.lin(f.q, f.x, p.q, n, false),
			f.lin(f.k, f.x, p.k, n, false),
			f.lin(f.v, f.x, p.v, n, false),
			f.attention(f.q, f.k, f.v, d, b, l, bias, 0),
			f.lin(f.o, f.ctx, p.o, n, false),
			f.norm(f.x, f.o, f.x, p.attnNormW, p.attnNormB, n),
			f.lin(f.inter, f.x, p.in, n, true),
			f.lin(f.o, f.inter, p.out, n, false),
			f.norm(f.x, f.o, f.x, p.mlpNormW, p.mlpNormB, n),
		)
		if err != nil {
			return 0, err
		}
	}
	return f.x, nil
}

// runModern is ModernBERT's pre-norm layers (Warner et al. 2024): rotary
// positions, global and sliding-window attention, GeGLU, a final norm.
func (f *encoderForward) runModern(b, l int) (gpu.Handle, error) {
	w := f.w
	n, d, ff := b*l, w.Hidden, w.Intermediate
	dh := d / w.Heads
	g := f.g
	for i, p := range f.layers {
		lw := w.Layers[i]
		tab, ok := f.rope[lw.Theta]
		if !ok {
			// Tables for the longest length allocated, which serve every
			// shorter one (position p is row p), live with the activations.
			cos, sin := w.Rope(lw.Theta, f.l)
			tab = [2]gpu.Handle{f.act.Alloc("rotary cosines", len(cos), 4), f.act.Alloc("rotary sines", len(sin), 4)}
			if f.act.Err != nil {
				return 0, f.act.Err
			}
			if err := gpu.FirstErr(g.HtoD(tab[0], cos), g.HtoD(tab[1], sin)); err != nil {
				return 0, err
			}
			f.rope[lw.Theta] = tab
		}
		in := f.x
		if p.attnNormW != 0 {
			if err := f.norm(f.h, f.x, 0, p.attnNormW, p.attnNormB, n); err != nil {
				return 0, err
			}
			in = f.h
		}
		k, v := f.q+gpu.Handle(4*d), f.q+gpu.Handle(8*d)
		err := gpu.FirstErr(
			f.lin(f.q, in, p.q, n, false),
			g.Launch("rope", gpu.Blocks(n*w.Heads*dh/2, 256), 1, 256, f.q, k, tab[0], tab[1], n, l, w.Heads, dh, 3*d),
			f.attention(f.q, k, v, 3*d, b, l, 0, lw.Window),
			f.lin(f.o, f.ctx, p.o, n, false),
			g.Launch("residual_add", gpu.Blocks(n*d, 256), 1, 256, f.x, f.x, f.o, n*d),
			f.norm(f.h, f.x, 0, p.mlpNormW, p.mlpNormB, n),
			f.lin(f.gate, f.h, p.in, n, false),
			g.Launch("geglu", gpu.Blocks(n*ff, 256), 1, 256, f.inter, f.gate, n, ff),
			f.lin(f.o, f.inter, p.out, n, false),
			g.Launch("residual_add", gpu.Blocks(n*d, 256), 1, 256, f.x, f.x, f.o, n*d),
		)
		if err != nil {
			return 0, err
		}
	}
	if err := f.norm(f.h, f.x, 0, f.finalNormW, f.finalNormB, n); err != nil {
		return 0, err
	}
	return f.h, nil
}

// pool writes the pooled (and normalised) vectors of hidden states h to f.out.
func (f *encoderForward) pool(h gpu.Handle, b, l int) error {
	w := f.w
	d := w.Hidden
	dim := d * len(w.Pooling)
	for i, p := range w.Pooling {
		if err := f.g.Launch("pool", b, 1, rowThreads(d), f.out, h, f.mask, b, l, d, poolMode(p), dim, i*d); err != nil {
			return err
		}
	}
	if w.Normalize {
		return f.g.Launch("l2_normalize", b, 1, rowThreads(dim), f.out, b, dim)
	}
	return nil
}
