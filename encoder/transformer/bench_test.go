package transformer

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/jeirt/jeirt/encoder/tokenizer"
	"github.com/jeirt/jeirt/model/tensorfile"
)

// cpuSeconds is the user plus system CPU time of this process so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

// randomBERT makes a BERT with N(0, 0.02) weights in the shape of cfg,
// through the same loader as a real folder.
func randomBERT(tb testing.TB, cfg BertConfig) *BERT {
	rng := rand.New(rand.NewPCG(1, 2))
	st := &tensorfile.Safetensors{Tensors: map[string]tensorfile.Tensor{}}
	put := func(name string, shape ...int) {
		n := 1
		for _, d := range shape {
			n *= d
		}
		data := make([]float32, n)
		for i := range data {
			data[i] = float32(rng.NormFloat64() * 0.02)
		}
		st.Tensors[name] = tensorfile.Tensor{Shape: shape, Data: data}
	}
	d, ff := cfg.HiddenSize, cfg.IntermediateSize
	put("embeddings.word_embeddings.weight", cfg.VocabSize, d)
	put("embeddings.position_embeddings.weight", cfg.MaxPositionEmbeddings, d)
	put("embeddings.token_type_embeddings.weight", cfg.TypeVocabSize, d)
	put("embeddings.LayerNorm.weight", d)
	put("embeddings.LayerNorm.bias", d)
	for l := 0; l < cfg.NumHiddenLayers; l++ {
		p := fmt.Sprintf("encoder.layer.%d.", l)
		for _, n := range []string{"attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"} {
			put(p+n+".weight", d, d)
			put(p+n+".bias", d)
		}
		put(p+"intermediate.dense.weight", ff, d)
		put(p+"intermediate.dense.bias", ff)
		put(p+"output.dense.weight", d, ff)
		put(p+"output.dense.bias", d)
		for _, n := range []string{"attention.output.LayerNorm", "output.LayerNorm"} {
			put(p+n+".weight", d)
			put(p+n+".bias", d)
		}
	}
	if err := cfg.check("config.json"); err != nil {
		tb.Fatal(err)
	}
	w, err := loadBertWeights("random", st, &cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return &BERT{Pipeline: Pipeline{Tokenizer: &tokenizer.Tokenizer{MaxLen: 128}, Pooling: []string{PoolMean}, Normalize: true, MaxSeqLen: 128}, Config: cfg, w: w}
}

// miniLMConfig is all-MiniLM-L6-v2's shape.
var miniLMConfig = BertConfig{BaseConfig: BaseConfig{ModelType: "bert", HiddenSize: 384, NumHiddenLayers: 6, NumAttentionHeads: 12, IntermediateSize: 1536, MaxPositionEmbeddings: 512, VocabSize: 30522}, HiddenAct: "gelu", LayerNormEps: 1e-12, TypeVocabSize: 2}

// bertFLOPs is the multiply-add count ×2 of one forward pass over a text of
// l tokens: per layer Q, K, V and output projections (4·2·l·d²), the two
// feed-forward matrices (2·2·l·d·ff) and the two attention products (2·2·l²·d).
func bertFLOPs(c BertConfig, l int) float64 {
	d, ff := float64(c.HiddenSize), float64(c.IntermediateSize)
	L := float64(l)
	return float64(c.NumHiddenLayers) * (8*L*d*d + 4*L*d*ff + 4*L*L*d)
}

// BenchmarkBERTMiniLM runs a MiniLM-sized BERT (6 layers, hidden 384, 12
// heads, 128 tokens, random weights) on batches of 32 full-length texts and
// reports sentences/s and the GFLOP/s of the forward pass.
func BenchmarkBERTMiniLM(b *testing.B) {
	for _, batch := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			m := randomBERT(b, miniLMConfig)
			rng := rand.New(rand.NewPCG(3, 4))
			encs := make([]tokenizer.Encoding, batch)
			for i := range encs {
				e := tokenizer.Encoding{IDs: make([]int32, 128), AttentionMask: make([]int32, 128)}
				for t := range e.IDs {
					e.IDs[t] = int32(rng.IntN(30522))
					e.AttentionMask[t] = 1
				}
				encs[i] = e
			}
			if _, _, err := m.Forward(encs); err != nil { // compile the graph
				b.Fatal(err)
			}
			// The Linear products' time inside the forwards, by shape.
			type shape struct{ in, out int }
			spent := map[shape]time.Duration{}
			done := map[shape]float64{} // flops
			linearTimed = func(rows, in, out int, d time.Duration) {
				spent[shape{in, out}] += d
				done[shape{in, out}] += 2 * float64(rows) * float64(in) * float64(out)
			}
			defer func() { linearTimed = nil }()
			b.ResetTimer()
			cpu0 := cpuSeconds()
			for i := 0; i < b.N; i++ {
				if _, _, err := m.Forward(encs); err != nil {
					b.Fatal(err)
				}
			}
			cpu := cpuSeconds() - cpu0
			for s, d := range spent {
				b.ReportMetric(done[s]/d.Seconds()/1e9, fmt.Sprintf("%dx%d-GFLOP/s", s.in, s.out))
			}
			sps := float64(b.N*batch) / b.Elapsed().Seconds()
			flops := bertFLOPs(miniLMConfig, 128)
			b.ReportMetric(sps, "sentences/s")
			b.ReportMetric(sps*flops/1e9, "GFLOP/s")
			// Per CPU-second figures hold up on a shared machine, where
			// wall time depends on what else runs.
			b.ReportMetric(float64(b.N*batch)*flops/1e9/cpu, "GFLOP/cpu-s")
		})
	}
}

