package transformer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/jeirt/jeirt/encoder/tokenizer"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/limits"
	"github.com/jeirt/jeirt/model/tensorfile"
)

// Pipeline is what a sentence-transformers folder puts around every
// architecture's transformer: the tokenizer, the Pooling module (modules.json,
// 1_Pooling/config.json), the optional Normalize module and the sequence
// length (sentence_bert_config.json). BERT, MPNet and ModernBERT embed it.
type Pipeline struct {
	// BatchSize is the most texts one forward pass takes. Zero means 32.
	BatchSize int

	Tokenizer *tokenizer.Tokenizer
	// Pooling lists the pooling modes (PoolCLS, PoolMax, PoolMean,
	// PoolMeanSqrtLen), concatenated in this order.
	Pooling   []string
	Normalize bool
	// MaxSeqLen is sentence_bert_config.json's max_seq_length: the most
	// tokens per text, special tokens included.
	MaxSeqLen int

	fingerprint string
}

// Fingerprint implements Encoder: the architecture, a hash of every file read
// and the pooling, normalisation and sequence length.
func (p *Pipeline) Fingerprint() string { return p.fingerprint }

// SetBatchSize sets BatchSize.
func (p *Pipeline) SetBatchSize(n int) { p.BatchSize = n }

// encode tokenises texts, runs them through forward (hidden size d) in
// length-sorted batches and pools each text's hidden states.
func (p *Pipeline) encode(ctx context.Context, texts []string, d int, forward func([]tokenizer.Encoding) ([]float32, int, error)) ([][]float32, error) {
	return encodeSorted(ctx, texts, p.Tokenizer, p.BatchSize, d, forward,
		func(h []float32, mask []int32) []float32 {
			return poolVector(h, mask, d, p.Pooling, p.Normalize)
		})
}

// modelFolder is what reading a sentence-transformers folder gives every
// transformer architecture: the pipeline, the weights and a hash of every file
// read.
type modelFolder struct {
	Pipeline
	dir       string
	Weights   *tensorfile.Safetensors
	WeightsAt string
	hash      hash.Hash
}

// BaseConfig holds the config.json settings every architecture reads.
type BaseConfig struct {
	ModelType             string   `json:"model_type"`
	Architectures         []string `json:"architectures"`
	HiddenSize            int      `json:"hidden_size"`
	NumHiddenLayers       int      `json:"num_hidden_layers"`
	NumAttentionHeads     int      `json:"num_attention_heads"`
	IntermediateSize      int      `json:"intermediate_size"`
	MaxPositionEmbeddings int      `json:"max_position_embeddings"`
	VocabSize             int      `json:"vocab_size"`
}

func (c *BaseConfig) hidden() int { return c.HiddenSize }

// checkArchitectures reports the first of config.json's architectures that is
// not in ok; the error suggests ok[0].
func (c *BaseConfig) checkArchitectures(file string, ok ...string) error {
	for _, a := range c.Architectures {
		if !slices.Contains(ok, a) {
			return fmt.Errorf("%s: architecture %q is not supported (want %s)", file, a, ok[0])
		}
	}
	return nil
}

// setting is an integer of config.json by its name there.
type setting struct {
	name string
	v    int
}

// checkPositive reports the first setting that is not positive.
func checkPositive(file string, settings ...setting) error {
	for _, s := range settings {
		if s.v <= 0 {
			return fmt.Errorf("%s: %s must be positive, got %d", file, s.name, s.v)
		}
	}
	return nil
}

// archConfig is the part of config.json the folder reader needs.
type archConfig interface {
	check(file string) error
	hidden() int
	// maxPositions bounds max_seq_length; defaultSeqLen is used when
	// sentence_bert_config.json gives none.
	maxPositions() int
	defaultSeqLen() int
}

