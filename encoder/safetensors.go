package encoder

import (
	"io"

	"github.com/jeirt/jeirt/model"
)

// Tensor is one named array from a safetensors file, converted to float32.
type Tensor = model.Tensor

// Safetensors is the content of a .safetensors file.
type Safetensors struct {
	Tensors  map[string]Tensor
	Metadata map[string]string
}

// ReadSafetensors reads a safetensors file (model.ReadSafetensors: F32, F16,
// BF16 and F64 tensors as float32, every offset range checked).
func ReadSafetensors(path string) (*Safetensors, error) {
	t, m, err := model.ReadSafetensors(path)
	if err != nil {
		return nil, err
	}
	return &Safetensors{Tensors: t, Metadata: m}, nil
}

func parseSafetensors(path string, b []byte) (*Safetensors, error) {
	t, m, err := model.ParseSafetensors(path, b)
	if err != nil {
		return nil, err
	}
	return &Safetensors{Tensors: t, Metadata: m}, nil
}

// WriteSafetensors writes F32 tensors and string metadata atomically
// (model.WriteSafetensors's layout: metadata first, tensors sorted by name).
func WriteSafetensors(path string, tensors map[string]Tensor, metadata map[string]string) error {
	return model.WriteFileAtomic(path, func(w io.Writer) error {
		return model.WriteSafetensors(w, tensors, metadata)
	})
}
