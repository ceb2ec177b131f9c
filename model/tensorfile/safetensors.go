package tensorfile

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/limits"
)

// Tensor is one named float32 array of a safetensors file, row-major.
type Tensor struct {
	Shape []int
	Data  []float32
}

// safetensorsEntry is one tensor's entry in the header of the safetensors
// layout (https://github.com/huggingface/safetensors): an 8-byte
// little-endian header length n, n bytes of JSON
// {"__metadata__": {string: string}, "NAME": {"dtype": "F32", "shape": [...],
// "data_offsets": [begin, end]}, ...}, then the raw little-endian data; offsets
// are relative to the end of the header.
type safetensorsEntry struct {
	Dtype   string   `json:"dtype"`
	Shape   []int    `json:"shape"`
	Offsets [2]int64 `json:"data_offsets"`
}

// maxSafetensorsHeader bounds the JSON header, as the reference reader does
// (100 MB), so a corrupt length cannot make us allocate the machine away.
const maxSafetensorsHeader = 100 << 20

var safetensorsDtypeSize = map[string]int64{"F32": 4, "F16": 2, "BF16": 2, "F64": 8}

// WriteSafetensors writes float32 tensors, sorted by name and stored back to
// back, with optional string metadata first and the header padded with spaces
// to a multiple of 8, as Hugging Face's writer does. Python reads the result
// with safetensors.numpy.load_file.
func WriteSafetensors(w io.Writer, tensors map[string]Tensor, metadata map[string]string) error {
	names := make([]string, 0, len(tensors))
	for name, t := range tensors {
		if n := numel(t.Shape); n != len(t.Data) {
			return fmt.Errorf("safetensors: tensor %q has %d values for shape %v", name, len(t.Data), t.Shape)
		}
		names = append(names, name)
	}
	sort.Strings(names)
	var hdr strings.Builder
	hdr.WriteByte('{')
	if len(metadata) > 0 {
		m, err := json.Marshal(metadata)
		if err != nil {
			return err
		}
		hdr.WriteString(`"__metadata__":`)
		hdr.Write(m)
	}
	var at int64
	for i, name := range names {
		t := tensors[name]
		if i > 0 || len(metadata) > 0 {
			hdr.WriteByte(',')
		}
		shape := t.Shape
		if shape == nil {
			shape = []int{}
		}
		e, err := json.Marshal(safetensorsEntry{Dtype: "F32", Shape: shape, Offsets: [2]int64{at, at + 4*int64(len(t.Data))}})
		if err != nil {
			return err
		}
		k, _ := json.Marshal(name)
		hdr.Write(k)
		hdr.WriteByte(':')
		hdr.Write(e)
		at += 4 * int64(len(t.Data))
	}
	hdr.WriteByte('}')
	for hdr.Len()%8 != 0 {
		hdr.WriteByte(' ')
	}
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(hdr.Len()))
	if _, err := w.Write(n[:]); err != nil {
		return err
	}
	if _, err := io.WriteString(w, hdr.String()); err != nil {
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
	_, err := w.Write(buf)
	return err
}

// Safetensors is the content of a .safetensors file: its tensors by name and
// its string metadata.
type Safetensors struct {
	Tensors  map[string]Tensor
	Metadata map[string]string
}

// ReadSafetensors reads every tensor of a safetensors file (F32, F16, BF16 and
// F64, converted to float32) and its metadata.
func ReadSafetensors(path string) (*Safetensors, error) {
	b, err := fileio.ReadInputFile(path, 0, "a safetensors file")
	if err != nil {
		return nil, err
	}
	return ParseSafetensors(path, b)
}

// ParseSafetensors decodes the bytes of a safetensors file; name is used in
// errors. Every offset range is checked against its dtype and shape, and the
// ranges must tile the data exactly.
func ParseSafetensors(name string, b []byte) (*Safetensors, error) {
	t, m, err := parseSafetensors(name, b)
	if err != nil {
		return nil, err
	}
	return &Safetensors{Tensors: t, Metadata: m}, nil
}

// WriteSafetensorsFile writes F32 tensors and string metadata to path
// atomically, in WriteSafetensors's layout.
func WriteSafetensorsFile(path string, tensors map[string]Tensor, metadata map[string]string) error {
	return fileio.WriteFileAtomic(path, func(w io.Writer) error { return WriteSafetensors(w, tensors, metadata) })
}

func parseSafetensors(name string, b []byte) (map[string]Tensor, map[string]string, error) {
	if len(b) < 8 {
		return nil, nil, fmt.Errorf("%s: not a safetensors file (%d bytes)", name, len(b))
	}
	n := binary.LittleEndian.Uint64(b[:8])
	if n > maxSafetensorsHeader || 8+n > uint64(len(b)) {
		return nil, nil, fmt.Errorf("%s: safetensors header length %d does not fit in %d bytes", name, n, len(b))
	}
	data := b[8+n:]
	entries, meta, err := parseHeader(name, b[8:8+n], int64(len(data)))
	if err != nil {
		return nil, nil, err
	}
	tensors := make(map[string]Tensor, len(entries))
	for _, e := range entries {
		tensors[e.name] = Tensor{Shape: e.Shape, Data: decodeFloats(e.Dtype, data[e.lo:e.hi], int(e.count))}
	}
	return tensors, meta, nil
}

