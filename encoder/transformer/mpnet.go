package transformer

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/jeirt/jeirt/encoder/tokenizer"
	"github.com/jeirt/jeirt/model/tensorfile"
)

// MPNetConfig is the part of a Hugging Face MPNetConfig (config.json) that
// the MPNet forward pass needs.
type MPNetConfig struct {
	BaseConfig
	HiddenAct                   string  `json:"hidden_act"`
	LayerNormEps                float64 `json:"layer_norm_eps"`
	RelativeAttentionNumBuckets int     `json:"relative_attention_num_buckets"`
	PadTokenID                  *int    `json:"pad_token_id"`
}

func (c *MPNetConfig) check(file string) error {
	if c.ModelType != "mpnet" {
		return fmt.Errorf("%s: model_type %q is not mpnet", file, c.ModelType)
	}
	if err := c.checkArchitectures(file, "MPNetModel", "MPNetForMaskedLM"); err != nil {
		return err
	}
	if c.HiddenAct != "gelu" {
		return fmt.Errorf("%s: hidden_act %q is not supported (want \"gelu\", exact erf GELU)", file, c.HiddenAct)
	}
	if c.RelativeAttentionNumBuckets == 0 {
		c.RelativeAttentionNumBuckets = 32
	}
	if err := checkPositive(file,
		setting{"hidden_size", c.HiddenSize}, setting{"num_hidden_layers", c.NumHiddenLayers},
		setting{"num_attention_heads", c.NumAttentionHeads}, setting{"intermediate_size", c.IntermediateSize},
		setting{"max_position_embeddings", c.MaxPositionEmbeddings},
		setting{"vocab_size", c.VocabSize}, setting{"relative_attention_num_buckets", c.RelativeAttentionNumBuckets}); err != nil {
		return err
	}
	if c.HiddenSize%c.NumAttentionHeads != 0 {
		return fmt.Errorf("%s: hidden_size %d is not a multiple of num_attention_heads %d", file, c.HiddenSize, c.NumAttentionHeads)
	}
	if c.RelativeAttentionNumBuckets%4 != 0 {
		return fmt.Errorf("%s: relative_attention_num_buckets %d is not a multiple of 4", file, c.RelativeAttentionNumBuckets)
	}
	if c.LayerNormEps <= 0 {
		c.LayerNormEps = 1e-12
	}
	if c.PadTokenID == nil {
		one := 1
		c.PadTokenID = &one
	}
	if p := *c.PadTokenID; p < 0 || p >= c.VocabSize || p+1 >= c.MaxPositionEmbeddings {
		return fmt.Errorf("%s: pad_token_id %d does not fit vocab_size %d and max_position_embeddings %d", file, p, c.VocabSize, c.MaxPositionEmbeddings)
	}
	return nil
}

// maxPositions is the longest input: position ids start after the padding
// index (pad_token_id+1 for the first token).
func (c *MPNetConfig) maxPositions() int  { return c.MaxPositionEmbeddings - *c.PadTokenID - 1 }
func (c *MPNetConfig) defaultSeqLen() int { return 512 }

// MPNet is a frozen MPNet sentence encoder (Song et al. 2020, "MPNet: Masked
// and Permuted Pre-training for Language Understanding"; Hugging Face
// MPNetModel) read from a sentence-transformers folder such as
// all-mpnet-base-v2: tokenizer, transformer, pooling and, if modules.json
// lists it, L2 normalisation.
type MPNet struct {
	Pipeline
	Config MPNetConfig

	w *mpnetWeights

	mu    sync.Mutex
	bufs  arena
	biasL int       // the length bias was computed for
	bias  []float32 // relative position bias, heads × L × L
}

type mpnetWeights struct {
	word, position, embLNw, embLNb []float32
	relBias                        []float32 // buckets × heads
	layers                         []mpnetLayer
}

// mpnetLayer holds torch's [out, in] Linear weights as they are stored.
type mpnetLayer struct {
	qw, qb, kw, kb, vw, vb, ow, ob []float32
	attnLNw, attnLNb               []float32
	iw, ib, outw, outb             []float32
	outLNw, outLNb                 []float32
}

// OpenMPNet loads an MPNet sentence-transformers folder (see OpenBERT for
// the files read).
func OpenMPNet(dir string) (*MPNet, error) {
	m := &MPNet{}
	var err error
	if m.Pipeline, m.w, err = openFolder(dir, "mpnet/v1/", &m.Config, loadMPNetWeights); err != nil {
		return nil, err
	}
	return m, nil
}

