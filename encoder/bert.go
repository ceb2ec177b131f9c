package encoder

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/jeirt/jeirt/model"
)

// BertConfig is the part of a Hugging Face config.json that the BERT forward
// pass needs.
type BertConfig struct {
	ModelType             string   `json:"model_type"`
	Architectures         []string `json:"architectures"`
	HiddenSize            int      `json:"hidden_size"`
	NumHiddenLayers       int      `json:"num_hidden_layers"`
	NumAttentionHeads     int      `json:"num_attention_heads"`
	IntermediateSize      int      `json:"intermediate_size"`
	HiddenAct             string   `json:"hidden_act"`
	LayerNormEps          float64  `json:"layer_norm_eps"`
	MaxPositionEmbeddings int      `json:"max_position_embeddings"`
	TypeVocabSize         int      `json:"type_vocab_size"`
	VocabSize             int      `json:"vocab_size"`
	PositionEmbeddingType string   `json:"position_embedding_type"`
}

// check reports the settings this implementation does not run.
func (c *BertConfig) check(file string) error {
	if c.ModelType != "bert" {
		return fmt.Errorf("%s: model_type %q is not supported (jeirt runs BERT encoders, model_type \"bert\": all-MiniLM, BGE, E5, GTE)", file, c.ModelType)
	}
	for _, a := range c.Architectures {
		if a != "BertModel" && a != "BertForMaskedLM" && a != "BertForPreTraining" {
			return fmt.Errorf("%s: architecture %q is not supported (want BertModel)", file, a)
		}
	}
	if c.HiddenAct != "gelu" {
		return fmt.Errorf("%s: hidden_act %q is not supported (want \"gelu\", exact erf GELU)", file, c.HiddenAct)
	}
	if c.PositionEmbeddingType != "" && c.PositionEmbeddingType != "absolute" {
		return fmt.Errorf("%s: position_embedding_type %q is not supported (want \"absolute\")", file, c.PositionEmbeddingType)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"hidden_size", c.HiddenSize}, {"num_hidden_layers", c.NumHiddenLayers}, {"num_attention_heads", c.NumAttentionHeads},
		{"intermediate_size", c.IntermediateSize}, {"max_position_embeddings", c.MaxPositionEmbeddings},
		{"type_vocab_size", c.TypeVocabSize}, {"vocab_size", c.VocabSize}} {
		if f.v <= 0 {
			return fmt.Errorf("%s: %s must be positive, got %d", file, f.name, f.v)
		}
	}
	if c.HiddenSize%c.NumAttentionHeads != 0 {
		return fmt.Errorf("%s: hidden_size %d is not a multiple of num_attention_heads %d", file, c.HiddenSize, c.NumAttentionHeads)
	}
	if c.LayerNormEps <= 0 {
		c.LayerNormEps = 1e-12
	}
	return nil
}

// Pooling modes of sentence-transformers' Pooling module, in the order it
// concatenates them.
const (
	PoolCLS         = "cls"
	PoolMax         = "max"
	PoolMean        = "mean"
	PoolMeanSqrtLen = "mean_sqrt_len"
)

// BERT is a frozen BERT sentence encoder read from a sentence-transformers
// folder: tokenizer, transformer (a Gorgonia graph, see bertGraph), pooling
// and, if modules.json lists it, L2 normalisation.
type BERT struct {
	// BatchSize is the most texts one forward pass takes. Zero means 32.
	BatchSize int

	Config    BertConfig
	Tokenizer *Tokenizer
	Pooling   []string
	Normalize bool
	// MaxSeqLen is sentence_bert_config.json's max_seq_length: the most
	// tokens per text, [CLS] and [SEP] included.
	MaxSeqLen int

	w           *bertWeights
	fingerprint string

	mu     sync.Mutex
	graphs map[[2]int]*bertGraph
	order  [][2]int
	bufs   bertBuffers
}

