package transformer

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/jeirt/jeirt/encoder/tokenizer"
	"github.com/jeirt/jeirt/model/limits"
	"github.com/jeirt/jeirt/model/tensorfile"
)

// ModernBERTConfig is the part of a Hugging Face ModernBertConfig
// (config.json) that the ModernBERT forward pass needs. Zero values take
// ModernBertConfig's defaults.
type ModernBERTConfig struct {
	BaseConfig
	HiddenActivation       string   `json:"hidden_activation"`
	NormEps                float64  `json:"norm_eps"`
	NormBias               bool     `json:"norm_bias"`
	AttentionBias          bool     `json:"attention_bias"`
	MLPBias                bool     `json:"mlp_bias"`
	PadTokenID             *int     `json:"pad_token_id"`
	GlobalAttnEveryNLayers int      `json:"global_attn_every_n_layers"`
	LocalAttention         int      `json:"local_attention"`
	GlobalRopeTheta        float64  `json:"global_rope_theta"`
	LayerTypes             []string `json:"layer_types"`

	// LocalRopeTheta is the rotary base of the sliding-window layers:
	// local_rope_theta, 10,000 when the key is absent, and the global base
	// when it is null (as ModernBertAttention does).
	LocalRopeTheta float64         `json:"-"`
	LocalRopeRaw   json.RawMessage `json:"local_rope_theta"`
	// RopeParameters is the newer form of both bases (transformers 5):
	// {"full_attention": {"rope_type": "default", "rope_theta": ...},
	// "sliding_attention": {...}}, or one {"rope_type", "rope_theta"} for
	// every layer. It overrides the two keys above when present.
	RopeParameters json.RawMessage `json:"rope_parameters"`
}

// ropeParams is one entry of rope_parameters.
type ropeParams struct {
	RopeType  string   `json:"rope_type"`
	RopeTheta *float64 `json:"rope_theta"`
}

// ropeBases settles GlobalRopeTheta and LocalRopeTheta from the config's
// keys (see LocalRopeTheta and RopeParameters); only the plain rotary
// embedding ("default") is supported.
func (c *ModernBERTConfig) ropeBases(file string) error {
	if c.GlobalRopeTheta == 0 {
		c.GlobalRopeTheta = 160000
	}
	switch raw := strings.TrimSpace(string(c.LocalRopeRaw)); raw {
	case "":
		c.LocalRopeTheta = 10000
	case "null":
		c.LocalRopeTheta = c.GlobalRopeTheta
	default:
		if err := json.Unmarshal(c.LocalRopeRaw, &c.LocalRopeTheta); err != nil {
			return fmt.Errorf("%s: local_rope_theta %s is not a number", file, limits.Clip(raw))
		}
	}
	if raw := strings.TrimSpace(string(c.RopeParameters)); raw != "" && raw != "null" {
		use := func(key string, p ropeParams, theta *float64) error {
			if p.RopeType != "" && p.RopeType != "default" {
				return fmt.Errorf("%s: rope_parameters%s: rope_type %q is not supported (want \"default\")", file, key, limits.Clip(p.RopeType))
			}
			if p.RopeTheta != nil {
				*theta = *p.RopeTheta
			}
			return nil
		}
		var one ropeParams
		var byLayer map[string]json.RawMessage
		if err := json.Unmarshal(c.RopeParameters, &byLayer); err != nil {
			return fmt.Errorf("%s: rope_parameters must be an object: %w", file, err)
		}
		if _, flat := byLayer["rope_theta"]; flat {
			if err := json.Unmarshal(c.RopeParameters, &one); err != nil {
				return fmt.Errorf("%s: rope_parameters: %w", file, err)
			}
			if err := use("", one, &c.GlobalRopeTheta); err != nil {
				return err
			}
			c.LocalRopeTheta = c.GlobalRopeTheta
		} else {
			for key, msg := range byLayer {
				var p ropeParams
				if err := json.Unmarshal(msg, &p); err != nil {
					return fmt.Errorf("%s: rope_parameters.%s: %w", file, limits.Clip(key), err)
				}
				switch key {
				case "full_attention":
					if err := use("."+key, p, &c.GlobalRopeTheta); err != nil {
						return err
					}
				case "sliding_attention":
					if err := use("."+key, p, &c.LocalRopeTheta); err != nil {
						return err
					}
				default:
					return fmt.Errorf("%s: rope_parameters.%s: unknown layer type (want full_attention or sliding_attention)", file, limits.Clip(key))
				}
			}
		}
	}
	for _, b := range []struct {
		key string
		v   float64
	}{{"global rope theta", c.GlobalRopeTheta}, {"local rope theta", c.LocalRopeTheta}} {
		if !(b.v > 0) || math.IsInf(b.v, 0) {
			return fmt.Errorf("%s: %s %v must be a positive number", file, b.key, b.v)
		}
	}
	return nil
}

