package transformer

import (
	_ "github.com/jeirt/jeirt/encoder/gblas" // the BLAS of the graphs

	"fmt"
	"math"
	"strings"

	"github.com/jeirt/jeirt/model/tensorfile"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// bertWeights holds the BertModel tensors as Gorgonia values, and the
// Linear layers as the products read them (see linearWeights).
type bertWeights struct {
	word, position, tokenType *tensor.Dense
	embLNw, embLNb            *tensor.Dense
	layers                    []bertLayerWeights
}

type bertLayerWeights struct {
	// qkv is the query, key and value projections as one layer (their
	// weights' rows one after the other, 3·hidden outputs).
	qkv, attnOut, inter, out         linear
	attnLNw, attnLNb, outLNw, outLNb *tensor.Dense
}

// linear is a torch.nn.Linear layer: y = x·Wᵀ + b.
type linear struct {
	w       linearWeights
	b       []float32
	in, out int
}

// loadBertWeights takes the tensors by their Hugging Face BertModel names,
// with or without the "bert." prefix of BertFor* checkpoints, and checks
// every shape against config.json.
func loadBertWeights(file string, st *tensorfile.Safetensors, c *BertConfig) (*bertWeights, error) {
	prefix := ""
	if _, ok := st.Tensors["embeddings.word_embeddings.weight"]; !ok {
		if _, ok := st.Tensors["bert.embeddings.word_embeddings.weight"]; ok {
			prefix = "bert."
		}
	}
	get := func(name string, shape ...int) (*tensor.Dense, error) {
		t, ok := st.Tensors[prefix+name]
		if !ok {
			return nil, fmt.Errorf("%s: tensor %q is missing", file, prefix+name)
		}
		if fmt.Sprint(t.Shape) != fmt.Sprint(shape) {
			return nil, fmt.Errorf("%s: tensor %q has shape %v, config.json implies %v", file, prefix+name, t.Shape, shape)
		}
		return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(t.Data)), nil
	}
	// lin reads the Linear layers names (each out × in) as one layer whose
	// outputs are theirs one after the other.
	lin := func(in, out int, names ...string) (linear, error) {
		var wt, bias []float32
		for _, name := range names {
			w, err := get(name+".weight", out, in)
			if err != nil {
				return linear{}, err
			}
			b, err := get(name+".bias", out)
			if err != nil {
				return linear{}, err
			}
			if len(names) == 1 {
				wt, bias = w.Float32s(), b.Float32s()
				break
			}
			wt, bias = append(wt, w.Float32s()...), append(bias, b.Float32s()...)
		}
		n := out * len(names)
		return linear{w: newLinearWeights(wt, n, in), b: bias, in: in, out: n}, nil
	}
	d, ff := c.HiddenSize, c.IntermediateSize
	w := &bertWeights{}
	var err error
	steps := []struct {
		dst   **tensor.Dense
		name  string
		shape []int
	}{
		{&w.word, "embeddings.word_embeddings.weight", []int{c.VocabSize, d}},
		{&w.position, "embeddings.position_embeddings.weight", []int{c.MaxPositionEmbeddings, d}},
		{&w.tokenType, "embeddings.token_type_embeddings.weight", []int{c.TypeVocabSize, d}},
		{&w.embLNw, "embeddings.LayerNorm.weight", []int{d}},
		{&w.embLNb, "embeddings.LayerNorm.bias", []int{d}},
	}
	for _, s := range steps {
		if *s.dst, err = get(s.name, s.shape...); err != nil {
			return nil, err
		}
	}
	for i := 0; i < c.NumHiddenLayers; i++ {
		p := fmt.Sprintf("encoder.layer.%d.", i)
		var l bertLayerWeights
		for _, s := range []struct {
			dst     *linear
			in, out int
			names   []string
		}{
			{&l.qkv, d, d, []string{p + "attention.self.query", p + "attention.self.key", p + "attention.self.value"}},
			{&l.attnOut, d, d, []string{p + "attention.output.dense"}},
			{&l.inter, d, ff, []string{p + "intermediate.dense"}}, {&l.out, ff, d, []string{p + "output.dense"}},
		} {
			if *s.dst, err = lin(s.in, s.out, s.names...); err != nil {
				return nil, err
			}
		}
		for _, s := range []struct {
			dst  **tensor.Dense
			name string
		}{
			{&l.attnLNw, "attention.output.LayerNorm.weight"}, {&l.attnLNb, "attention.output.LayerNorm.bias"},
			{&l.outLNw, "output.LayerNorm.weight"}, {&l.outLNb, "output.LayerNorm.bias"},
		} {
			if *s.dst, err = get(p+s.name, d); err != nil {
				return nil, err
			}
		}
		w.layers = append(w.layers, l)
	}
	if _, ok := st.Tensors[prefix+fmt.Sprintf("encoder.layer.%d.attention.self.query.weight", c.NumHiddenLayers)]; ok {
		return nil, fmt.Errorf("%s: has a layer %d but config.json says num_hidden_layers %d", file, c.NumHiddenLayers, c.NumHiddenLayers)
	}
	for name := range st.Tensors {
		if strings.Contains(name, "relative") || strings.Contains(name, "rotary") {
			return nil, fmt.Errorf("%s: tensor %q belongs to an architecture jeirt does not run (absolute positions only)", file, name)
		}
	}
	return w, nil
}

