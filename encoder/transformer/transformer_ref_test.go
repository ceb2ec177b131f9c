package transformer

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/jeirt/jeirt/encoder/tokenizer"
	"github.com/jeirt/jeirt/model/tensorfile"
)

// The tests in this file check the MPNet and ModernBERT forward passes on
// shapes unlike the fixtures' (other head counts, depths, windows, layer
// patterns, biases on) against plain float64 reference implementations
// written as loops over one unpadded sequence, straight from the Hugging Face
// modules' equations.

// randomTensors fills st with N(0, std) tensors (LayerNorm weights 1 + N(0, std)).
type randomTensors struct {
	rng *rand.Rand
	st  *tensorfile.Safetensors
	std float64
}

func newRandomTensors(seed uint64, std float64) *randomTensors {
	return &randomTensors{rng: rand.New(rand.NewPCG(seed, 7)), st: &tensorfile.Safetensors{Tensors: map[string]tensorfile.Tensor{}}, std: std}
}

func (r *randomTensors) put(name string, shape ...int) {
	n := 1
	for _, d := range shape {
		n *= d
	}
	data := make([]float32, n)
	for i := range data {
		data[i] = float32(r.rng.NormFloat64() * r.std)
	}
	r.st.Tensors[name] = tensorfile.Tensor{Shape: shape, Data: data}
}

func (r *randomTensors) norm(name string, d int, bias bool) {
	r.put(name+".weight", d)
	for i := range r.st.Tensors[name+".weight"].Data {
		r.st.Tensors[name+".weight"].Data[i] += 1
	}
	if bias {
		r.put(name+".bias", d)
	}
}

func (r *randomTensors) get(name string) []float32 { return r.st.Tensors[name].Data }

// randomMPNetTensors puts MPNetModel's tensors for c into r.
func randomMPNetTensors(r *randomTensors, c *MPNetConfig) {
	d, ff := c.HiddenSize, c.IntermediateSize
	r.put("embeddings.word_embeddings.weight", c.VocabSize, d)
	r.put("embeddings.position_embeddings.weight", c.MaxPositionEmbeddings, d)
	r.norm("embeddings.LayerNorm", d, true)
	r.put("encoder.relative_attention_bias.weight", c.RelativeAttentionNumBuckets, c.NumAttentionHeads)
	for i := 0; i < c.NumHiddenLayers; i++ {
		p := fmt.Sprintf("encoder.layer.%d.", i)
		for _, n := range []string{"q", "k", "v", "o"} {
			r.put(p+"attention.attn."+n+".weight", d, d)
			r.put(p+"attention.attn."+n+".bias", d)
		}
		r.norm(p+"attention.LayerNorm", d, true)
		r.put(p+"intermediate.dense.weight", ff, d)
		r.put(p+"intermediate.dense.bias", ff)
		r.put(p+"output.dense.weight", d, ff)
		r.put(p+"output.dense.bias", d)
		r.norm(p+"output.LayerNorm", d, true)
	}
}

// randomModernTensors puts ModernBertForMaskedLM's encoder tensors for c
// into r, with the "model." prefix.
func randomModernTensors(r *randomTensors, c *ModernBERTConfig) {
	d, ff := c.HiddenSize, c.IntermediateSize
	r.put("model.embeddings.tok_embeddings.weight", c.VocabSize, d)
	r.norm("model.embeddings.norm", d, c.NormBias)
	r.norm("model.final_norm", d, c.NormBias)
	for i := 0; i < c.NumHiddenLayers; i++ {
		p := fmt.Sprintf("model.layers.%d.", i)
		if i > 0 {
			r.norm(p+"attn_norm", d, c.NormBias)
		}
		r.norm(p+"mlp_norm", d, c.NormBias)
		r.put(p+"attn.Wqkv.weight", 3*d, d)
		r.put(p+"attn.Wo.weight", d, d)
		r.put(p+"mlp.Wi.weight", 2*ff, d)
		r.put(p+"mlp.Wo.weight", d, ff)
		if c.AttentionBias {
			r.put(p+"attn.Wqkv.bias", 3*d)
			r.put(p+"attn.Wo.bias", d)
		}
		if c.MLPBias {
			r.put(p+"mlp.Wi.bias", 2*ff)
			r.put(p+"mlp.Wo.bias", d)
		}
	}
}