func (c *ModernBERTConfig) check(file string) error {
	if c.ModelType != "modernbert" {
		return fmt.Errorf("%s: model_type %q is not modernbert", file, c.ModelType)
	}
	if err := c.checkArchitectures(file, "ModernBertModel", "ModernBertForMaskedLM"); err != nil {
		return err
	}
	if c.HiddenActivation == "" {
		c.HiddenActivation = "gelu"
	}
	if c.HiddenActivation != "gelu" {
		return fmt.Errorf("%s: hidden_activation %q is not supported (want \"gelu\", exact erf GELU)", file, c.HiddenActivation)
	}
	if c.NormEps <= 0 {
		c.NormEps = 1e-5
	}
	if c.MaxPositionEmbeddings == 0 {
		c.MaxPositionEmbeddings = 8192
	}
	if c.GlobalAttnEveryNLayers == 0 {
		c.GlobalAttnEveryNLayers = 3
	}
	if c.LocalAttention == 0 {
		c.LocalAttention = 128
	}
	if err := c.ropeBases(file); err != nil {
		return err
	}
	if err := checkPositive(file,
		setting{"hidden_size", c.HiddenSize}, setting{"num_hidden_layers", c.NumHiddenLayers},
		setting{"num_attention_heads", c.NumAttentionHeads}, setting{"intermediate_size", c.IntermediateSize},
		setting{"vocab_size", c.VocabSize}); err != nil {
		return err
	}
	if c.HiddenSize%c.NumAttentionHeads != 0 || (c.HiddenSize/c.NumAttentionHeads)%2 != 0 {
		return fmt.Errorf("%s: hidden_size %d over num_attention_heads %d is not an even head size (rotary embeddings rotate pairs)", file, c.HiddenSize, c.NumAttentionHeads)
	}
	if c.LayerTypes != nil {
		if len(c.LayerTypes) != c.NumHiddenLayers {
			return fmt.Errorf("%s: layer_types has %d entries for num_hidden_layers %d", file, len(c.LayerTypes), c.NumHiddenLayers)
		}
		for i, t := range c.LayerTypes {
			if t != "full_attention" && t != "sliding_attention" {
				return fmt.Errorf("%s: layer_types[%d] %q is not full_attention or sliding_attention", file, i, t)
			}
		}
	}
	if c.PadTokenID == nil {
		p := 50283
		c.PadTokenID = &p
	}
	if p := *c.PadTokenID; p < 0 || p >= c.VocabSize {
		return fmt.Errorf("%s: pad_token_id %d outside vocab_size %d", file, p, c.VocabSize)
	}
	return nil
}

// global says whether layer i attends globally (otherwise to a sliding
// window): every global_attn_every_n_layers-th layer from layer 0, or
// layer_types when the config lists them.
func (c *ModernBERTConfig) global(i int) bool {
	if c.LayerTypes != nil {
		return c.LayerTypes[i] == "full_attention"
	}
	return i%c.GlobalAttnEveryNLayers == 0
}

func (c *ModernBERTConfig) maxPositions() int  { return c.MaxPositionEmbeddings }
func (c *ModernBERTConfig) defaultSeqLen() int { return c.MaxPositionEmbeddings }

// ModernBERT is a frozen ModernBERT sentence encoder (Warner et al. 2024,
// "Smarter, Better, Faster, Longer: A Modern Bidirectional Encoder";
// Hugging Face ModernBertModel) read from a sentence-transformers folder:
// tokenizer, transformer, pooling (CLS for the JE-IRT paper's vectors, or
// mean, as 1_Pooling says) and, if modules.json lists it, L2 normalisation.
type ModernBERT struct {
	Pipeline
	Config ModernBERTConfig

	w *modernWeights

	mu   sync.Mutex
	bufs arena
	rope map[float64]*ropeTable
}

type modernWeights struct {
	tok, embNormW, embNormB []float32
	layers                  []modernLayer
	finalW, finalB          []float32
}

// modernLayer holds torch's [out, in] Linear weights as stored; attnNormW is
// nil in layer 0 (nn.Identity), biases are nil when the config has none.
type modernLayer struct {
	attnNormW, attnNormB []float32
	wqkv, bqkv, wo, bo   []float32
	mlpNormW, mlpNormB   []float32
	wi, bi, wmo, bmo     []float32
}

// OpenModernBERT loads a ModernBERT sentence-transformers folder (see
// OpenBERT for the files read); the weights may be ModernBertModel's or
// ModernBertForMaskedLM's ("model." prefix, the head ignored).
func OpenModernBERT(dir string) (*ModernBERT, error) {
	m := &ModernBERT{}
	var err error
	if m.Pipeline, m.w, err = openFolder(dir, "modernbert/v1/", &m.Config, loadModernWeights); err != nil {
		return nil, err
	}
	return m, nil
}