// readModelFolder reads config.json into cfg and checks it, then modules.json
// (default: Transformer then mean Pooling, no Normalize), the Pooling module's
// config.json, sentence_bert_config.json, tokenizer.json and
// model.safetensors.
func readModelFolder(dir string, cfg archConfig) (*modelFolder, error) {
	f := &modelFolder{Pipeline: Pipeline{Pooling: []string{PoolMean}}, dir: dir, hash: sha256.New()}
	cfgPath := filepath.Join(dir, "config.json")
	if _, err := f.readJSON("config.json", cfg, true); err != nil {
		return nil, err
	}
	if err := cfg.check(cfgPath); err != nil {
		return nil, err
	}

	if err := f.readPipelineFiles(cfg); err != nil {
		return nil, err
	}
	var err error
	tokPath := filepath.Join(dir, "tokenizer.json")
	if _, err := os.Stat(tokPath); err != nil {
		return nil, fmt.Errorf("model folder %s: tokenizer.json is missing (%w)", dir, err)
	}
	if f.Tokenizer, err = tokenizer.Load(tokPath, f.MaxSeqLen); err != nil {
		return nil, err
	}
	if err := hashFile(f.hash, tokPath); err != nil {
		return nil, err
	}
	f.WeightsAt = filepath.Join(dir, "model.safetensors")
	// An F32 file is mapped rather than read, so that the weights are in
	// memory once (a ModernBERT-large is 1.6 GB); others are decoded.
	var mapped bool
	if f.Weights, mapped, err = tensorfile.MapSafetensors(f.WeightsAt); err == nil && !mapped {
		f.Weights, err = tensorfile.ReadSafetensors(f.WeightsAt)
	}
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("model folder %s: model.safetensors is missing (jeirt reads safetensors only; convert pytorch_model.bin with safetensors.torch.save_file)", dir)
		}
		return nil, err
	}
	if err := hashFile(f.hash, f.WeightsAt); err != nil {
		return nil, err
	}
	return f, nil
}

// readPipelineFiles reads what a sentence-transformers folder says about the
// steps around the transformer: modules.json (default: Transformer then mean
// Pooling, no Normalize), the Pooling module's config.json and
// sentence_bert_config.json's max_seq_length, bounded by cfg's positions.
func (f *modelFolder) readPipelineFiles(cfg archConfig) error {
	// modules.json: the pipeline after the transformer.
	var modules []struct {
		Path string `json:"path"`
		Type string `json:"type"`
	}
	hasModules, err := f.readJSON("modules.json", &modules, false)
	if err != nil {
		return err
	}
	if hasModules {
		f.Pooling = nil
		for i, m := range modules {
			if m.Path != "" && !filepath.IsLocal(m.Path) {
				return fmt.Errorf("%s: module %d's path %q leaves the model folder", filepath.Join(f.dir, "modules.json"), i, limits.Clip(m.Path))
			}
			switch m.Type {
			case "sentence_transformers.models.Transformer":
				if i != 0 {
					return fmt.Errorf("%s: the Transformer module must come first", filepath.Join(f.dir, "modules.json"))
				}
			case "sentence_transformers.models.Pooling":
				if f.Pooling, err = readPooling(f.dir, m.Path, cfg.hidden(), f.readJSON); err != nil {
					return err
				}
			case "sentence_transformers.models.Normalize":
				f.Normalize = true
			default:
				return fmt.Errorf("%s: module %q is not supported (jeirt runs Transformer, Pooling, Normalize)", filepath.Join(f.dir, "modules.json"), limits.Clip(m.Type))
			}
		}
		if f.Pooling == nil {
			return fmt.Errorf("%s: no sentence_transformers.models.Pooling module", filepath.Join(f.dir, "modules.json"))
		}
	}

	var sbert struct {
		MaxSeqLength int `json:"max_seq_length"`
	}
	if _, err := f.readJSON("sentence_bert_config.json", &sbert, false); err != nil {
		return err
	}
	f.MaxSeqLen = min(cfg.defaultSeqLen(), cfg.maxPositions())
	if sbert.MaxSeqLength > 0 {
		f.MaxSeqLen = min(sbert.MaxSeqLength, cfg.maxPositions())
	}
	return nil
}

// openFolder reads the folder dir with config.json decoded into cfg, and
// loads its weights with load; kind starts the fingerprint.
func openFolder[C archConfig, W any](dir, kind string, cfg C, load func(file string, st *tensorfile.Safetensors, c C) (W, error)) (Pipeline, W, error) {
	var w W
	f, err := readModelFolder(dir, cfg)
	if err != nil {
		return Pipeline{}, w, err
	}
	p := f.pipeline(kind)
	if w, err = load(f.WeightsAt, f.Weights, cfg); err != nil {
		return Pipeline{}, w, err
	}
	return p, w, nil
}

// readJSON decodes dir/name into v and adds the file to the hash; a missing
// file that is not required is reported as false.
func (f *modelFolder) readJSON(name string, v any, required bool) (bool, error) {
	path := filepath.Join(f.dir, name)
	data, err := fileio.ReadInputFile(path, fileio.MaxDocumentBytes, "a model folder's JSON file")
	if errors.Is(err, os.ErrNotExist) && !required {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("model folder %s: %w", f.dir, err)
	}
	fmt.Fprintf(f.hash, "%s %d\n", name, len(data))
	f.hash.Write(data)
	if err := json.Unmarshal(data, v); err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	return true, nil
}

