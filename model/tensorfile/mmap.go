//go:build linux || darwin

package tensorfile

import (
	"encoding/binary"
	"fmt"
	"syscall"
	"unsafe"

	"github.com/jeirt/jeirt/model/fileio"
)

// MapSafetensors maps a safetensors file whose tensors are all F32 into
// memory (private, copy-on-write) and returns tensors that alias the mapping
// instead of copies, so a model's weights are resident once, not twice as
// when the file is read and then decoded. It reports ok false, with no
// error, when the file has another dtype or the machine is big-endian; the
// caller then reads it with ReadSafetensors, which converts F16, BF16 and F64
// to float32. The mapping lives as long as the program: an encoder's weights
// are never freed.
func MapSafetensors(path string) (st *Safetensors, ok bool, err error) {
	if one := uint16(1); *(*byte)(unsafe.Pointer(&one)) != 1 {
		return nil, false, nil
	}
	in, err := fileio.OpenInput(path)
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
	if n > maxSafetensorsHeader || 8+int64(n) > size {
		return nil, false, nil // let ReadSafetensors report it
	}
	hdr := make([]byte, n)
	if _, err := f.ReadAt(hdr, 8); err != nil {
		return nil, false, fmt.Errorf("%s: %w", path, err)
	}
	entries, meta, err := parseHeader(path, hdr, size-8-int64(n))
	if err != nil {
		return nil, false, err
	}
	start := 8 + int64(n)
	for _, e := range entries {
		if e.Dtype != "F32" || (start+e.lo)%4 != 0 {
			return nil, false, nil // converted by ReadSafetensors, or misaligned for float32
		}
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE)
	if err != nil {
		return nil, false, nil
	}
	body := data[start:]
	st = &Safetensors{Tensors: make(map[string]Tensor, len(entries)), Metadata: meta}
	for _, e := range entries {
		var floats []float32
		if e.count > 0 {
			floats = unsafe.Slice((*float32)(unsafe.Pointer(&body[e.lo])), e.count)
		}
		st.Tensors[e.name] = Tensor{Shape: e.Shape, Data: floats}
	}
	return st, true, nil
}
