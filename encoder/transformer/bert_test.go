package transformer

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/encoder/tokenizer"
	"github.com/jeirt/jeirt/model/tensorfile"
)

type expectedSentence struct {
	Text             string      `json:"text"`
	IDs              []int32     `json:"ids"`
	PooledNormalized []float64   `json:"pooled_normalized"`
	LastHidden       [][]float64 `json:"last_hidden_state"`
}

type expectedFile struct {
	Sentences   []expectedSentence `json:"sentences"`
	PaddedBatch struct {
		SentenceIndices  []int       `json:"sentence_indices"`
		PooledNormalized [][]float64 `json:"pooled_normalized"`
	} `json:"padded_batch"`
}

func loadExpected(t *testing.T, dir string) *expectedFile {
	b, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var e expectedFile
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	if len(e.Sentences) != 27 {
		t.Fatalf("expected.json has %d sentences", len(e.Sentences))
	}
	return &e
}

func maxAbsDiff(a []float32, b []float64) float64 {
	var m float64
	for i := range b {
		m = math.Max(m, math.Abs(float64(a[i])-b[i]))
	}
	return m
}

// TestBERTMatchesFixture runs the tiny-bert folder through Open and compares
// with the float64 torch reference: pooled normalised embeddings within 2e-6,
// last_hidden_state within 1e-5, each sentence alone and all 27 in one batch.
func TestBERTMatchesFixture(t *testing.T) {
	dir := tinyBERT(t)
	exp := loadExpected(t, dir)
	enc, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	b := enc.(*BERT)
	if enc.Dim() != 32 || !b.Normalize || len(b.Pooling) != 1 || b.Pooling[0] != PoolMean || b.MaxSeqLen != 128 {
		t.Fatalf("folder read as dim %d normalize %v pooling %v max_seq_len %d", enc.Dim(), b.Normalize, b.Pooling, b.MaxSeqLen)
	}
	ctx := context.Background()
	texts := make([]string, len(exp.Sentences))
	for i, s := range exp.Sentences {
		texts[i] = s.Text
	}
	all, err := enc.Encode(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	var worstAlone, worstBatch, worstHidden float64
	for i, s := range exp.Sentences {
		alone, err := enc.Encode(ctx, texts[i:i+1])
		if err != nil {
			t.Fatal(err)
		}
		worstAlone = math.Max(worstAlone, maxAbsDiff(alone[0], s.PooledNormalized))
		worstBatch = math.Max(worstBatch, maxAbsDiff(all[i], s.PooledNormalized))
		if s.LastHidden != nil {
			e, _ := b.Tokenizer.Encode(s.Text)
			h, l, err := b.Forward([]tokenizer.Encoding{e})
			if err != nil {
				t.Fatal(err)
			}
			if len(s.LastHidden) != len(e.IDs) || l < len(e.IDs) {
				t.Fatalf("sentence %d: %d reference rows, %d tokens, L=%d", i, len(s.LastHidden), len(e.IDs), l)
			}
			for r, row := range s.LastHidden {
				worstHidden = math.Max(worstHidden, maxAbsDiff(h[r*32:(r+1)*32], row))
			}
		}
	}
	t.Logf("max |diff| pooled: alone %.2g, batch of 27 %.2g; last_hidden_state %.2g", worstAlone, worstBatch, worstHidden)
	if worstAlone > 2e-6 || worstBatch > 2e-6 {
		t.Errorf("pooled_normalized off by %.3g alone, %.3g in a batch (want <= 2e-6)", worstAlone, worstBatch)
	}
	if worstHidden > 1e-5 {
		t.Errorf("last_hidden_state off by %.3g (want <= 1e-5)", worstHidden)
	}

	// The fixture's padded batch: sentences of 12, 4, 2, 45 and 128 tokens.
	pb := exp.PaddedBatch
	var pbTexts []string
	for _, i := range pb.SentenceIndices {
		pbTexts = append(pbTexts, texts[i])
	}
	got, err := enc.Encode(ctx, pbTexts)
	if err != nil {
		t.Fatal(err)
	}
	for k, i := range pb.SentenceIndices {
		if d := maxAbsDiff(got[k], pb.PooledNormalized[k]); d > 2e-6 {
			t.Errorf("padded batch row %d (sentence %d) off by %.3g", k, i, d)
		}
		for j := range got[k] {
			if d := math.Abs(float64(got[k][j] - all[i][j])); d > 1e-6 {
				t.Errorf("sentence %d: batch of 5 and batch of 27 differ by %.3g", i, d)
				break
			}
		}
	}
}

// copyFixture copies the tiny-bert folder to a temporary one that the test
// may break.
func copyFixture(t *testing.T) string {
	src := tinyBERT(t)
	dst := t.TempDir()
	for _, name := range []string{"config.json", "model.safetensors", "tokenizer.json", "modules.json", "sentence_bert_config.json", "1_Pooling/config.json"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(filepath.Join(dst, name)), 0o755)
		if err := os.WriteFile(filepath.Join(dst, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func TestBERTFolderErrors(t *testing.T) {
	tinyBERT(t)
	editJSON := func(path string, edit func(m map[string]any)) {
		b, _ := os.ReadFile(path)
		var m map[string]any
		json.Unmarshal(b, &m)
		edit(m)
		b, _ = json.Marshal(m)
		os.WriteFile(path, b, 0o644)
	}
	editWeights := func(path string, edit func(st *tensorfile.Safetensors)) {
		st, err := tensorfile.ReadSafetensors(path)
		if err != nil {
			t.Fatal(err)
		}
		edit(st)
		if err := tensorfile.WriteSafetensorsFile(path, st.Tensors, st.Metadata); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name    string
		breakIt func(dir string)
		want    string // after the folder name
	}{
		{"missing weights", func(dir string) { os.Remove(filepath.Join(dir, "model.safetensors")) },
			"model folder DIR: model.safetensors is missing (jeirt reads safetensors only; convert pytorch_model.bin with safetensors.torch.save_file)"},
		{"missing tokenizer", func(dir string) { os.Remove(filepath.Join(dir, "tokenizer.json")) },
			"model folder DIR: tokenizer.json is missing (stat DIR/tokenizer.json: no such file or directory)"},
		{"activation", func(dir string) {
			editJSON(filepath.Join(dir, "config.json"), func(m map[string]any) { m["hidden_act"] = "swish" })
		}, `DIR/config.json: hidden_act "swish" is not supported (want "gelu", exact erf GELU)`},
		{"architecture", func(dir string) {
			editJSON(filepath.Join(dir, "config.json"), func(m map[string]any) { m["model_type"] = "gpt2" })
		}, `DIR/config.json: model_type "gpt2" is not supported (jeirt runs "bert": all-MiniLM, BGE, E5, GTE; "mpnet": all-mpnet-base-v2; "modernbert": ModernBERT, gte-modernbert, modernbert-embed)`},
		{"architecture mismatch", func(dir string) {
			editJSON(filepath.Join(dir, "config.json"), func(m map[string]any) { m["model_type"] = "mpnet" })
		}, `DIR/config.json: architecture "BertModel" is not supported (want MPNetModel)`},
		{"shape", func(dir string) {
			editJSON(filepath.Join(dir, "config.json"), func(m map[string]any) { m["intermediate_size"] = 48 })
		}, `DIR/model.safetensors: tensor "encoder.layer.0.intermediate.dense.weight" has shape [64 32], config.json implies [48 32]`},
		{"missing tensor", func(dir string) {
			editWeights(filepath.Join(dir, "model.safetensors"), func(st *tensorfile.Safetensors) {
				delete(st.Tensors, "encoder.layer.1.output.LayerNorm.bias")
			})
		}, `DIR/model.safetensors: tensor "encoder.layer.1.output.LayerNorm.bias" is missing`},
		{"pooling", func(dir string) {
			editJSON(filepath.Join(dir, "1_Pooling/config.json"), func(m map[string]any) {
				m["pooling_mode_mean_tokens"] = false
				m["pooling_mode_lasttoken"] = true
			})
		}, "DIR/1_Pooling/config.json: pooling_mode_lasttoken is not supported (jeirt pools cls, max, mean, mean_sqrt_len)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyFixture(t)
			tc.breakIt(dir)
			_, err := Open(dir)
			want := strings.ReplaceAll(tc.want, "DIR", dir)
			if err == nil || err.Error() != want {
				t.Errorf("error\n %v\nwant\n %s", err, want)
			}
		})
	}
}

// TestBERTPoolingModes checks CLS and max pooling against the hidden states.
func TestBERTPoolingModes(t *testing.T) {
	dir := copyFixture(t)
	b, err := OpenBERT(dir)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := b.Tokenizer.Encode("Pooling picks rows.")
	h, _, err := b.Forward([]tokenizer.Encoding{e})
	if err != nil {
		t.Fatal(err)
	}
	b.Normalize = false
	b.Pooling = []string{PoolCLS, PoolMax}
	v, err := b.Encode(context.Background(), []string{"Pooling picks rows."})
	if err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 32; k++ {
		if v[0][k] != h[k] {
			t.Fatalf("cls[%d] = %v, want h[0][%d] = %v", k, v[0][k], k, h[k])
		}
		m := h[k]
		for r := 1; r < len(e.IDs); r++ {
			m = max(m, h[r*32+k])
		}
		if v[0][32+k] != m {
			t.Fatalf("max[%d] = %v, want %v", k, v[0][32+k], m)
		}
	}
}

func TestBERTCancelled(t *testing.T) {
	enc, err := Open(tinyBERT(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := enc.Encode(ctx, []string{"a", "b"}); err != context.Canceled {
		t.Errorf("cancelled Encode returned %v", err)
	}
}