func refLayerNorm(x []float64, w, b []float32, eps float64) []float64 {
	var mean, v float64
	for _, a := range x {
		mean += a
	}
	mean /= float64(len(x))
	for _, a := range x {
		v += (a - mean) * (a - mean)
	}
	v /= float64(len(x))
	out := make([]float64, len(x))
	for k, a := range x {
		out[k] = (a - mean) / math.Sqrt(v+eps) * float64(w[k])
		if b != nil {
			out[k] += float64(b[k])
		}
	}
	return out
}

// refLinear is y = W x + b for W stored [out, in].
func refLinear(x []float64, w, b []float32, out int) []float64 {
	in := len(x)
	y := make([]float64, out)
	for o := range y {
		for i, a := range x {
			y[o] += float64(w[o*in+i]) * a
		}
		if b != nil {
			y[o] += float64(b[o])
		}
	}
	return y
}

func refGELU(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }

// refAttention is multi-head attention for one sequence: allowed(i, j) says
// whether query i sees key j, bias(h, i, j) is added to the scaled score.
func refAttention(q, k, v [][]float64, heads int, allowed func(i, j int) bool, bias func(h, i, j int) float64) [][]float64 {
	l, d := len(q), len(q[0])
	dh := d / heads
	out := make([][]float64, l)
	for i := range out {
		out[i] = make([]float64, d)
	}
	for h := 0; h < heads; h++ {
		for i := 0; i < l; i++ {
			s := make([]float64, l)
			mx := math.Inf(-1)
			for j := 0; j < l; j++ {
				if !allowed(i, j) {
					continue
				}
				for c := h * dh; c < (h+1)*dh; c++ {
					s[j] += q[i][c] * k[j][c]
				}
				s[j] = s[j]/math.Sqrt(float64(dh)) + bias(h, i, j)
				mx = math.Max(mx, s[j])
			}
			var sum float64
			for j := 0; j < l; j++ {
				if allowed(i, j) {
					s[j] = math.Exp(s[j] - mx)
					sum += s[j]
				} else {
					s[j] = 0
				}
			}
			for j := 0; j < l; j++ {
				for c := h * dh; c < (h+1)*dh; c++ {
					out[i][c] += s[j] / sum * v[j][c]
				}
			}
		}
	}
	return out
}

// checkAgainstRef runs forward on a batch of two sequences of different
// lengths (so one is padded) and compares each with ref.
func checkAgainstRef(t *testing.T, forward func([]tokenizer.Encoding) ([]float32, int, error), ref func(ids []int32) [][]float64, seqs [][]int32, d int, tol float64) {
	batch := make([]tokenizer.Encoding, len(seqs))
	for k, s := range seqs {
		batch[k] = tokenizer.Encoding{IDs: s, AttentionMask: make([]int32, len(s))}
		for i := range s {
			batch[k].AttentionMask[i] = 1
		}
	}
	h, l, err := forward(batch)
	if err != nil {
		t.Fatal(err)
	}
	var worst float64
	for k, s := range seqs {
		want := ref(s)
		for i, row := range want {
			worst = math.Max(worst, maxAbsDiff(h[(k*l+i)*d:(k*l+i+1)*d], row))
		}
	}
	t.Logf("max |diff| against the float64 reference: %.2g (L=%d)", worst, l)
	if worst > tol || math.IsNaN(worst) {
		t.Errorf("last hidden state off by %.3g (want <= %g)", worst, tol)
	}
}

