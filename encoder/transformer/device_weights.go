package transformer

import (
	"context"
	"fmt"

	"github.com/jeirt/jeirt/encoder/tokenizer"
)

// Weights is a loaded transformer encoder's architecture and float32 weights,
// for forward passes that run elsewhere than this package's CPU code (the GPU
// forward of package cuda). Linear weights are in torch's layout, [out, in],
// so a layer is y = x·Wᵀ + b.
type Weights struct {
	// Arch is "bert", "mpnet" or "modernbert".
	Arch                                 string
	Hidden, Heads, Intermediate, Buckets int
	// Eps is the LayerNorm epsilon of every norm.
	Eps float64
	// Word is the token embedding table (vocab × Hidden); Position the
	// position table (nil for ModernBERT); TokenType0 the row of token type
	// 0 (BERT only, else nil).
	Word, Position, TokenType0 []float32
	EmbNormW, EmbNormB         []float32 // EmbNormB nil: a norm without bias
	// RelBias is MPNet's relative attention bias table (Buckets × Heads),
	// bucketed up to MaxDistance.
	RelBias     []float32
	MaxDistance int
	// FinalNormW and FinalNormB are ModernBERT's final norm.
	FinalNormW, FinalNormB []float32
	Layers                 []LayerWeights
	// Pooling and Normalize are the sentence-transformers modules after the
	// transformer: PoolCLS, PoolMax, PoolMean, PoolMeanSqrtLen concatenated
	// in order, then L2 normalisation.
	Pooling   []string
	Normalize bool

	pad        func(batch []tokenizer.Encoding) (l int, ids []int, mask []float32, err error)
	positionOf func(ids []int, l int) []int
}

// LayerWeights is one transformer layer. BERT and MPNet (post-norm): Q, K, V,
// O, In, Out with AttnNormW/B after attention and MLPNormW/B after the MLP.
// ModernBERT (pre-norm): Q holds the fused Wqkv (3·Hidden × Hidden), In the
// GeGLU input and gate (2·Intermediate × Hidden), AttnNormW/B the norm before
// attention (nil in layer 0) and MLPNormW/B the norm before the MLP; biases
// may be nil.
type LayerWeights struct {
	Q, K, V, O, In, Out                      Linear
	AttnNormW, AttnNormB, MLPNormW, MLPNormB []float32
	// Window is ModernBERT's local attention half-width (0: global);
	// Theta its rotary base for this layer.
	Window int
	Theta  float64
}

// Linear is a torch.nn.Linear: W is [Out, In], B (may be nil) is [Out].
type Linear struct {
	W, B    []float32
	Out, In int
}

// Rope returns the rotary tables of ModernBERT's forward for base theta and
// l positions: cos and sin of position p times frequency i at p·dh/2 + i,
// the same float32 values the CPU forward uses.
func (w *Weights) Rope(theta float64, l int) (cos, sin []float32) {
	dh := w.Hidden / w.Heads
	r := newRopeTable(theta, dh)
	r.upTo(l)
	return r.cos[:l*dh/2], r.sin[:l*dh/2]
}

// Pad lays out a batch as the CPU forward does: right-padded with the pad
// token to the longest encoding rounded up to a multiple of 8 (bounded by
// the sequence length and the model's positions), with the attention mask
// (1 for real tokens) and each token's position id (nil for ModernBERT,
// whose positions are rotary).
func (w *Weights) Pad(batch []tokenizer.Encoding) (l int, ids, pos []int32, mask []float32, err error) {
	if w.pad == nil {
		return 0, nil, nil, nil, fmt.Errorf("encoder: weights of no loaded %s model cannot lay out a batch", w.Arch)
	}
	l, wide, mask, err := w.pad(batch)
	if err != nil {
		return 0, nil, nil, nil, err
	}
	ids = make([]int32, len(wide))
	for k, v := range wide {
		ids[k] = int32(v)
	}
	if w.positionOf != nil {
		p := w.positionOf(wide, l)
		pos = make([]int32, len(p))
		for k, v := range p {
			pos[k] = int32(v)
		}
	}
	return l, ids, pos, mask, nil
}

// PooledForward returns the final vector (pooled, normalised when the model
// says so) of each encoding of a batch.
type PooledForward func(batch []tokenizer.Encoding) ([][]float32, error)

// encodePooled is encodeSorted with a forward that pools itself.
func encodePooled(ctx context.Context, texts []string, tok *tokenizer.Tokenizer, bs, dim int, f PooledForward) ([][]float32, error) {
	return encodeSorted(ctx, texts, tok, bs, dim, func(batch []tokenizer.Encoding) ([]float32, int, error) {
		vs, err := f(batch)
		if err != nil {
			return nil, 0, err
		}
		if len(vs) != len(batch) {
			return nil, 0, fmt.Errorf("forward returned %d vectors for %d texts", len(vs), len(batch))
		}
		flat := make([]float32, 0, len(vs)*dim)
		for _, v := range vs {
			if len(v) != dim {
				return nil, 0, fmt.Errorf("forward returned a vector of %d for dimension %d", len(v), dim)
			}
			flat = append(flat, v...)
		}
		return flat, 1, nil
	}, func(h []float32, _ []int32) []float32 { return append([]float32(nil), h...) })
}

// EncodeWith encodes texts as Encode does (tokenised, sorted by length, run
// in batches of BatchSize) with f in place of the CPU forward and pooling.
func (b *BERT) EncodeWith(ctx context.Context, texts []string, f PooledForward) ([][]float32, error) {
	return encodePooled(ctx, texts, b.Tokenizer, b.BatchSize, b.Dim(), f)
}