// weightGetter returns a lookup of tensors by name after an optional prefix
// (the one of *For* checkpoints), checking each shape.
func weightGetter(file string, st *tensorfile.Safetensors, first string, prefixes ...string) func(name string, shape ...int) ([]float32, error) {
	prefix := ""
	if _, ok := st.Tensors[first]; !ok {
		for _, p := range prefixes {
			if _, ok := st.Tensors[p+first]; ok {
				prefix = p
				break
			}
		}
	}
	return func(name string, shape ...int) ([]float32, error) {
		t, ok := st.Tensors[prefix+name]
		if !ok {
			return nil, fmt.Errorf("%s: tensor %q is missing", file, prefix+name)
		}
		if fmt.Sprint(t.Shape) != fmt.Sprint(shape) {
			return nil, fmt.Errorf("%s: tensor %q has shape %v, config.json implies %v", file, prefix+name, t.Shape, shape)
		}
		return t.Data, nil
	}
}

func loadMPNetWeights(file string, st *tensorfile.Safetensors, c *MPNetConfig) (*mpnetWeights, error) {
	get := weightGetter(file, st, "embeddings.word_embeddings.weight", "mpnet.")
	d, ff := c.HiddenSize, c.IntermediateSize
	w := &mpnetWeights{}
	var err error
	for _, s := range []struct {
		dst   *[]float32
		name  string
		shape []int
	}{
		{&w.word, "embeddings.word_embeddings.weight", []int{c.VocabSize, d}},
		{&w.position, "embeddings.position_embeddings.weight", []int{c.MaxPositionEmbeddings, d}},
		{&w.embLNw, "embeddings.LayerNorm.weight", []int{d}},
		{&w.embLNb, "embeddings.LayerNorm.bias", []int{d}},
		{&w.relBias, "encoder.relative_attention_bias.weight", []int{c.RelativeAttentionNumBuckets, c.NumAttentionHeads}},
	} {
		if *s.dst, err = get(s.name, s.shape...); err != nil {
			return nil, err
		}
	}
	for i := 0; i < c.NumHiddenLayers; i++ {
		p := fmt.Sprintf("encoder.layer.%d.", i)
		var l mpnetLayer
		for _, s := range []struct {
			dst   *[]float32
			name  string
			shape []int
		}{
			{&l.qw, "attention.attn.q.weight", []int{d, d}}, {&l.qb, "attention.attn.q.bias", []int{d}},
			{&l.kw, "attention.attn.k.weight", []int{d, d}}, {&l.kb, "attention.attn.k.bias", []int{d}},
			{&l.vw, "attention.attn.v.weight", []int{d, d}}, {&l.vb, "attention.attn.v.bias", []int{d}},
			{&l.ow, "attention.attn.o.weight", []int{d, d}}, {&l.ob, "attention.attn.o.bias", []int{d}},
			{&l.attnLNw, "attention.LayerNorm.weight", []int{d}}, {&l.attnLNb, "attention.LayerNorm.bias", []int{d}},
			{&l.iw, "intermediate.dense.weight", []int{ff, d}}, {&l.ib, "intermediate.dense.bias", []int{ff}},
			{&l.outw, "output.dense.weight", []int{d, ff}}, {&l.outb, "output.dense.bias", []int{d}},
			{&l.outLNw, "output.LayerNorm.weight", []int{d}}, {&l.outLNb, "output.LayerNorm.bias", []int{d}},
		} {
			if *s.dst, err = get(p+s.name, s.shape...); err != nil {
				return nil, err
			}
		}
		w.layers = append(w.layers, l)
	}
	if _, err := get(fmt.Sprintf("encoder.layer.%d.attention.attn.q.weight", c.NumHiddenLayers), d, d); err == nil {
		return nil, fmt.Errorf("%s: has a layer %d but config.json says num_hidden_layers %d", file, c.NumHiddenLayers, c.NumHiddenLayers)
	}
	return w, nil
}

// Dim implements Encoder.
func (m *MPNet) Dim() int { return m.Config.HiddenSize * len(m.Pooling) }

// Encode implements Encoder, as BERT.Encode does.
func (m *MPNet) Encode(ctx context.Context, texts []string) ([][]float32, error) {
	return m.encode(ctx, texts, m.Config.HiddenSize, m.Forward)
}

// mpnetPositionIDs is Hugging Face's create_position_ids_from_input_ids: the
// tokens that are not the padding index count from padding_idx+1; every
// padding-index token, even one inside a text, gets padding_idx and does not
// advance the count.
func mpnetPositionIDs(dst []int, ids []int, l, pad int) {
	for r := 0; r < len(ids)/l; r++ {
		n := 0
		for t := 0; t < l; t++ {
			if ids[r*l+t] == pad {
				dst[r*l+t] = pad
				continue
			}
			n++
			dst[r*l+t] = n + pad
		}
	}
}

// mpnetBucket is MPNet's relative_position_bucket for d = key − query
// position (after T5, Raffel et al. 2020, §2.1): buckets/2 for each
// direction, half of them exact offsets, the rest logarithmic up to
// maxDistance; keys to the right of the query take the upper half.
func mpnetBucket(d, buckets, maxDistance int) int {
	half := buckets / 2
	ret := 0
	n := -d
	if n < 0 {
		ret += half
		n = -n
	}
	exact := half / 2
	if n < exact {
		return ret + n
	}
	// HF computes the logarithm in float32.
	v := exact + int(float32(math.Log(float64(float32(n)/float32(exact)))/math.Log(float64(maxDistance)/float64(exact))*float64(half-exact)))
	return ret + min(v, half-1)
}

