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

type familySentence struct {
	Text             string      `json:"text"`
	IDs              []int32     `json:"ids"`
	PositionIDs      []int       `json:"position_ids"`
	PooledNormalized []float64   `json:"pooled_normalized"`
	MeanNormalized   []float64   `json:"mean_normalized"`
	LastHidden       [][]float64 `json:"last_hidden_state"`
}

type familyExpected struct {
	Sentences   []familySentence `json:"sentences"`
	PaddedBatch struct {
		SentenceIndices  []int       `json:"sentence_indices"`
		PooledNormalized [][]float64 `json:"pooled_normalized"`
	} `json:"padded_batch"`
	RelativePositionBucket struct {
		Range   [2]int `json:"relative_positions"`
		Buckets []int  `json:"buckets"`
	} `json:"relative_position_bucket"`
	Rope struct {
		Full    []float64 `json:"inv_freq_full_attention_f32"`
		Sliding []float64 `json:"inv_freq_sliding_attention_f32"`
	} `json:"rope"`
}

func loadFamilyExpected(t *testing.T, dir string) *familyExpected {
	b, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var e familyExpected
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	if len(e.Sentences) != 33 {
		t.Fatalf("expected.json has %d sentences, want 33", len(e.Sentences))
	}
	return &e
}

// forwarder is what the fixture check needs of an encoder folder.
type forwarder interface {
	Model
	Forward([]tokenizer.Encoding) ([]float32, int, error)
}

// checkFixture compares enc with a fixture's float64 reference: the declared
// pipeline's vectors within 2e-6, each sentence alone, all 33 in one batch and
// the fixture's padded batch of 5; last_hidden_state within 1e-5.
func checkFixture(t *testing.T, enc forwarder, tok *tokenizer.Tokenizer, exp *familyExpected, d int) {
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
	hidden := 0
	for i, s := range exp.Sentences {
		alone, err := enc.Encode(ctx, texts[i:i+1])
		if err != nil {
			t.Fatal(err)
		}
		worstAlone = math.Max(worstAlone, maxAbsDiff(alone[0], s.PooledNormalized))
		worstBatch = math.Max(worstBatch, maxAbsDiff(all[i], s.PooledNormalized))
		if s.LastHidden != nil {
			hidden++
			e, _ := tok.Encode(s.Text)
			h, l, err := enc.Forward([]tokenizer.Encoding{e})
			if err != nil {
				t.Fatal(err)
			}
			if len(s.LastHidden) != len(e.IDs) || l < len(e.IDs) {
				t.Fatalf("sentence %d: %d reference rows, %d tokens, L=%d", i, len(s.LastHidden), len(e.IDs), l)
			}
			for r, row := range s.LastHidden {
				worstHidden = math.Max(worstHidden, maxAbsDiff(h[r*d:(r+1)*d], row))
			}
		}
	}
	t.Logf("max |diff| pooled_normalized: alone %.2g, batch of 33 %.2g; last_hidden_state (%d sentences) %.2g", worstAlone, worstBatch, hidden, worstHidden)
	if worstAlone > 2e-6 || worstBatch > 2e-6 {
		t.Errorf("pooled_normalized off by %.3g alone, %.3g in a batch (want <= 2e-6)", worstAlone, worstBatch)
	}
	if hidden == 0 || worstHidden > 1e-5 {
		t.Errorf("last_hidden_state off by %.3g over %d sentences (want <= 1e-5)", worstHidden, hidden)
	}
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
	}
}

// TestMPNetMatchesFixture opens tiny-mpnet as `jeirt encode --encoder DIR`
// does and checks position ids (including a literal <pad> inside a text),
// the relative position buckets and the outputs.
func TestMPNetMatchesFixture(t *testing.T) {
	dir := fixture(t, "tiny-mpnet")
	exp := loadFamilyExpected(t, dir)
	enc, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, ok := enc.(*MPNet)
	if !ok {
		t.Fatalf("Open gave %T, want *MPNet", enc)
	}
	if enc.Dim() != 32 || !m.Normalize || len(m.Pooling) != 1 || m.Pooling[0] != PoolMean || m.MaxSeqLen != 128 {
		t.Fatalf("folder read as dim %d normalize %v pooling %v max_seq_len %d", enc.Dim(), m.Normalize, m.Pooling, m.MaxSeqLen)
	}
	rb := exp.RelativePositionBucket
	for k, want := range rb.Buckets {
		if got := mpnetBucket(rb.Range[0]+k, 32, 128); got != want {
			t.Fatalf("bucket(%d) = %d, want %d", rb.Range[0]+k, got, want)
		}
	}
	for i, s := range exp.Sentences {
		ids := make([]int, len(s.IDs))
		for k, id := range s.IDs {
			ids[k] = int(id)
		}
		pos := make([]int, len(ids))
		mpnetPositionIDs(pos, ids, len(ids), 1)
		for k := range pos {
			if pos[k] != s.PositionIDs[k] {
				t.Fatalf("sentence %d: position ids %v, want %v", i, pos, s.PositionIDs)
			}
		}
	}
	checkFixture(t, m, m.Tokenizer, exp, 32)
}

