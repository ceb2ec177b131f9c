package model

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
)

// Tensor is one named float32 array of a safetensors file, row-major.
type Tensor struct {
	Shape []int
	Data  []float32
}

// safetensors layout (https://github.com/huggingface/safetensors): an 8-byte
// little-endian header length n, n bytes of JSON
// {"NAME": {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}, ...,
// "__metadata__": {string: string}}, then the raw little-endian data; offsets
// are relative to the end of the header.

type safetensorsEntry struct {
	DType   string   `json:"dtype"`
	Shape   []int    `json:"shape"`
	Offsets [2]int64 `json:"data_offsets"`
}

// WriteSafetensors writes float32 tensors, in name order, with optional string
// metadata. Python reads the result with safetensors.numpy.load_file.
func WriteSafetensors(w io.Writer, tensors map[string]Tensor, metadata map[string]string) error {
	names := make([]string, 0, len(tensors))
	for name := range tensors {
		names = append(names, name)
	}
	sort.Strings(names)
	header := map[string]any{}
	if len(metadata) > 0 {
		header["__metadata__"] = metadata
	}
	var off int64
	for _, name := range names {
		t := tensors[name]
		if n := numel(t.Shape); n != len(t.Data) {
			return fmt.Errorf("safetensors: tensor %s has shape %v (%d values) but %d values", name, t.Shape, n, len(t.Data))
		}
		shape := t.Shape
		if shape == nil {
			shape = []int{}
		}
		header[name] = safetensorsEntry{DType: "F32", Shape: shape, Offsets: [2]int64{off, off + 4*int64(len(t.Data))}}
		off += 4 * int64(len(t.Data))
	}
	js, err := json.Marshal(header)
	if err != nil {
		return err
	}
	for len(js)%8 != 0 { // the reference writer pads the header with spaces to 8 bytes
		js = append(js, ' ')
	}
	var lenBuf [8]byte
	binary.LittleEndian.PutUint64(lenBuf[:], uint64(len(js)))
	if _, err := w.Write(lenBuf[:]); err != nil {
		return err
	}
	if _, err := w.Write(js); err != nil {
		return err
	}
	buf := make([]byte, 0, 1<<16)
	for _, name := range names {
		for _, v := range tensors[name].Data {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
			if len(buf) == cap(buf) {
				if _, err := w.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
		}
	}
	_, err = w.Write(buf)
	return err
}

// ReadSafetensors reads every tensor of a safetensors file (F32, F16 or BF16,
// F64 converted to float32) and its metadata.
func ReadSafetensors(path string) (map[string]Tensor, map[string]string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: not a safetensors file: %s", path, fmt.Sprintf(format, args...))
	}
	if len(raw) < 8 {
		return nil, nil, bad("%d bytes", len(raw))
	}
	n := binary.LittleEndian.Uint64(raw[:8])
	if n > uint64(len(raw)-8) {
		return nil, nil, bad("header length %d exceeds the file", n)
	}
	var header map[string]json.RawMessage
	if err := json.Unmarshal(raw[8:8+n], &header); err != nil {
		return nil, nil, bad("header: %v", err)
	}
	data := raw[8+n:]
	var meta map[string]string
	tensors := map[string]Tensor{}
	for name, msg := range header {
		if name == "__metadata__" {
			if err := json.Unmarshal(msg, &meta); err != nil {
				return nil, nil, bad("__metadata__: %v", err)
			}
			continue
		}
		var e safetensorsEntry
		if err := json.Unmarshal(msg, &e); err != nil {
			return nil, nil, bad("tensor %s: %v", name, err)
		}
		size := map[string]int64{"F32": 4, "F16": 2, "BF16": 2, "F64": 8}[e.DType]
		if size == 0 {
			return nil, nil, fmt.Errorf("%s: tensor %s: dtype %s is not supported (F32, F16, BF16, F64)", path, name, e.DType)
		}
		cnt := numel(e.Shape)
		b, end := e.Offsets[0], e.Offsets[1]
		if b < 0 || end > int64(len(data)) || end-b != int64(cnt)*size {
			return nil, nil, bad("tensor %s: offsets %v do not match shape %v and %d data bytes", name, e.Offsets, e.Shape, len(data))
		}
		vals := make([]float32, cnt)
		src := data[b:end]
		for i := range vals {
			switch e.DType {
			case "F32":
				vals[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
			case "F64":
				vals[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(src[8*i:])))
			case "BF16":
				vals[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(src[2*i:])) << 16)
			case "F16":
				vals[i] = half(binary.LittleEndian.Uint16(src[2*i:]))
			}
		}
		tensors[name] = Tensor{Shape: e.Shape, Data: vals}
	}
	return tensors, meta, nil
}

func numel(shape []int) int {
	n := 1
	for _, s := range shape {
		n *= s
	}
	return n
}

// half converts IEEE 754 binary16 to float32.
func half(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := int32(h>>10) & 0x1f
	frac := uint32(h & 0x3ff)
	switch {
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal
		return float32(math.Copysign(float64(frac)*math.Pow(2, -24), float64(int32(sign>>31)*-2+1)))
	case exp == 31:
		return math.Float32frombits(sign | 0x7f800000 | frac<<13)
	}
	return math.Float32frombits(sign | uint32(exp-15+127)<<23 | frac<<13)
}