// Base-sized shapes of the paper's encoders: all-mpnet-base-v2 and
// ModernBERT-base / ModernBERT-large (hub config values).
var (
	mpnetBaseConfig       = MPNetConfig{BaseConfig: BaseConfig{ModelType: "mpnet", HiddenSize: 768, NumHiddenLayers: 12, NumAttentionHeads: 12, IntermediateSize: 3072, MaxPositionEmbeddings: 514, VocabSize: 30527}, HiddenAct: "gelu", LayerNormEps: 1e-5, RelativeAttentionNumBuckets: 32}
	modernBERTBaseConfig  = ModernBERTConfig{BaseConfig: BaseConfig{ModelType: "modernbert", HiddenSize: 768, NumHiddenLayers: 22, NumAttentionHeads: 12, IntermediateSize: 1152, VocabSize: 50368}, GlobalAttnEveryNLayers: 3, LocalAttention: 128}
	modernBERTLargeConfig = ModernBERTConfig{BaseConfig: BaseConfig{ModelType: "modernbert", HiddenSize: 1024, NumHiddenLayers: 28, NumAttentionHeads: 16, IntermediateSize: 2624, VocabSize: 50368}, GlobalAttnEveryNLayers: 3, LocalAttention: 128}
)

// randomBatch is batch encodings of l random ids below vocab.
func randomBatch(batch, l, vocab int) []tokenizer.Encoding {
	rng := rand.New(rand.NewPCG(3, 4))
	encs := make([]tokenizer.Encoding, batch)
	for i := range encs {
		e := tokenizer.Encoding{IDs: make([]int32, l), AttentionMask: make([]int32, l)}
		for t := range e.IDs {
			e.IDs[t] = int32(4 + rng.IntN(vocab-4))
			e.AttentionMask[t] = 1
		}
		encs[i] = e
	}
	return encs
}

// benchForward times forward on batches of 32 texts of 128 tokens and
// reports sentences/s, GFLOP/s and GFLOP per CPU-second.
func benchForward(b *testing.B, forward func([]tokenizer.Encoding) ([]float32, int, error), vocab int, flops float64) {
	benchForwardBatch(b, forward, vocab, flops, 32)
}