func TestMPNetAgainstReference(t *testing.T) {
	pad := 3
	c := MPNetConfig{BaseConfig: BaseConfig{ModelType: "mpnet", HiddenSize: 24, NumHiddenLayers: 3, NumAttentionHeads: 2, IntermediateSize: 30, MaxPositionEmbeddings: 200, VocabSize: 50}, HiddenAct: "gelu", LayerNormEps: 1e-5, RelativeAttentionNumBuckets: 16, PadTokenID: &pad}
	if err := c.check("config.json"); err != nil {
		t.Fatal(err)
	}
	d, ff, nb, heads := c.HiddenSize, c.IntermediateSize, c.RelativeAttentionNumBuckets, c.NumAttentionHeads
	r := newRandomTensors(11, 0.2)
	randomMPNetTensors(r, &c)
	w, err := loadMPNetWeights("random", r.st, &c)
	if err != nil {
		t.Fatal(err)
	}
	m := &MPNet{Pipeline: Pipeline{MaxSeqLen: 196}, Config: c, w: w}

	// bucket straight from the T5/MPNet definition, in float64.
	bucket := func(rel int) int {
		half := nb / 2
		exact := half / 2
		ret := 0
		if rel > 0 {
			ret = half
		}
		n := rel
		if n < 0 {
			n = -n
		}
		if n < exact {
			return ret + n
		}
		v := exact + int(math.Log(float64(n)/float64(exact))/math.Log(128/float64(exact))*float64(half-exact))
		return ret + min(v, half-1)
	}
	ref := func(ids []int32) [][]float64 {
		l := len(ids)
		x := make([][]float64, l)
		count := 0
		for i, id := range ids {
			p := pad
			if int(id) != pad {
				count++
				p = pad + count
			}
			e := make([]float64, d)
			for k := range e {
				e[k] = float64(r.get("embeddings.word_embeddings.weight")[int(id)*d+k]) + float64(r.get("embeddings.position_embeddings.weight")[p*d+k])
			}
			x[i] = refLayerNorm(e, r.get("embeddings.LayerNorm.weight"), r.get("embeddings.LayerNorm.bias"), c.LayerNormEps)
		}
		rb := r.get("encoder.relative_attention_bias.weight")
		for li := 0; li < c.NumHiddenLayers; li++ {
			p := fmt.Sprintf("encoder.layer.%d.", li)
			lin := func(rows [][]float64, name string, out int) [][]float64 {
				y := make([][]float64, len(rows))
				for i, row := range rows {
					y[i] = refLinear(row, r.get(p+name+".weight"), r.get(p+name+".bias"), out)
				}
				return y
			}
			att := refAttention(lin(x, "attention.attn.q", d), lin(x, "attention.attn.k", d), lin(x, "attention.attn.v", d), heads,
				func(i, j int) bool { return true },
				func(h, i, j int) float64 { return float64(rb[bucket(j-i)*heads+h]) })
			o := lin(att, "attention.attn.o", d)
			for i := range x {
				for k := range x[i] {
					o[i][k] += x[i][k]
				}
				x[i] = refLayerNorm(o[i], r.get(p+"attention.LayerNorm.weight"), r.get(p+"attention.LayerNorm.bias"), c.LayerNormEps)
			}
			h := lin(x, "intermediate.dense", ff)
			for i := range h {
				for k := range h[i] {
					h[i][k] = refGELU(h[i][k])
				}
			}
			o = lin(h, "output.dense", d)
			for i := range x {
				for k := range x[i] {
					o[i][k] += x[i][k]
				}
				x[i] = refLayerNorm(o[i], r.get(p+"output.LayerNorm.weight"), r.get(p+"output.LayerNorm.bias"), c.LayerNormEps)
			}
		}
		return x
	}
	rng := rand.New(rand.NewPCG(5, 6))
	seq := func(n int) []int32 {
		s := make([]int32, n)
		for i := range s {
			s[i] = int32(rng.IntN(c.VocabSize))
		}
		return s
	}
	long, short := seq(150), seq(13) // more than one 128-query block
	long[7] = int32(pad)             // a padding-index token inside a text
	checkAgainstRef(t, m.Forward, ref, [][]int32{long, short}, d, 1e-5)
}