// bertGraph is the BertModel forward pass for one (batch, length) shape,
// compiled once and reused (Devlin et al. 2019, §3; Vaswani et al. 2017, §3.2):
//
//	x   = LN(word[ids] + token_type[0] + position[0:L])
//	per layer:
//	  Q, K, V = x·Wq + bq, x·Wk + bk, x·Wv + bv (one product), H heads of size dh
//	  A   = softmax_masked(Q·Kᵀ / √dh)
//	  x   = LN(x + (A·V)·Wo + bo)
//	  x   = LN(x + GELU(x·Wi + bi)·Wo2 + bo2)
//
// The embedding gather and sums are Gorgonia nodes; Linear layers (product
// and bias in one), attention (heads, masked softmax and both products),
// GELU, LayerNorm and the residual adds are the custom ops of bert_ops.go.
type bertGraph struct {
	g        *G.ExprGraph
	ids      *G.Node
	mask     *G.Node
	out      *G.Node
	vm       G.VM
	batch, l int
}

// bertBuffers are the output buffers of the custom ops, one per role.
type bertBuffers map[string]*outBuf

func (b bertBuffers) get(role string) *outBuf {
	if b[role] == nil {
		b[role] = &outBuf{}
	}
	return b[role]
}

func newBertGraph(w *bertWeights, c *BertConfig, bufs bertBuffers, scratch arena, batch, l int) (*bertGraph, error) {
	g := G.NewGraph()
	d, heads := c.HiddenSize, c.NumAttentionHeads
	dh := d / heads
	bg := &bertGraph{g: g, batch: batch, l: l}
	bg.ids = G.NewVector(g, tensor.Int, G.WithShape(batch*l), G.WithName("input_ids"))
	bg.mask = G.NewMatrix(g, tensor.Float32, G.WithShape(batch, l), G.WithName("attention_mask"))
	n := 0
	val := func(t *tensor.Dense) *G.Node {
		n++
		name := fmt.Sprintf("w%d", n)
		if t.Dims() == 1 {
			return G.NewVector(g, tensor.Float32, G.WithShape(t.Shape()...), G.WithValue(t), G.WithName(name))
		}
		return G.NewMatrix(g, tensor.Float32, G.WithShape(t.Shape()...), G.WithValue(t), G.WithName(name))
	}
	var err error
	must := func(x *G.Node, e error) *G.Node {
		if e != nil && err == nil {
			err = e
		}
		return x
	}
	row := func(t *tensor.Dense) *G.Node {
		return val(tensor.New(tensor.WithShape(1, t.Shape()[0]), tensor.WithBacking(t.Float32s())))
	}
	lin := func(x *G.Node, p linear, role string) *G.Node {
		if err != nil {
			return nil
		}
		return must(G.ApplyOp(&linearOp{w: p, buf: bufs.get(role)}, x))
	}
	add := func(x, y *G.Node, role string) *G.Node {
		if err != nil {
			return nil
		}
		return must(G.ApplyOp(&addOp{buf: bufs.get(role)}, x, y))
	}
	layerNorm := func(x *G.Node, wt, bias *tensor.Dense, role string) *G.Node {
		if err != nil {
			return nil
		}
		return must(G.ApplyOp(&layerNormOp{eps: c.LayerNormEps, buf: bufs.get(role)}, x, row(wt), row(bias)))
	}
	// Embeddings. The position rows 0..L-1 and token type 0 are sliced here,
	// once per shape; their sum with word[ids] is in the graph, in BertEmbeddings' order.
	pos := tensor.New(tensor.WithShape(l, d), tensor.WithBacking(append([]float32(nil), w.position.Float32s()[:l*d]...)))
	typ0 := tensor.New(tensor.WithShape(d), tensor.WithBacking(append([]float32(nil), w.tokenType.Float32s()[:d]...)))
	x := must(G.ByIndices(val(w.word), bg.ids, 0))
	if err == nil {
		x = must(G.ApplyOp(&addRowOp{buf: bufs.get("embeddings")}, x, row(typ0)))
	}
	if err == nil {
		x = must(G.Reshape(x, tensor.Shape{batch, l, d}))
	}
	if err == nil {
		x = must(G.BroadcastAdd(x, val(pos), nil, []byte{0}))
	}
	if err == nil {
		x = must(G.Reshape(x, tensor.Shape{batch * l, d}))
	}
	x = layerNorm(x, w.embLNw, w.embLNb, "embeddings.LayerNorm")
	scale := float32(math.Sqrt(float64(dh)))

	for _, lw := range w.layers {
		qkv := lin(x, lw.qkv, "qkv")
		if err != nil {
			break
		}
		ctx := must(G.ApplyOp(&attentionOp{batch: batch, l: l, heads: heads, scale: scale, buf: bufs.get("context"), scratch: scratch}, qkv, bg.mask))
		attn := lin(ctx, lw.attnOut, "attention.output")
		x = layerNorm(add(attn, x, "attention.residual"), lw.attnLNw, lw.attnLNb, "attention.output.LayerNorm")
		h := lin(x, lw.inter, "intermediate")
		if err != nil {
			break
		}
		h = must(G.ApplyOp(&geluOp{buf: bufs.get("gelu")}, h))
		o := lin(h, lw.out, "output")
		x = layerNorm(add(o, x, "output.residual"), lw.outLNw, lw.outLNb, "output.LayerNorm")
	}
	if err != nil {
		return nil, fmt.Errorf("building the BERT graph for batch %d × %d tokens: %w", batch, l, err)
	}
	bg.out = x
	bg.vm = G.NewTapeMachine(g)
	return bg, nil
}

// run binds ids and mask, runs the tape and copies out the last hidden state.
func (bg *bertGraph) run(ids []int, mask []float32) ([]float32, error) {
	defer bg.vm.Reset()
	if err := G.Let(bg.ids, tensor.New(tensor.WithShape(len(ids)), tensor.WithBacking(ids))); err != nil {
		return nil, err
	}
	if err := G.Let(bg.mask, tensor.New(tensor.WithShape(bg.batch, bg.l), tensor.WithBacking(mask))); err != nil {
		return nil, err
	}
	if err := bg.vm.RunAll(); err != nil {
		return nil, fmt.Errorf("BERT forward pass: %w", err)
	}
	return append([]float32(nil), bg.out.Value().Data().([]float32)...), nil
}

func (bg *bertGraph) close() { bg.vm.Close() }