// OpenBERT loads a sentence-transformers model folder: config.json,
// model.safetensors, tokenizer.json, and optionally modules.json (default:
// Transformer then mean Pooling, no Normalize), 1_Pooling/config.json (the
// folder modules.json names) and sentence_bert_config.json (default
// max_seq_length: min(512, max_position_embeddings)).
func OpenBERT(dir string) (*BERT, error) {
	b := &BERT{Pooling: []string{PoolMean}}
	h := sha256.New()
	readJSON := func(name string, v any, required bool) (bool, error) {
		path := filepath.Join(dir, name)
		data, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) && !required {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("model folder %s: %w", dir, err)
		}
		fmt.Fprintf(h, "%s %d\n", name, len(data))
		h.Write(data)
		if err := json.Unmarshal(data, v); err != nil {
			return false, fmt.Errorf("%s: %w", path, err)
		}
		return true, nil
	}
	cfgPath := filepath.Join(dir, "config.json")
	if _, err := readJSON("config.json", &b.Config, true); err != nil {
		return nil, err
	}
	if err := b.Config.check(cfgPath); err != nil {
		return nil, err
	}

	// modules.json: the pipeline after the transformer.
	var modules []struct {
		Path string `json:"path"`
		Type string `json:"type"`
	}
	hasModules, err := readJSON("modules.json", &modules, false)
	if err != nil {
		return nil, err
	}
	if hasModules {
		b.Pooling = nil
		for i, m := range modules {
			switch m.Type {
			case "sentence_transformers.models.Transformer":
				if i != 0 {
					return nil, fmt.Errorf("%s: the Transformer module must come first", filepath.Join(dir, "modules.json"))
				}
			case "sentence_transformers.models.Pooling":
				if b.Pooling, err = readPooling(dir, m.Path, b.Config.HiddenSize, readJSON); err != nil {
					return nil, err
				}
			case "sentence_transformers.models.Normalize":
				b.Normalize = true
			default:
				return nil, fmt.Errorf("%s: module %q is not supported (jeirt runs Transformer, Pooling, Normalize)", filepath.Join(dir, "modules.json"), m.Type)
			}
		}
		if b.Pooling == nil {
			return nil, fmt.Errorf("%s: no sentence_transformers.models.Pooling module", filepath.Join(dir, "modules.json"))
		}
	}

	var sbert struct {
		MaxSeqLength int `json:"max_seq_length"`
	}
	if _, err := readJSON("sentence_bert_config.json", &sbert, false); err != nil {
		return nil, err
	}
	b.MaxSeqLen = min(512, b.Config.MaxPositionEmbeddings)
	if sbert.MaxSeqLength > 0 {
		b.MaxSeqLen = min(sbert.MaxSeqLength, b.Config.MaxPositionEmbeddings)
	}

	tokPath := filepath.Join(dir, "tokenizer.json")
	if _, err := os.Stat(tokPath); err != nil {
		return nil, fmt.Errorf("model folder %s: tokenizer.json is missing (%w)", dir, err)
	}
	if b.Tokenizer, err = LoadTokenizer(tokPath, b.MaxSeqLen); err != nil {
		return nil, err
	}
	if err := hashFile(h, tokPath); err != nil {
		return nil, err
	}
	wPath := filepath.Join(dir, "model.safetensors")
	st, err := model.ReadSafetensors(wPath)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("model folder %s: model.safetensors is missing (jeirt reads safetensors only; convert pytorch_model.bin with safetensors.torch.save_file)", dir)
		}
		return nil, err
	}
	if err := hashFile(h, wPath); err != nil {
		return nil, err
	}
	if b.w, err = loadBertWeights(wPath, st, &b.Config); err != nil {
		return nil, err
	}
	fmt.Fprintf(h, "pool=%s normalize=%v maxlen=%d", strings.Join(b.Pooling, "+"), b.Normalize, b.MaxSeqLen)
	b.fingerprint = "bert/v1/" + hex.EncodeToString(h.Sum(nil))[:32]
	return b, nil
}

func hashFile(h io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Fprintf(h, "%s\n", filepath.Base(path))
	_, err = io.Copy(h, f)
	return err
}

func readPooling(dir, sub string, hidden int, readJSON func(string, any, bool) (bool, error)) ([]string, error) {
	name := filepath.Join(sub, "config.json")
	var cfg map[string]any
	if _, err := readJSON(name, &cfg, true); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, name)
	if d, ok := cfg["word_embedding_dimension"].(float64); ok && int(d) != hidden {
		return nil, fmt.Errorf("%s: word_embedding_dimension %d, but config.json has hidden_size %d", path, int(d), hidden)
	}
	on := func(key string) bool { v, _ := cfg[key].(bool); return v }
	for _, key := range []string{"pooling_mode_weightedmean_tokens", "pooling_mode_lasttoken"} {
		if on(key) {
			return nil, fmt.Errorf("%s: %s is not supported (jeirt pools cls, max, mean, mean_sqrt_len)", path, key)
		}
	}
	var modes []string
	for _, m := range []struct{ key, mode string }{
		{"pooling_mode_cls_token", PoolCLS}, {"pooling_mode_max_tokens", PoolMax},
		{"pooling_mode_mean_tokens", PoolMean}, {"pooling_mode_mean_sqrt_len_tokens", PoolMeanSqrtLen},
	} {
		if on(m.key) {
			modes = append(modes, m.mode)
		}
	}
	if len(modes) == 0 {
		return nil, fmt.Errorf("%s: no pooling mode is true", path)
	}
	return modes, nil
}

// Dim implements Encoder.
func (b *BERT) Dim() int { return b.Config.HiddenSize * len(b.Pooling) }

// Fingerprint implements Encoder: a hash of every file read and of the
// pooling, normalisation and sequence length.
func (b *BERT) Fingerprint() string { return b.fingerprint }