// headerEntry is one tensor of a checked header: where its bytes are in the
// data section and how many values they hold.
type headerEntry struct {
	safetensorsEntry
	name   string
	lo, hi int64
	count  int64
}

// parseHeader decodes the JSON header of a safetensors file whose data
// section has dataLen bytes and checks it, for the reader and the mapper
// alike: every dtype is one we convert, every shape fits in the data before
// its product can wrap, every offset range holds its dtype and shape, and
// the ranges tile the data exactly. The entries come back in data order.
func parseHeader(name string, hdr []byte, dataLen int64) ([]headerEntry, map[string]string, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(hdr, &raw); err != nil {
		return nil, nil, fmt.Errorf("%s: safetensors header: %w", name, err)
	}
	var meta map[string]string
	entries := make([]headerEntry, 0, len(raw))
	for tname, msg := range raw {
		if tname == "__metadata__" {
			if err := json.Unmarshal(msg, &meta); err != nil {
				return nil, nil, fmt.Errorf("%s: __metadata__ must map strings to strings: %w", name, err)
			}
			continue
		}
		var e safetensorsEntry
		if err := json.Unmarshal(msg, &e); err != nil {
			return nil, nil, fmt.Errorf("%s: tensor %q: %w", name, limits.Clip(tname), err)
		}
		size, ok := safetensorsDtypeSize[e.Dtype]
		if !ok {
			return nil, nil, fmt.Errorf("%s: tensor %q: dtype %q is not supported (want F32, F16, BF16 or F64)", name, limits.Clip(tname), limits.Clip(e.Dtype))
		}
		count := int64(1)
		for _, d := range e.Shape {
			if d < 0 {
				return nil, nil, fmt.Errorf("%s: tensor %q: negative dimension in shape %v", name, limits.Clip(tname), limits.Clip(fmt.Sprint(e.Shape)))
			}
			// Every tensor must fit in the file, so a shape whose element
			// count or byte size exceeds the data is refused before the
			// product can wrap.
			if d != 0 && count > dataLen/int64(d) {
				return nil, nil, fmt.Errorf("%s: tensor %q: shape %v needs more than the %d data bytes", name, limits.Clip(tname), limits.Clip(fmt.Sprint(e.Shape)), dataLen)
			}
			count *= int64(d)
		}
		lo, hi := e.Offsets[0], e.Offsets[1]
		if lo < 0 || hi < lo || hi > dataLen {
			return nil, nil, fmt.Errorf("%s: tensor %q: data_offsets [%d,%d] outside the %d data bytes", name, limits.Clip(tname), lo, hi, dataLen)
		}
		if hi-lo != count*size {
			return nil, nil, fmt.Errorf("%s: tensor %q: %d bytes for %s shape %v, want %d", name, limits.Clip(tname), hi-lo, limits.Clip(e.Dtype), limits.Clip(fmt.Sprint(e.Shape)), count*size)
		}
		entries = append(entries, headerEntry{safetensorsEntry: e, name: tname, lo: lo, hi: hi, count: count})
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].lo < entries[j].lo })
	var at int64
	for _, s := range entries {
		if s.lo != at {
			return nil, nil, fmt.Errorf("%s: tensor %q starts at data byte %d, want %d (tensors must tile the data)", name, s.name, s.lo, at)
		}
		at = s.hi
	}
	if at != dataLen {
		return nil, nil, fmt.Errorf("%s: %d trailing data bytes after the last tensor", name, dataLen-at)
	}
	return entries, meta, nil
}

func numel(shape []int) int {
	n := 1
	for _, s := range shape {
		n *= s
	}
	return n
}

func decodeFloats(dtype string, b []byte, n int) []float32 {
	out := make([]float32, n)
	switch dtype {
	case "F32":
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
	case "F64":
		for i := range out {
			out[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:])))
		}
	case "BF16":
		for i := range out {
			out[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(b[2*i:])) << 16)
		}
	case "F16":
		for i := range out {
			out[i] = halfToFloat32(binary.LittleEndian.Uint16(b[2*i:]))
		}
	}
	return out
}

// halfToFloat32 converts an IEEE 754 binary16 value exactly.
func halfToFloat32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // inf or NaN
		return math.Float32frombits(sign | 0x7f800000 | frac<<13)
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: frac · 2^-24
		v := float32(frac) / (1 << 24)
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp+112)<<23 | frac<<13)
}