// Forward runs MPNetModel on a batch of encodings, right-padded to the
// longest rounded up to a multiple of 8, and returns the last hidden states
// (len(batch) × L × D, row-major) and L:
//
//	x = LN(word[ids] + position[position_ids])
//	bias_h(i, j) = relative_attention_bias[bucket(j − i), h], shared by all layers
//	per layer (post-LN, as BERT):
//	  x = LN(x + attention(x)·Wo + bo)        attention with bias_h in the scores
//	  x = LN(x + GELU(x·Wi + bi)·Wo2 + bo2)
func (m *MPNet) Forward(batch []tokenizer.Encoding) ([]float32, int, error) {
	c := &m.Config
	pad := *c.PadTokenID
	l, ids, mask, err := padBatch(batch, m.MaxSeqLen, c.maxPositions(), c.VocabSize, pad)
	if err != nil {
		return nil, 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.bufs == nil {
		m.bufs = arena{}
	}
	a := m.bufs
	b, d, heads, ff := len(batch), c.HiddenSize, c.NumAttentionHeads, c.IntermediateSize
	dh := d / heads
	n := b * l
	w := m.w

	pos := make([]int, n)
	mpnetPositionIDs(pos, ids, l, pad)
	x := a.get("x", n*d)
	for t := 0; t < n; t++ {
		we, pe := w.word[ids[t]*d:(ids[t]+1)*d], w.position[pos[t]*d:(pos[t]+1)*d]
		row := x[t*d : (t+1)*d]
		for k := range row {
			row[k] = we[k] + pe[k]
		}
	}
	layerNorm(x, x, w.embLNw, w.embLNb, n, d, c.LayerNormEps)

	if m.biasL != l {
		m.bias = make([]float32, heads*l*l)
		for i := 0; i < l; i++ {
			for j := 0; j < l; j++ {
				bk := mpnetBucket(j-i, c.RelativeAttentionNumBuckets, 128)
				for h := 0; h < heads; h++ {
					m.bias[(h*l+i)*l+j] = w.relBias[bk*heads+h]
				}
			}
		}
		m.biasL = l
	}

	q, k, v := a.get("q", n*d), a.get("k", n*d), a.get("v", n*d)
	ctx, o, inter := a.get("ctx", n*d), a.get("o", n*d), a.get("inter", n*ff)
	scale := float32(math.Sqrt(float64(dh)))
	for _, lw := range w.layers {
		linearInto(q, x, lw.qw, lw.qb, n, d, d)
		linearInto(k, x, lw.kw, lw.kb, n, d, d)
		linearInto(v, x, lw.vw, lw.vb, n, d, d)
		attention(ctx, q, k, v, d, mask, m.bias, b, l, heads, dh, scale, 0, a, "attn")
		linearInto(o, ctx, lw.ow, lw.ob, n, d, d)
		addInto(o, o, x)
		layerNorm(x, o, lw.attnLNw, lw.attnLNb, n, d, c.LayerNormEps)
		linearInto(inter, x, lw.iw, lw.ib, n, d, ff)
		geluInto(inter, inter)
		linearInto(o, inter, lw.outw, lw.outb, n, ff, d)
		addInto(o, o, x)
		layerNorm(x, o, lw.outLNw, lw.outLNb, n, d, c.LayerNormEps)
	}
	return append([]float32(nil), x...), l, nil
}

// padBatch right-pads a batch to its longest encoding rounded up to a
// multiple of 8 (at most maxSeqLen, or the longest if longer, and at most
// maxPos) with the pad id and mask 0, checking every id against vocab.
func padBatch(batch []tokenizer.Encoding, maxSeqLen, maxPos, vocab, pad int) (int, []int, []float32, error) {
	l := 0
	for _, e := range batch {
		l = max(l, len(e.IDs))
	}
	l = min((l+7)/8*8, max(maxSeqLen, l))
	l = min(l, maxPos)
	ids := make([]int, len(batch)*l)
	mask := make([]float32, len(batch)*l)
	for k, e := range batch {
		if len(e.IDs) > l {
			return 0, nil, nil, fmt.Errorf("encoding of %d tokens exceeds the model's %d positions", len(e.IDs), l)
		}
		for t := 0; t < l; t++ {
			ids[k*l+t] = pad
			if t < len(e.IDs) {
				id := int(e.IDs[t])
				if id < 0 || id >= vocab {
					return 0, nil, nil, fmt.Errorf("token id %d outside vocab_size %d", id, vocab)
				}
				ids[k*l+t] = id
				mask[k*l+t] = float32(e.AttentionMask[t])
			}
		}
	}
	return l, ids, mask, nil
}