// Encode implements Encoder. Texts are tokenised, sorted by length and run in
// batches of similar length padded to a multiple of 8 tokens; the padding is
// masked, so a text's vector does not depend on its batch.
func (b *BERT) Encode(ctx context.Context, texts []string) ([][]float32, error) {
	encs := make([]Encoding, len(texts))
	for i, t := range texts {
		e, err := b.Tokenizer.Encode(t)
		if err != nil {
			return nil, fmt.Errorf("text %d: %w", i, err)
		}
		encs[i] = e
	}
	order := make([]int, len(texts))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return len(encs[order[i]].IDs) > len(encs[order[j]].IDs) })
	bs := b.BatchSize
	if bs <= 0 {
		bs = 32
	}
	out := make([][]float32, len(texts))
	for lo := 0; lo < len(order); lo += bs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		batch := order[lo:min(lo+bs, len(order))]
		be := make([]Encoding, len(batch))
		for k, i := range batch {
			be[k] = encs[i]
		}
		hidden, l, err := b.Forward(be)
		if err != nil {
			return nil, err
		}
		for k, i := range batch {
			out[i] = b.pool(hidden[k*l*b.Config.HiddenSize:(k+1)*l*b.Config.HiddenSize], be[k].AttentionMask)
		}
	}
	return out, nil
}

// pool applies the Pooling modes and Normalize to one text's hidden states
// (L × D, row-major, L ≥ len(mask)); sums run in float64.
func (b *BERT) pool(h []float32, mask []int32) []float32 {
	d := b.Config.HiddenSize
	out := make([]float32, 0, b.Dim())
	var n float64
	for _, m := range mask {
		n += float64(m)
	}
	for _, mode := range b.Pooling {
		v := make([]float64, d)
		switch mode {
		case PoolCLS:
			for k := range v {
				v[k] = float64(h[k])
			}
		case PoolMax:
			for k := range v {
				v[k] = math.Inf(-1)
			}
			for t, m := range mask {
				if m != 0 {
					for k := range v {
						v[k] = math.Max(v[k], float64(h[t*d+k]))
					}
				}
			}
		case PoolMean, PoolMeanSqrtLen:
			for t, m := range mask {
				if m != 0 {
					for k := range v {
						v[k] += float64(h[t*d+k])
					}
				}
			}
			div := math.Max(n, 1e-9)
			if mode == PoolMeanSqrtLen {
				div = math.Sqrt(div)
			}
			for k := range v {
				v[k] /= div
			}
		}
		for _, x := range v {
			out = append(out, float32(x))
		}
	}
	if b.Normalize {
		var ss float64
		for _, x := range out {
			ss += float64(x) * float64(x)
		}
		inv := 1 / math.Max(math.Sqrt(ss), 1e-12)
		for k, x := range out {
			out[k] = float32(float64(x) * inv)
		}
	}
	return out
}

// Forward runs the transformer on a batch of encodings, right-padded to the
// longest rounded up to a multiple of 8 (at most MaxSeqLen), and returns the
// last hidden states (len(batch) × L × D, row-major) and L.
func (b *BERT) Forward(batch []Encoding) ([]float32, int, error) {
	l := 0
	for _, e := range batch {
		l = max(l, len(e.IDs))
	}
	l = min((l+7)/8*8, max(b.MaxSeqLen, l))
	l = min(l, b.Config.MaxPositionEmbeddings)
	ids := make([]int, len(batch)*l)
	mask := make([]float32, len(batch)*l)
	pad := int(b.Tokenizer.PadID())
	for k, e := range batch {
		if len(e.IDs) > l {
			return nil, 0, fmt.Errorf("encoding of %d tokens exceeds max_position_embeddings %d", len(e.IDs), l)
		}
		for t := 0; t < l; t++ {
			ids[k*l+t] = pad
			if t < len(e.IDs) {
				id := int(e.IDs[t])
				if id < 0 || id >= b.Config.VocabSize {
					return nil, 0, fmt.Errorf("token id %d outside vocab_size %d", id, b.Config.VocabSize)
				}
				ids[k*l+t] = id
				mask[k*l+t] = float32(e.AttentionMask[t])
			}
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	g, err := b.graph(len(batch), l)
	if err != nil {
		return nil, 0, err
	}
	h, err := g.run(ids, mask)
	return h, l, err
}

// maxGraphs bounds the compiled graphs kept, one per (batch, length) shape.
const maxGraphs = 8

func (b *BERT) graph(batch, l int) (*bertGraph, error) {
	key := [2]int{batch, l}
	if g, ok := b.graphs[key]; ok {
		return g, nil
	}
	if b.bufs == nil {
		b.bufs = make(bertBuffers)
	}
	g, err := newBertGraph(b.w, &b.Config, b.bufs, batch, l)
	if err != nil {
		return nil, err
	}
	if b.graphs == nil {
		b.graphs = make(map[[2]int]*bertGraph)
	}
	if len(b.order) == maxGraphs {
		old := b.order[0]
		b.graphs[old].close()
		delete(b.graphs, old)
		b.order = b.order[1:]
	}
	b.graphs[key] = g
	b.order = append(b.order, key)
	return g, nil
}
