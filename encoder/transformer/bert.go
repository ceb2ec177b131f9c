// Package transformer runs sentence-transformers model folders: BERT, MPNet
// and ModernBERT forward passes (Gorgonia graphs and plain-Go kernels), the
// folder's pooling and normalisation, and memory-mapped safetensors weights.
package transformer

import (
	"context"
	"fmt"
	"sync"

	"github.com/jeirt/jeirt/encoder/tokenizer"
)

// BertConfig is the part of a Hugging Face config.json that the BERT forward
// pass needs.
type BertConfig struct {
	BaseConfig
	HiddenAct             string  `json:"hidden_act"`
	LayerNormEps          float64 `json:"layer_norm_eps"`
	TypeVocabSize         int     `json:"type_vocab_size"`
	PositionEmbeddingType string  `json:"position_embedding_type"`
}

// check reports the settings this implementation does not run.
func (c *BertConfig) check(file string) error {
	if c.ModelType != "bert" {
		return fmt.Errorf("%s: model_type %q is not supported (jeirt runs BERT encoders, model_type \"bert\": all-MiniLM, BGE, E5, GTE)", file, c.ModelType)
	}
	if err := c.checkArchitectures(file, "BertModel", "BertForMaskedLM", "BertForPreTraining"); err != nil {
		return err
	}
	if c.HiddenAct != "gelu" {
		return fmt.Errorf("%s: hidden_act %q is not supported (want \"gelu\", exact erf GELU)", file, c.HiddenAct)
	}
	if c.PositionEmbeddingType != "" && c.PositionEmbeddingType != "absolute" {
		return fmt.Errorf("%s: position_embedding_type %q is not supported (want \"absolute\")", file, c.PositionEmbeddingType)
	}
	if err := checkPositive(file,
		setting{"hidden_size", c.HiddenSize}, setting{"num_hidden_layers", c.NumHiddenLayers},
		setting{"num_attention_heads", c.NumAttentionHeads}, setting{"intermediate_size", c.IntermediateSize},
		setting{"max_position_embeddings", c.MaxPositionEmbeddings},
		setting{"type_vocab_size", c.TypeVocabSize}, setting{"vocab_size", c.VocabSize}); err != nil {
		return err
	}
	if c.HiddenSize%c.NumAttentionHeads != 0 {
		return fmt.Errorf("%s: hidden_size %d is not a multiple of num_attention_heads %d", file, c.HiddenSize, c.NumAttentionHeads)
	}
	if c.LayerNormEps <= 0 {
		c.LayerNormEps = 1e-12
	}
	return nil
}

func (c *BertConfig) maxPositions() int  { return c.MaxPositionEmbeddings }
func (c *BertConfig) defaultSeqLen() int { return 512 }

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
	Pipeline
	Config BertConfig

	w *bertWeights

	mu      sync.Mutex
	graphs  map[[2]int]*bertGraph
	order   [][2]int
	bufs    bertBuffers
	scratch arena // attention's score blocks
}

// OpenBERT loads a sentence-transformers model folder: config.json,
// model.safetensors, tokenizer.json, and optionally modules.json (default:
// Transformer then mean Pooling, no Normalize), 1_Pooling/config.json (the
// folder modules.json names) and sentence_bert_config.json (default
// max_seq_length: min(512, max_position_embeddings)).
func OpenBERT(dir string) (*BERT, error) {
	b := &BERT{}
	var err error
	if b.Pipeline, b.w, err = openFolder(dir, "bert/v1/", &b.Config, loadBertWeights); err != nil {
		return nil, err
	}
	return b, nil
}

// Dim implements Encoder.
func (b *BERT) Dim() int { return b.Config.HiddenSize * len(b.Pooling) }

// Encode implements Encoder. Texts are tokenised, sorted by length and run in
// batches of similar length padded to a multiple of 8 tokens; the padding is
// masked, so a text's vector does not depend on its batch.
func (b *BERT) Encode(ctx context.Context, texts []string) ([][]float32, error) {
	return b.encode(ctx, texts, b.Config.HiddenSize, b.Forward)
}

// Forward runs the transformer on a batch of encodings, right-padded to the
// longest rounded up to a multiple of 8 (at most MaxSeqLen), and returns the
// last hidden states (len(batch) × L × D, row-major) and L.
func (b *BERT) Forward(batch []tokenizer.Encoding) ([]float32, int, error) {
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
		b.scratch = arena{}
	}
	g, err := newBertGraph(b.w, &b.Config, b.bufs, b.scratch, batch, l)
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