func benchForwardBatch(b *testing.B, forward func([]tokenizer.Encoding) ([]float32, int, error), vocab int, flops float64, batch int) {
	encs := randomBatch(batch, 128, vocab)
	// No warm-up pass: the kernels' buffers are allocated on the first
	// call, in milliseconds against seconds of arithmetic.
	b.ResetTimer()
	cpu0 := cpuSeconds()
	for i := 0; i < b.N; i++ {
		if _, _, err := forward(encs); err != nil {
			b.Fatal(err)
		}
	}
	cpu := cpuSeconds() - cpu0
	sps := float64(b.N*len(encs)) / b.Elapsed().Seconds()
	b.ReportMetric(sps, "sentences/s")
	b.ReportMetric(sps*flops/1e9, "GFLOP/s")
	// Per CPU-second figures hold up on a shared machine, where wall time
	// depends on what else runs.
	b.ReportMetric(float64(b.N*len(encs))/cpu, "sentences/cpu-s")
	b.ReportMetric(float64(b.N*len(encs))*flops/1e9/cpu, "GFLOP/cpu-s")
}

// BenchmarkMPNetBase runs an all-mpnet-base-v2-sized MPNet (12 layers,
// hidden 768, random weights) on a batch of 32 texts of 128 tokens.
func BenchmarkMPNetBase(b *testing.B) {
	c := mpnetBaseConfig
	if err := c.check("config.json"); err != nil {
		b.Fatal(err)
	}
	r := newRandomTensors(1, 0.02)
	randomMPNetTensors(r, &c)
	w, err := loadMPNetWeights("random", r.st, &c)
	if err != nil {
		b.Fatal(err)
	}
	m := &MPNet{Pipeline: Pipeline{MaxSeqLen: 512}, Config: c, w: w}
	d, ff, L := float64(c.HiddenSize), float64(c.IntermediateSize), 128.0
	benchForward(b, m.Forward, c.VocabSize, float64(c.NumHiddenLayers)*(8*L*d*d+4*L*d*ff+4*L*L*d))
}

// randomModernBERT builds a ModernBERT of shape c with N(0, 0.02) weights.
func randomModernBERT(tb testing.TB, c ModernBERTConfig) *ModernBERT {
	if err := c.check("config.json"); err != nil {
		tb.Fatal(err)
	}
	r := newRandomTensors(1, 0.02)
	randomModernTensors(r, &c)
	w, err := loadModernWeights("random", r.st, &c)
	if err != nil {
		tb.Fatal(err)
	}
	return &ModernBERT{Pipeline: Pipeline{MaxSeqLen: 512}, Config: c, w: w}
}

// modernFLOPs counts one forward pass over l tokens: Wqkv and Wo (8·l·d²),
// Wi (2·l·d·2ff) and the MLP's Wo (2·l·ff·d), and the two attention products
// (4·l²·d; the sliding layers' window is the whole text at 128 tokens).
func modernFLOPs(c ModernBERTConfig, l int) float64 {
	d, ff, L := float64(c.HiddenSize), float64(c.IntermediateSize), float64(l)
	return float64(c.NumHiddenLayers) * (8*L*d*d + 6*L*d*ff + 4*L*L*d)
}

// BenchmarkModernBERTBase runs a ModernBERT-base-sized model (22 layers,
// hidden 768, random weights) on a batch of 32 texts of 128 tokens.
func BenchmarkModernBERTBase(b *testing.B) {
	m := randomModernBERT(b, modernBERTBaseConfig)
	benchForward(b, m.Forward, m.Config.VocabSize, modernFLOPs(m.Config, 128))
}

// BenchmarkModernBERTLarge runs a ModernBERT-large-sized model (28 layers,
// hidden 1024, 395M random weights) on texts of 128 tokens, JEIRT_BENCH_BATCH
// at a time (default 32); scripts/bench-encoder.sh runs it under
// /usr/bin/time -v for the peak resident memory.
func BenchmarkModernBERTLarge(b *testing.B) {
	batch := 32
	if v, err := strconv.Atoi(os.Getenv("JEIRT_BENCH_BATCH")); err == nil && v > 0 {
		batch = v
	}
	m := randomModernBERT(b, modernBERTLargeConfig)
	benchForwardBatch(b, m.Forward, m.Config.VocabSize, modernFLOPs(m.Config, 128), batch)
}
