package tensorfile

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

func safetensorsBytes(header string, data int) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, uint64(len(header)))
	b.WriteString(header)
	b.Write(make([]byte, data))
	return b.Bytes()
}

// A shape of 2^62 with empty offsets made count*size wrap to 0.
func TestSafetensorsShapeOverflow(t *testing.T) {
	for _, h := range []string{
		`{"a":{"dtype":"F32","shape":[4611686018427387904],"data_offsets":[0,0]}}`,
		`{"a":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,0]}}`,
		`{"a":{"dtype":"F64","shape":[2305843009213693952],"data_offsets":[0,0]}}`,
		`{"a":{"dtype":"F32","shape":[65536,65536,65536,65536],"data_offsets":[0,0]}}`,
	} {
		if _, err := ParseSafetensors("f", safetensorsBytes(h, 0)); err == nil {
			t.Errorf("%s: accepted", h)
		}
	}
	// A zero dimension next to a huge one is an empty tensor, not an error.
	st, err := ParseSafetensors("f", safetensorsBytes(`{"a":{"dtype":"F32","shape":[0,4611686018427387904],"data_offsets":[0,0]}}`, 0))
	if err != nil || len(st.Tensors["a"].Data) != 0 {
		t.Errorf("empty tensor: %v", err)
	}
}

func npyBytes(shape string, data int) []byte {
	hdr := "{'descr': '<f4', 'fortran_order': False, 'shape': (" + shape + "), }\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&b, binary.LittleEndian, uint16(len(hdr)))
	b.WriteString(hdr)
	b.Write(make([]byte, data))
	return b.Bytes()
}

func TestNPYBadDims(t *testing.T) {
	for _, shape := range []string{"-1, -4", "-2, 2", "4611686018427387904, 4", "2, 4611686018427387904", "4611686018427387904, 0", "99999999999999999999, 1"} {
		if _, err := ReadNPY(writeTemp(t, "a.npy", npyBytes(shape, 16))); err == nil {
			t.Errorf("shape (%s) accepted", shape)
		}
	}
	rows, err := ReadNPY(writeTemp(t, "a.npy", npyBytes("2, 2", 16)))
	if err != nil || len(rows) != 2 || len(rows[1]) != 2 {
		t.Errorf("(2, 2): %v", err)
	}
}

func writeTemp(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