func TestModernBERTAgainstReference(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    ModernBERTConfig
	}{
		{"3 heads, 5 layers, global every 2, window ±3, biases", ModernBERTConfig{BaseConfig: BaseConfig{HiddenSize: 48, NumHiddenLayers: 5, NumAttentionHeads: 3, IntermediateSize: 40}, GlobalAttnEveryNLayers: 2, LocalAttention: 7, GlobalRopeTheta: 80000, LocalRopeTheta: 5000, NormBias: true, AttentionBias: true, MLPBias: true}},
		{"8 heads, layer_types, window ±5", ModernBERTConfig{BaseConfig: BaseConfig{HiddenSize: 32, NumHiddenLayers: 3, NumAttentionHeads: 8, IntermediateSize: 24}, LocalAttention: 10, LayerTypes: []string{"sliding_attention", "full_attention", "sliding_attention"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.c
			c.ModelType, c.VocabSize = "modernbert", 60
			pad := 0
			c.PadTokenID = &pad
			if err := c.check("config.json"); err != nil {
				t.Fatal(err)
			}
			d, ff, heads := c.HiddenSize, c.IntermediateSize, c.NumAttentionHeads
			dh := d / heads
			r := newRandomTensors(21, 0.15)
			randomModernTensors(r, &c)
			r.put("head.dense.weight", d, d) // a ModernBertForMaskedLM head, ignored
			w, err := loadModernWeights("random", r.st, &c)
			if err != nil {
				t.Fatal(err)
			}
			m := &ModernBERT{Pipeline: Pipeline{MaxSeqLen: 256}, Config: c, w: w}
			opt := func(name string) []float32 {
				if t, ok := r.st.Tensors[name]; ok {
					return t.Data
				}
				return nil
			}
			ref := func(ids []int32) [][]float64 {
				l := len(ids)
				x := make([][]float64, l)
				for i, id := range ids {
					e := make([]float64, d)
					for k := range e {
						e[k] = float64(r.get("model.embeddings.tok_embeddings.weight")[int(id)*d+k])
					}
					x[i] = refLayerNorm(e, r.get("model.embeddings.norm.weight"), opt("model.embeddings.norm.bias"), c.NormEps)
				}
				for li := 0; li < c.NumHiddenLayers; li++ {
					p := fmt.Sprintf("model.layers.%d.", li)
					global := li%c.GlobalAttnEveryNLayers == 0
					if c.LayerTypes != nil {
						global = c.LayerTypes[li] == "full_attention"
					}
					theta := c.GlobalRopeTheta
					if !global {
						theta = c.LocalRopeTheta
					}
					q, k, v := make([][]float64, l), make([][]float64, l), make([][]float64, l)
					for i := range x {
						in := x[i]
						if li > 0 {
							in = refLayerNorm(x[i], r.get(p+"attn_norm.weight"), opt(p+"attn_norm.bias"), c.NormEps)
						}
						qkv := refLinear(in, r.get(p+"attn.Wqkv.weight"), opt(p+"attn.Wqkv.bias"), 3*d)
						q[i], k[i], v[i] = qkv[:d], qkv[d:2*d], qkv[2*d:]
						// RoPE as a rotation of the pairs (c, c + dh/2) by angle i·θ^(−2c/dh).
						for _, z := range [][]float64{q[i], k[i]} {
							for h := 0; h < heads; h++ {
								for c := 0; c < dh/2; c++ {
									a := float64(i) * math.Pow(theta, -2*float64(c)/float64(dh))
									x1, x2 := z[h*dh+c], z[h*dh+c+dh/2]
									z[h*dh+c] = x1*math.Cos(a) - x2*math.Sin(a)
									z[h*dh+c+dh/2] = x2*math.Cos(a) + x1*math.Sin(a)
								}
							}
						}
					}
					att := refAttention(q, k, v, heads, func(i, j int) bool {
						return global || (i-j <= c.LocalAttention/2 && j-i <= c.LocalAttention/2)
					}, func(h, i, j int) float64 { return 0 })
					for i := range x {
						o := refLinear(att[i], r.get(p+"attn.Wo.weight"), opt(p+"attn.Wo.bias"), d)
						for kk := range o {
							x[i][kk] += o[kk]
						}
						n := refLayerNorm(x[i], r.get(p+"mlp_norm.weight"), opt(p+"mlp_norm.bias"), c.NormEps)
						g := refLinear(n, r.get(p+"mlp.Wi.weight"), opt(p+"mlp.Wi.bias"), 2*ff)
						act := make([]float64, ff)
						for kk := range act {
							act[kk] = refGELU(g[kk]) * g[ff+kk]
						}
						o = refLinear(act, r.get(p+"mlp.Wo.weight"), opt(p+"mlp.Wo.bias"), d)
						for kk := range o {
							x[i][kk] += o[kk]
						}
					}
				}
				for i := range x {
					x[i] = refLayerNorm(x[i], r.get("model.final_norm.weight"), opt("model.final_norm.bias"), c.NormEps)
				}
				return x
			}
			rng := rand.New(rand.NewPCG(8, 9))
			seq := func(n int) []int32 {
				s := make([]int32, n)
				for i := range s {
					s[i] = int32(1 + rng.IntN(c.VocabSize-1))
				}
				return s
			}
			checkAgainstRef(t, m.Forward, ref, [][]int32{seq(150), seq(9)}, d, 1e-5) // 150: windows across two query blocks
		})
	}
}