// pipeline returns the folder's pipeline, its fingerprint kind (such as
// "bert/v1/") followed by a hash of every file read with the pooling,
// normalisation and sequence length.
func (f *modelFolder) pipeline(kind string) Pipeline {
	fmt.Fprintf(f.hash, "pool=%s normalize=%v maxlen=%d", strings.Join(f.Pooling, "+"), f.Normalize, f.MaxSeqLen)
	p := f.Pipeline
	p.fingerprint = kind + hex.EncodeToString(f.hash.Sum(nil))[:32]
	return p
}

func hashFile(h io.Writer, path string) error {
	f, err := fileio.OpenInput(path)
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
	if d, ok := cfg["word_embedding_dimension"].(float64); ok && d != float64(hidden) {
		return nil, fmt.Errorf("%s: word_embedding_dimension %g, but config.json has hidden_size %d", path, d, hidden)
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

// ModelType reads config.json's model_type.
func ModelType(dir string) (string, error) {
	path := filepath.Join(dir, "config.json")
	data, err := fileio.ReadInputFile(path, fileio.MaxDocumentBytes, "a model folder's config.json")
	if err != nil {
		return "", fmt.Errorf("model folder %s: %w", dir, err)
	}
	var c struct {
		ModelType string `json:"model_type"`
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return c.ModelType, nil
}

// encodeSorted tokenises texts, sorts them by length (longest first) and runs
// them through forward in batches of bs, so each batch is padded only to its
// own longest text; pool turns one text's hidden states (L × d) into its
// vector. The padding is masked, so a text's vector does not depend on its
// batch.
func encodeSorted(ctx context.Context, texts []string, tok *tokenizer.Tokenizer, bs, d int,
	forward func([]tokenizer.Encoding) ([]float32, int, error), pool func(h []float32, mask []int32) []float32) ([][]float32, error) {
	encs := make([]tokenizer.Encoding, len(texts))
	for i, t := range texts {
		e, err := tok.Encode(t)
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
	if bs <= 0 {
		bs = 32
	}
	out := make([][]float32, len(texts))
	for lo := 0; lo < len(order); lo += bs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		batch := order[lo:min(lo+bs, len(order))]
		be := make([]tokenizer.Encoding, len(batch))
		for k, i := range batch {
			be[k] = encs[i]
		}
		hidden, l, err := forward(be)
		if err != nil {
			return nil, err
		}
		for k, i := range batch {
			out[i] = pool(hidden[k*l*d:(k+1)*l*d], be[k].AttentionMask)
		}
	}
	return out, nil
}

// poolVector applies sentence-transformers' Pooling modes, concatenated in
// their order, and Normalize to one text's hidden states (L × d, row-major,
// L ≥ len(mask)); sums run in float64.
func poolVector(h []float32, mask []int32, d int, modes []string, normalize bool) []float32 {
	out := make([]float32, 0, d*len(modes))
	var n float64
	for _, m := range mask {
		n += float64(m)
	}
	for _, mode := range modes {
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
	if normalize {
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

// Model is what every architecture gives: Encode pools and normalises as the
// folder declares, Forward returns the last hidden state of a tokenised batch.
type Model interface {
	// Dim is the length of every vector Encode returns.
	Dim() int
	// Fingerprint hashes the files the model was read from and its settings.
	Fingerprint() string
	// Encode returns one vector per text, in order. It honours ctx cancellation.
	Encode(ctx context.Context, texts []string) ([][]float32, error)
	// Forward runs a tokenised batch and returns the last hidden state,
	// batch × L × hidden, and the padded length L.
	Forward(batch []tokenizer.Encoding) ([]float32, int, error)
	// SetBatchSize sets how many texts Encode runs at once.
	SetBatchSize(n int)
}

// Open opens a sentence-transformers model folder with the implementation of
// its config.json model_type: bert (OpenBERT), mpnet (OpenMPNet) or
// modernbert (OpenModernBERT).
func Open(dir string) (Model, error) {
	typ, err := ModelType(dir)
	if err != nil {
		return nil, err
	}
	// Each case returns its own error so that a failed open is a nil Model,
	// not a typed nil pointer.
	switch typ {
	case "bert":
		b, err := OpenBERT(dir)
		if err != nil {
			return nil, err
		}
		return b, nil
	case "mpnet":
		m, err := OpenMPNet(dir)
		if err != nil {
			return nil, err
		}
		return m, nil
	case "modernbert":
		m, err := OpenModernBERT(dir)
		if err != nil {
			return nil, err
		}
		return m, nil
	}
	return nil, fmt.Errorf("%s: model_type %q is not supported (jeirt runs \"bert\": all-MiniLM, BGE, E5, GTE; \"mpnet\": all-mpnet-base-v2; \"modernbert\": ModernBERT, gte-modernbert, modernbert-embed)",
		filepath.Join(dir, "config.json"), typ)
}
