package tensorfile

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestSafetensorsRoundTrip(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "fixtures", "tiny-bert")
	if _, err := os.Stat(filepath.Join(dir, "model.safetensors")); err != nil {
		t.Skipf("tiny-bert fixture not found: %v", err)
	}
	src := filepath.Join(dir, "model.safetensors")
	st, err := ReadSafetensors(src)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Tensors) != 39 || st.Metadata["format"] != "pt" {
		t.Fatalf("%d tensors, metadata %v", len(st.Tensors), st.Metadata)
	}
	out := filepath.Join(t.TempDir(), "copy.safetensors")
	if err := WriteSafetensorsFile(out, st.Tensors, st.Metadata); err != nil {
		t.Fatal(err)
	}
	// Same layout as the fixture's writer: the files are byte-identical.
	a, _ := os.ReadFile(src)
	b, _ := os.ReadFile(out)
	if string(a) != string(b) {
		t.Errorf("rewritten file differs from the fixture (%d vs %d bytes)", len(b), len(a))
	}
}

func TestSafetensorsHalfPrecision(t *testing.T) {
	// F16 0x3c00 = 1, 0xc000 = -2, 0x0001 = 2^-24, 0x7bff = 65504; BF16 0x3f80 = 1, 0xc040 = -3.
	f16 := []uint16{0x3c00, 0xc000, 0x0001, 0x7bff}
	bf16 := []uint16{0x3f80, 0xc040}
	hdr := `{"a":{"dtype":"F16","shape":[4],"data_offsets":[0,8]},"b":{"dtype":"BF16","shape":[2],"data_offsets":[8,12]}}`
	buf := binary.LittleEndian.AppendUint64(nil, uint64(len(hdr)))
	buf = append(buf, hdr...)
	for _, v := range append(f16, bf16...) {
		buf = binary.LittleEndian.AppendUint16(buf, v)
	}
	st, err := ParseSafetensors("x", buf)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]float32{"a": {1, -2, float32(math.Ldexp(1, -24)), 65504}, "b": {1, -3}}
	for name, w := range want {
		for i := range w {
			if st.Tensors[name].Data[i] != w[i] {
				t.Errorf("%s[%d] = %v, want %v", name, i, st.Tensors[name].Data[i], w[i])
			}
		}
	}
}

func TestSafetensorsErrors(t *testing.T) {
	mk := func(hdr string, data int) []byte {
		b := binary.LittleEndian.AppendUint64(nil, uint64(len(hdr)))
		return append(append(b, hdr...), make([]byte, data)...)
	}
	for _, tc := range []struct {
		file []byte
		want string
	}{
		{[]byte{1, 2}, "f: not a safetensors file (2 bytes)"},
		{mk(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, 4), `f: tensor "a": data_offsets [0,8] outside the 4 data bytes`},
		{mk(`{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`, 8), `f: tensor "a": 8 bytes for F32 shape [3], want 12`},
		{mk(`{"a":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}}`, 8), `f: tensor "a": dtype "I64" is not supported (want F32, F16, BF16 or F64)`},
		{mk(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, 8), `f: tensor "a" starts at data byte 4, want 0 (tensors must tile the data)`},
		{mk(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, 8), `f: 4 trailing data bytes after the last tensor`},
	} {
		_, err := ParseSafetensors("f", tc.file)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
}

// The exact bytes the safetensors reference writer produces for one tensor.
func TestSafetensorsBytes(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSafetensors(&buf, map[string]Tensor{"a": {Shape: []int{2}, Data: []float32{1, -2}}}, nil); err != nil {
		t.Fatal(err)
	}
	header := `{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`
	for len(header)%8 != 0 {
		header += " "
	}
	want := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	want = append(want, header...)
	want = append(want, 0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0)
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("bytes\n got %q\nwant %q", buf.Bytes(), want)
	}
	p := filepath.Join(t.TempDir(), "t.safetensors")
	os.WriteFile(p, buf.Bytes(), 0o644)
	got, err := ReadSafetensors(p)
	if err != nil || !reflect.DeepEqual(got.Tensors["a"].Data, []float32{1, -2}) {
		t.Errorf("read back %v, %v", got, err)
	}
	if halfToFloat32(0x3c00) != 1 || halfToFloat32(0xc000) != -2 || halfToFloat32(0x0001) != float32(math.Pow(2, -24)) {
		t.Errorf("half: %v %v %v", halfToFloat32(0x3c00), halfToFloat32(0xc000), halfToFloat32(0x0001))
	}
}