func loadModernWeights(file string, st *tensorfile.Safetensors, c *ModernBERTConfig) (*modernWeights, error) {
	get := weightGetter(file, st, "embeddings.tok_embeddings.weight", "model.")
	d, ff := c.HiddenSize, c.IntermediateSize
	w := &modernWeights{}
	var err error
	type spec struct {
		dst   *[]float32
		name  string
		shape []int
		on    bool
	}
	load := func(specs []spec) error {
		for _, s := range specs {
			if !s.on {
				continue
			}
			if *s.dst, err = get(s.name, s.shape...); err != nil {
				return err
			}
		}
		return nil
	}
	if err := load([]spec{
		{&w.tok, "embeddings.tok_embeddings.weight", []int{c.VocabSize, d}, true},
		{&w.embNormW, "embeddings.norm.weight", []int{d}, true},
		{&w.embNormB, "embeddings.norm.bias", []int{d}, c.NormBias},
		{&w.finalW, "final_norm.weight", []int{d}, true},
		{&w.finalB, "final_norm.bias", []int{d}, c.NormBias},
	}); err != nil {
		return nil, err
	}
	for i := 0; i < c.NumHiddenLayers; i++ {
		p := fmt.Sprintf("layers.%d.", i)
		var l modernLayer
		if err := load([]spec{
			{&l.attnNormW, p + "attn_norm.weight", []int{d}, i != 0},
			{&l.attnNormB, p + "attn_norm.bias", []int{d}, i != 0 && c.NormBias},
			{&l.wqkv, p + "attn.Wqkv.weight", []int{3 * d, d}, true},
			{&l.bqkv, p + "attn.Wqkv.bias", []int{3 * d}, c.AttentionBias},
			{&l.wo, p + "attn.Wo.weight", []int{d, d}, true},
			{&l.bo, p + "attn.Wo.bias", []int{d}, c.AttentionBias},
			{&l.mlpNormW, p + "mlp_norm.weight", []int{d}, true},
			{&l.mlpNormB, p + "mlp_norm.bias", []int{d}, c.NormBias},
			{&l.wi, p + "mlp.Wi.weight", []int{2 * ff, d}, true},
			{&l.bi, p + "mlp.Wi.bias", []int{2 * ff}, c.MLPBias},
			{&l.wmo, p + "mlp.Wo.weight", []int{d, ff}, true},
			{&l.bmo, p + "mlp.Wo.bias", []int{d}, c.MLPBias},
		}); err != nil {
			return nil, err
		}
		w.layers = append(w.layers, l)
	}
	if _, err := get(fmt.Sprintf("layers.%d.attn.Wo.weight", c.NumHiddenLayers), d, d); err == nil {
		return nil, fmt.Errorf("%s: has a layer %d but config.json says num_hidden_layers %d", file, c.NumHiddenLayers, c.NumHiddenLayers)
	}
	if _, err := get("layers.0.attn_norm.weight", d); err == nil {
		return nil, fmt.Errorf("%s: layer 0 has an attn_norm, which ModernBertModel does not have (nn.Identity)", file)
	}
	return w, nil
}

// Dim implements Encoder.
func (m *ModernBERT) Dim() int { return m.Config.HiddenSize * len(m.Pooling) }

// Encode implements Encoder, as BERT.Encode does.
func (m *ModernBERT) Encode(ctx context.Context, texts []string) ([][]float32, error) {
	return m.encode(ctx, texts, m.Config.HiddenSize, m.Forward)
}

// ropeTable holds the cos and sin of rotary position embeddings (Su et al.
// 2021, RoFormer, eq. 34) for one theta: position p, frequency i of a head of
// size dh, angle p·θ^(−2i/dh). They are computed in float32 as Hugging Face
// computes them (inv_freq = 1/θ^(2i/dh) in float32, angle = inv_freq·p in
// float32), which matters at 1e-7.
type ropeTable struct {
	invFreq  []float32
	cos, sin []float32 // positions × dh/2
}

func newRopeTable(theta float64, dh int) *ropeTable {
	r := &ropeTable{invFreq: make([]float32, dh/2)}
	for i := range r.invFreq {
		x := float32(2*i) / float32(dh)
		r.invFreq[i] = float32(1) / float32(math.Pow(theta, float64(x)))
	}
	return r
}

// upTo extends the table to l positions.
func (r *ropeTable) upTo(l int) {
	half := len(r.invFreq)
	for p := len(r.cos) / half; p < l; p++ {
		for _, f := range r.invFreq {
			a := f * float32(p)
			r.cos = append(r.cos, float32(math.Cos(float64(a))))
			r.sin = append(r.sin, float32(math.Sin(float64(a))))
		}
	}
}