// EncodeWith encodes texts as Encode does with f in place of the CPU forward.
func (m *MPNet) EncodeWith(ctx context.Context, texts []string, f PooledForward) ([][]float32, error) {
	return encodePooled(ctx, texts, m.Tokenizer, m.BatchSize, m.Dim(), f)
}

// EncodeWith encodes texts as Encode does with f in place of the CPU forward.
func (m *ModernBERT) EncodeWith(ctx context.Context, texts []string, f PooledForward) ([][]float32, error) {
	return encodePooled(ctx, texts, m.Tokenizer, m.BatchSize, m.Dim(), f)
}

// Weights returns the BERT's architecture and weights (the linear weights
// unpacked back to torch's layout).
func (b *BERT) Weights() *Weights {
	c := &b.Config
	w := b.w
	back := func(l linear) Linear {
		return Linear{W: torchLayout(l.w, l.out, l.in), B: l.b, Out: l.out, In: l.in}
	}
	d := c.HiddenSize
	out := &Weights{
		Arch: "bert", Hidden: d, Heads: c.NumAttentionHeads, Intermediate: c.IntermediateSize, Eps: c.LayerNormEps,
		Word: w.word.Float32s(), Position: w.position.Float32s(), TokenType0: w.tokenType.Float32s()[:d],
		EmbNormW: w.embLNw.Float32s(), EmbNormB: w.embLNb.Float32s(),
		Pooling: b.Pooling, Normalize: b.Normalize,
		pad: func(batch []tokenizer.Encoding) (int, []int, []float32, error) {
			return padBatch(batch, b.MaxSeqLen, c.MaxPositionEmbeddings, c.VocabSize, int(b.Tokenizer.PadID()))
		},
		positionOf: func(ids []int, l int) []int {
			p := make([]int, len(ids))
			for k := range p {
				p[k] = k % l
			}
			return p
		},
	}
	for _, l := range w.layers {
		qkv := back(l.qkv) // Q, K and V one after the other
		third := func(i int) Linear {
			return Linear{W: qkv.W[i*d*d : (i+1)*d*d], B: qkv.B[i*d : (i+1)*d], Out: d, In: d}
		}
		out.Layers = append(out.Layers, LayerWeights{
			Q: third(0), K: third(1), V: third(2), O: back(l.attnOut), In: back(l.inter), Out: back(l.out),
			AttnNormW: l.attnLNw.Float32s(), AttnNormB: l.attnLNb.Float32s(),
			MLPNormW: l.outLNw.Float32s(), MLPNormB: l.outLNb.Float32s(),
		})
	}
	return out
}

// Weights returns the MPNet's architecture and weights.
func (m *MPNet) Weights() *Weights {
	c := &m.Config
	w := m.w
	d, ff := c.HiddenSize, c.IntermediateSize
	pad := *c.PadTokenID
	out := &Weights{
		Arch: "mpnet", Hidden: d, Heads: c.NumAttentionHeads, Intermediate: ff, Eps: c.LayerNormEps,
		Buckets: c.RelativeAttentionNumBuckets, RelBias: w.relBias, MaxDistance: 128,
		Word: w.word, Position: w.position, EmbNormW: w.embLNw, EmbNormB: w.embLNb,
		Pooling: m.Pooling, Normalize: m.Normalize,
		pad: func(batch []tokenizer.Encoding) (int, []int, []float32, error) {
			return padBatch(batch, m.MaxSeqLen, c.maxPositions(), c.VocabSize, pad)
		},
		positionOf: func(ids []int, l int) []int {
			p := make([]int, len(ids))
			mpnetPositionIDs(p, ids, l, pad)
			return p
		},
	}
	for _, l := range w.layers {
		out.Layers = append(out.Layers, LayerWeights{
			Q: Linear{l.qw, l.qb, d, d}, K: Linear{l.kw, l.kb, d, d}, V: Linear{l.vw, l.vb, d, d},
			O: Linear{l.ow, l.ob, d, d}, In: Linear{l.iw, l.ib, ff, d}, Out: Linear{l.outw, l.outb, d, ff},
			AttnNormW: l.attnLNw, AttnNormB: l.attnLNb, MLPNormW: l.outLNw, MLPNormB: l.outLNb,
		})
	}
	return out
}

// Weights returns the ModernBERT's architecture and weights.
func (m *ModernBERT) Weights() *Weights {
	c := &m.Config
	w := m.w
	d, ff := c.HiddenSize, c.IntermediateSize
	out := &Weights{
		Arch: "modernbert", Hidden: d, Heads: c.NumAttentionHeads, Intermediate: ff, Eps: c.NormEps,
		Word: w.tok, EmbNormW: w.embNormW, EmbNormB: w.embNormB, FinalNormW: w.finalW, FinalNormB: w.finalB,
		Pooling: m.Pooling, Normalize: m.Normalize,
		pad: func(batch []tokenizer.Encoding) (int, []int, []float32, error) {
			return padBatch(batch, m.MaxSeqLen, c.MaxPositionEmbeddings, c.VocabSize, *c.PadTokenID)
		},
	}
	for i, l := range w.layers {
		lw := LayerWeights{
			Q: Linear{l.wqkv, l.bqkv, 3 * d, d}, O: Linear{l.wo, l.bo, d, d},
			In: Linear{l.wi, l.bi, 2 * ff, d}, Out: Linear{l.wmo, l.bmo, d, ff},
			AttnNormW: l.attnNormW, AttnNormB: l.attnNormB, MLPNormW: l.mlpNormW, MLPNormB: l.mlpNormB,
			Theta: c.GlobalRopeTheta,
		}
		if !c.global(i) {
			lw.Theta, lw.Window = c.LocalRopeTheta, c.LocalAttention/2
		}
		out.Layers = append(out.Layers, lw)
	}
	return out
}
