package pipeline

import (
	"os"
	"testing"

	"github.com/jeirt/jeirt/model"
)

func FuzzParseConfig(f *testing.F) {
	for _, p := range []string{"../../configs/quickstart.yaml", "../../configs/swebench.yaml", "../../configs/rewardbench.yaml"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("data: {responses: r.csv}\noutput: o\ntrain: {lr: .inf, weight_decay: .nan}\n"))
	f.Add([]byte("data: {responses: r.csv}\noutput: o\nmodel: {dim: 1e9, dropout: .nan}\nsplit: {val: .nan}\n"))
	f.Add([]byte("a: &a [*a, *a]\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := ParseConfig(raw, "config.yaml")
		if err == nil {
			err = c.Validate()
		}
		if err != nil {
			if len(err.Error()) > 4096 {
				t.Errorf("error of %d bytes", len(err.Error()))
			}
			return
		}
		if !model.Finite(c.Train.LR) || !model.Finite(c.Model.Dropout) || !model.Finite(c.Split.Val) || !model.Finite(c.Train.WeightDecay) {
			t.Fatalf("non-finite setting accepted: %+v", c)
		}
	})
}