// applyRope rotates the heads of q in place, token t at position t mod l, in
// Hugging Face's rotate_half layout (pairs d and d + dh/2, not interleaved):
// q·cos + rotate_half(q)·sin.
func applyRope(q []float32, ld, n, l, heads, dh int, r *ropeTable) {
	half := dh / 2
	forRows(n, func(lo, hi int) {
		for t := lo; t < hi; t++ {
			p := t % l
			cs, sn := r.cos[p*half:(p+1)*half], r.sin[p*half:(p+1)*half]
			for h := 0; h < heads; h++ {
				x := q[t*ld+h*dh : t*ld+(h+1)*dh]
				for i := 0; i < half; i++ {
					x1, x2 := x[i], x[i+half]
					x[i] = x1*cs[i] - x2*sn[i]
					x[i+half] = x2*cs[i] + x1*sn[i]
				}
			}
		}
	})
}

// Forward runs ModernBertModel on a batch of encodings, right-padded to the
// longest rounded up to a multiple of 8, and returns the last hidden states
// (len(batch) × L × D, row-major) and L:
//
//	x = LN(tok[ids])                                  no position embeddings
//	per layer i (pre-LN; layer 0 has no attention norm):
//	  Q, K, V = LN(x)·Wqkvᵀ, heads rotated by RoPE with the global theta in
//	            global layers and the local theta in sliding ones
//	  x = x + attention(Q, K, V)·Woᵀ   sliding layers: |i − j| ≤ local_attention/2
//	  [a, g] = LN(x)·Wiᵀ;  x = x + (GELU(a) ⊙ g)·Woᵀ   (GeGLU)
//	last_hidden_state = LN(x)                         final_norm
//
// LayerNorms have no bias unless norm_bias; Linears none unless
// attention_bias / mlp_bias.
func (m *ModernBERT) Forward(batch []tokenizer.Encoding) ([]float32, int, error) {
	c := &m.Config
	l, ids, mask, err := padBatch(batch, m.MaxSeqLen, c.MaxPositionEmbeddings, c.VocabSize, *c.PadTokenID)
	if err != nil {
		return nil, 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.bufs == nil {
		m.bufs = arena{}
		m.rope = map[float64]*ropeTable{}
	}
	a := m.bufs
	b, d, heads, ff := len(batch), c.HiddenSize, c.NumAttentionHeads, c.IntermediateSize
	dh := d / heads
	n := b * l
	w := m.w
	rope := func(theta float64) *ropeTable {
		r := m.rope[theta]
		if r == nil {
			r = newRopeTable(theta, dh)
			m.rope[theta] = r
		}
		r.upTo(l)
		return r
	}

	x := a.get("x", n*d)
	for t := 0; t < n; t++ {
		copy(x[t*d:(t+1)*d], w.tok[ids[t]*d:(ids[t]+1)*d])
	}
	layerNorm(x, x, w.embNormW, w.embNormB, n, d, c.NormEps)

	normed, qkv := a.get("normed", n*d), a.get("qkv", n*3*d)
	ctx, o, gate, act := a.get("ctx", n*d), a.get("o", n*d), a.get("wi", n*2*ff), a.get("act", n*ff)
	scale := float32(math.Sqrt(float64(dh)))
	for i, lw := range w.layers {
		in := x
		if lw.attnNormW != nil {
			layerNorm(normed, x, lw.attnNormW, lw.attnNormB, n, d, c.NormEps)
			in = normed
		}
		linearInto(qkv, in, lw.wqkv, lw.bqkv, n, d, 3*d)
		theta, window := c.GlobalRopeTheta, 0
		if !c.global(i) {
			theta, window = c.LocalRopeTheta, c.LocalAttention/2
		}
		r := rope(theta)
		applyRope(qkv, 3*d, n, l, heads, dh, r)     // Q
		applyRope(qkv[d:], 3*d, n, l, heads, dh, r) // K
		attention(ctx, qkv, qkv[d:], qkv[2*d:], 3*d, mask, nil, b, l, heads, dh, scale, window, a, "attn")
		linearInto(o, ctx, lw.wo, lw.bo, n, d, d)
		addInto(x, x, o)
		layerNorm(normed, x, lw.mlpNormW, lw.mlpNormB, n, d, c.NormEps)
		linearInto(gate, normed, lw.wi, lw.bi, n, d, 2*ff)
		geglu(act, gate, n, ff)
		linearInto(o, act, lw.wmo, lw.bmo, n, ff, d)
		addInto(x, x, o)
	}
	out := make([]float32, n*d)
	layerNorm(out, x, w.finalW, w.finalB, n, d, c.NormEps)
	return out, l, nil
}
