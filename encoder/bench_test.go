package encoder

import (
	"context"
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"

	"github.com/jeirt/jeirt/model"
)

// cpuSeconds is the user plus system CPU time of this process so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

// BenchmarkHashEncoder reports sentences per second of the default hash
// encoder on benchmark-style questions.
func BenchmarkHashEncoder(b *testing.B) {
	enc, _ := Open("hash")
	texts := make([]string, 4096)
	for i := range texts {
		p := paraphrases[i%20]
		texts[i] = fmt.Sprintf("%s %s (variant %d)", p[0], p[1], i)
	}
	ctx := context.Background()
	b.ResetTimer()
	cpu0 := cpuSeconds()
	for i := 0; i < b.N; i++ {
		if _, err := enc.Encode(ctx, texts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(texts))/b.Elapsed().Seconds(), "sentences/s")
	b.ReportMetric(float64(b.N*len(texts))/(cpuSeconds()-cpu0), "sentences/cpu-s")
}

// randomBERT makes a BERT with N(0, 0.02) weights in the shape of cfg,
// through the same loader as a real folder.
func randomBERT(tb testing.TB, cfg BertConfig) *BERT {
	rng := rand.New(rand.NewPCG(1, 2))
	st := &model.Safetensors{Tensors: map[string]model.Tensor{}}
	put := func(name string, shape ...int) {
		n := 1
		for _, d := range shape {
			n *= d
		}
		data := make([]float32, n)
		for i := range data {
			data[i] = float32(rng.NormFloat64() * 0.02)
		}
		st.Tensors[name] = model.Tensor{Shape: shape, Data: data}
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
	return &BERT{Config: cfg, Tokenizer: &Tokenizer{MaxLen: 128}, Pooling: []string{PoolMean}, Normalize: true, MaxSeqLen: 128, w: w}
}

// miniLMConfig is all-MiniLM-L6-v2's shape.
var miniLMConfig = BertConfig{ModelType: "bert", HiddenSize: 384, NumHiddenLayers: 6, NumAttentionHeads: 12,
	IntermediateSize: 1536, HiddenAct: "gelu", LayerNormEps: 1e-12, MaxPositionEmbeddings: 512, TypeVocabSize: 2, VocabSize: 30522}

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
			encs := make([]Encoding, batch)
			for i := range encs {
				e := Encoding{IDs: make([]int32, 128), AttentionMask: make([]int32, 128)}
				for t := range e.IDs {
					e.IDs[t] = int32(rng.IntN(30522))
					e.AttentionMask[t] = 1
				}
				encs[i] = e
			}
			if _, _, err := m.Forward(encs); err != nil { // compile the graph
				b.Fatal(err)
			}
			b.ResetTimer()
			cpu0 := cpuSeconds()
			for i := 0; i < b.N; i++ {
				if _, _, err := m.Forward(encs); err != nil {
					b.Fatal(err)
				}
			}
			cpu := cpuSeconds() - cpu0
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
