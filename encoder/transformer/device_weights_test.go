package transformer

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/jeirt/jeirt/model/tensorfile"
)

// TestBERTWeightsRoundTrip checks that BERT.Weights, which the GPU forward
// reads, gives back every Linear layer exactly as model.safetensors holds it
// (torch's layout), whatever the CPU forward keeps (packed panels, the
// query, key and value projections fused).
func TestBERTWeightsRoundTrip(t *testing.T) {
	dir := tinyBERT(t)
	b, err := OpenBERT(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := tensorfile.ReadSafetensors(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	prefix := ""
	if _, ok := st.Tensors["embeddings.word_embeddings.weight"]; !ok {
		prefix = "bert."
	}
	w := b.Weights()
	if len(w.Layers) != b.Config.NumHiddenLayers {
		t.Fatalf("%d layers, want %d", len(w.Layers), b.Config.NumHiddenLayers)
	}
	for i, l := range w.Layers {
		for _, c := range []struct {
			got  Linear
			name string
		}{
			{l.Q, "attention.self.query"}, {l.K, "attention.self.key"}, {l.V, "attention.self.value"},
			{l.O, "attention.output.dense"}, {l.In, "intermediate.dense"}, {l.Out, "output.dense"},
		} {
			name := fmt.Sprintf("%sencoder.layer.%d.%s", prefix, i, c.name)
			want, wantB := st.Tensors[name+".weight"], st.Tensors[name+".bias"]
			if fmt.Sprint(want.Shape) != fmt.Sprint([]int{c.got.Out, c.got.In}) || len(c.got.W) != len(want.Data) || len(c.got.B) != len(wantB.Data) {
				t.Fatalf("%s: %d×%d (%d weights, %d biases), file %v", name, c.got.Out, c.got.In, len(c.got.W), len(c.got.B), want.Shape)
			}
			for k := range want.Data {
				if c.got.W[k] != want.Data[k] {
					t.Fatalf("%s.weight[%d] = %g, file %g", name, k, c.got.W[k], want.Data[k])
				}
			}
			for k := range wantB.Data {
				if c.got.B[k] != wantB.Data[k] {
					t.Fatalf("%s.bias[%d] = %g, file %g", name, k, c.got.B[k], wantB.Data[k])
				}
			}
		}
	}
}