// TestModernBERTMatchesFixture opens tiny-modernbert through Open and checks
// the float32 RoPE frequencies, the declared CLS pipeline and mean pooling.
func TestModernBERTMatchesFixture(t *testing.T) {
	dir := fixture(t, "tiny-modernbert")
	exp := loadFamilyExpected(t, dir)
	enc, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, ok := enc.(*ModernBERT)
	if !ok {
		t.Fatalf("Open gave %T, want *ModernBERT", enc)
	}
	if enc.Dim() != 64 || !m.Normalize || len(m.Pooling) != 1 || m.Pooling[0] != PoolCLS || m.MaxSeqLen != 128 {
		t.Fatalf("folder read as dim %d normalize %v pooling %v max_seq_len %d", enc.Dim(), m.Normalize, m.Pooling, m.MaxSeqLen)
	}
	for _, c := range []struct {
		theta float64
		want  []float64
	}{{160000, exp.Rope.Full}, {10000, exp.Rope.Sliding}} {
		r := newRopeTable(c.theta, 16)
		for i, f := range r.invFreq {
			if float64(f) != c.want[i] {
				t.Errorf("theta %g: inv_freq[%d] = %.9g, want %.9g (float32 as torch)", c.theta, i, f, c.want[i])
			}
		}
	}
	checkFixture(t, m, m.Tokenizer, exp, 64)

	// Mean pooling, as modernbert-embed pools.
	m.Pooling = []string{PoolMean}
	var worst float64
	for _, s := range exp.Sentences {
		v, err := m.Encode(context.Background(), []string{s.Text})
		if err != nil {
			t.Fatal(err)
		}
		worst = math.Max(worst, maxAbsDiff(v[0], s.MeanNormalized))
	}
	t.Logf("max |diff| mean_normalized %.2g", worst)
	if worst > 2e-6 {
		t.Errorf("mean_normalized off by %.3g (want <= 2e-6)", worst)
	}
}

// copyFolder copies a fixture folder to a temporary one that a test may break.
func copyFolder(t *testing.T, src string) string {
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

func TestFamilyFolderErrors(t *testing.T) {
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
		fixture, name string
		breakIt       func(dir string)
		want          string // after the folder name
	}{
		{"tiny-mpnet", "modules path outside", func(dir string) {
			os.WriteFile(filepath.Join(dir, "modules.json"), []byte(`[{"idx":0,"name":"0","path":"","type":"sentence_transformers.models.Transformer"},`+
				`{"idx":1,"name":"1","path":"../../etc","type":"sentence_transformers.models.Pooling"}]`), 0o644)
		}, `DIR/modules.json: module 1's path "../../etc" leaves the model folder`},
		{"tiny-modernbert", "tanh GELU", func(dir string) {
			editJSON(filepath.Join(dir, "config.json"), func(m map[string]any) { m["hidden_activation"] = "gelu_pytorch_tanh" })
		}, `DIR/config.json: hidden_activation "gelu_pytorch_tanh" is not supported (want "gelu", exact erf GELU)`},
		{"tiny-modernbert", "layer 0 attn_norm", func(dir string) {
			editWeights(filepath.Join(dir, "model.safetensors"), func(st *tensorfile.Safetensors) {
				st.Tensors["layers.0.attn_norm.weight"] = st.Tensors["layers.1.attn_norm.weight"]
			})
		}, "DIR/model.safetensors: layer 0 has an attn_norm, which ModernBertModel does not have (nn.Identity)"},
		{"tiny-modernbert", "Wi shape", func(dir string) {
			editJSON(filepath.Join(dir, "config.json"), func(m map[string]any) { m["intermediate_size"] = 48 })
		}, `DIR/model.safetensors: tensor "layers.0.mlp.Wi.weight" has shape [192 64], config.json implies [96 64]`},
		{"tiny-modernbert", "biases declared", func(dir string) {
			editJSON(filepath.Join(dir, "config.json"), func(m map[string]any) { m["mlp_bias"] = true })
		}, `DIR/model.safetensors: tensor "layers.0.mlp.Wi.bias" is missing`},
		{"tiny-mpnet", "missing bias table", func(dir string) {
			editWeights(filepath.Join(dir, "model.safetensors"), func(st *tensorfile.Safetensors) {
				delete(st.Tensors, "encoder.relative_attention_bias.weight")
			})
		}, `DIR/model.safetensors: tensor "encoder.relative_attention_bias.weight" is missing`},
		{"tiny-mpnet", "buckets", func(dir string) {
			editJSON(filepath.Join(dir, "config.json"), func(m map[string]any) { m["relative_attention_num_buckets"] = 64 })
		}, `DIR/model.safetensors: tensor "encoder.relative_attention_bias.weight" has shape [32 4], config.json implies [64 4]`},
	} {
		t.Run(tc.fixture+"/"+tc.name, func(t *testing.T) {
			dir := copyFolder(t, fixture(t, tc.fixture))
			tc.breakIt(dir)
			_, err := Open(dir)
			want := strings.ReplaceAll(tc.want, "DIR", dir)
			if err == nil || err.Error() != want {
				t.Errorf("error\n %v\nwant\n %s", err, want)
			}
		})
	}
}
