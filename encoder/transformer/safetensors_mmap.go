//go:build linux || darwin

package transformer

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"
	"syscall"
	"unsafe"

	"github.com/jeirt/jeirt/model"
)

// mapSafetensors maps a safetensors file whose tensors are all F32 into
// memory (private, copy-on-write) and returns tensors that alias the mapping
// instead of copies, so a model's weights are resident once, not twice as
// when the file is read and then decoded. It reports ok false, with no
// error, when the file has another dtype or the machine is big-endian; the
// caller then reads it with ReadSafetensors, which converts F16, BF16 and F64
// to float32. The mapping lives as long as the program: an encoder's weights
// are never freed.
func mapSafetensors(path string) (st *model.Safetensors, ok bool, err error) {
	if one := uint16(1); *(*byte)(unsafe.Pointer(&one)) != 1 {
		return nil, false, nil
	}
	in, err := model.OpenInput(path)
	if err != nil {
		return nil, false, err
	}
	defer in.Close()
	if !in.Regular {
		return nil, false, nil // a pipe is read, not mapped
	}
	f, size := in.File, in.Size
	if size < 8 || size != int64(int(size)) {
		return nil, false, nil
	}
	var head [8]byte
	if _, err := f.ReadAt(head[:], 0); err != nil {
		return nil, false, fmt.Errorf("%s: %w", path, err)
	}
	n := binary.LittleEndian.Uint64(head[:])
	if n > 100<<20 || 8+int64(n) > size {
		return nil, false, nil // let model.ReadSafetensors report it
	}
	hdr := make([]byte, n)
	if _, err := f.ReadAt(hdr, 8); err != nil {
		return nil, false, fmt.Errorf("%s: %w", path, err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(hdr, &raw); err != nil {
		return nil, false, nil
	}
	type entry struct {
		Dtype   string   `json:"dtype"`
		Shape   []int    `json:"shape"`
		Offsets [2]int64 `json:"data_offsets"`
	}
	start := 8 + int64(n)
	entries := map[string]entry{}
	var meta map[string]string
	for name, msg := range raw {
		if name == "__metadata__" {
			if json.Unmarshal(msg, &meta) != nil {
				return nil, false, nil
			}
			continue
		}
		var e entry
		if json.Unmarshal(msg, &e) != nil || e.Dtype != "F32" || (start+e.Offsets[0])%4 != 0 {
			return nil, false, nil
		}
		entries[name] = e
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE)
	if err != nil {
		return nil, false, nil
	}
	body := data[start:]
	st = &model.Safetensors{Tensors: make(map[string]model.Tensor, len(entries)), Metadata: meta}
	type span struct {
		name   string
		lo, hi int64
	}
	var spans []span
	for name, e := range entries {
		count := int64(1)
		for _, d := range e.Shape {
			if d < 0 {
				syscall.Munmap(data)
				return nil, false, fmt.Errorf("%s: tensor %q: negative dimension in shape %v", path, model.Clip(name), model.Clip(fmt.Sprint(e.Shape)))
			}
			if d != 0 && count > int64(len(body))/4/int64(d) {
				syscall.Munmap(data)
				return nil, false, fmt.Errorf("%s: tensor %q: F32 shape %v needs more than the %d data bytes", path, model.Clip(name), model.Clip(fmt.Sprint(e.Shape)), len(body))
			}
			count *= int64(d)
		}
		lo, hi := e.Offsets[0], e.Offsets[1]
		if lo < 0 || hi < lo || hi > int64(len(body)) || hi-lo != 4*count {
			syscall.Munmap(data)
			return nil, false, fmt.Errorf("%s: tensor %q: data_offsets [%d,%d] do not hold F32 shape %v in %d data bytes", path, name, lo, hi, e.Shape, len(body))
		}
		spans = append(spans, span{name, lo, hi})
		var floats []float32
		if count > 0 {
			floats = unsafe.Slice((*float32)(unsafe.Pointer(&body[lo])), count)
		}
		st.Tensors[name] = model.Tensor{Shape: e.Shape, Data: floats}
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].lo < spans[j].lo })
	var at int64
	for _, s := range spans {
		if s.lo != at {
			syscall.Munmap(data)
			return nil, false, fmt.Errorf("%s: tensor %q starts at data byte %d, want %d (tensors must tile the data)", path, s.name, s.lo, at)
		}
		at = s.hi
	}
	if at != int64(len(body)) {
		syscall.Munmap(data)
		return nil, false, fmt.Errorf("%s: %d trailing data bytes after the last tensor", path, int64(len(body))-at)
	}
	return st, true, nil
}
