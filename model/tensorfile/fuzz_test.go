package tensorfile

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func FuzzParseSafetensors(f *testing.F) {
	var b bytes.Buffer
	WriteSafetensors(&b, map[string]Tensor{"a": {Shape: []int{2, 2}, Data: []float32{1, 2, 3, 4}}, "c": {Shape: []int{}, Data: []float32{5}}}, map[string]string{"k": "v"})
	f.Add(b.Bytes())
	f.Add(safetensorsBytes(`{"a":{"dtype":"F32","shape":[4611686018427387904],"data_offsets":[0,0]}}`, 0))
	f.Add(safetensorsBytes(`{"a":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]},"__metadata__":{"x":"y"}}`, 4))
	f.Add(safetensorsBytes(`{"a":{"dtype":"F64","shape":[1,1],"data_offsets":[0,8]}}`, 8))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := ParseSafetensors("f", data)
		if err != nil {
			return
		}
		for name, tt := range st.Tensors {
			n := 1
			for _, d := range tt.Shape {
				n *= d
			}
			if n != len(tt.Data) || len(tt.Data)*2 > len(data) {
				t.Fatalf("tensor %s: shape %v, %d values from %d bytes", name, tt.Shape, len(tt.Data), len(data))
			}
		}
	})
}

func FuzzReadNPY(f *testing.F) {
	f.Add(npyBytes("2, 2", 16))
	f.Add(npyBytes("-1, -4", 16))
	f.Add(npyBytes("4611686018427387904, 4", 0))
	f.Add(npyBytes("0, 3", 0))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "a.npy")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		rows, err := ReadNPY(p)
		if err != nil {
			return
		}
		total := 0
		for _, r := range rows {
			total += len(r)
		}
		if total*4 > len(data) {
			t.Fatalf("%d values from %d bytes", total, len(data))
		}
	})
}
