package tensorfile

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/limits"
)

// ReadNPY reads a 2-D little-endian float32 or float64 C-order array from a
// NumPy .npy file (format versions 1 to 3) as rows of float32.
func ReadNPY(path string) ([][]float32, error) {
	b, err := fileio.ReadInputFile(path, 0, "a .npy file")
	if err != nil {
		return nil, err
	}
	if len(b) < 10 || string(b[:6]) != "\x93NUMPY" {
		return nil, fmt.Errorf("%s: not a .npy file", path)
	}
	var hlen, start int
	switch b[6] {
	case 1:
		hlen, start = int(binary.LittleEndian.Uint16(b[8:10])), 10
	case 2, 3:
		if len(b) < 12 {
			return nil, fmt.Errorf("%s: truncated .npy header", path)
		}
		hlen, start = int(binary.LittleEndian.Uint32(b[8:12])), 12
	default:
		return nil, fmt.Errorf("%s: .npy format version %d is not supported", path, b[6])
	}
	if start+hlen > len(b) {
		return nil, fmt.Errorf("%s: truncated .npy header", path)
	}
	hdr := string(b[start : start+hlen])
	data := b[start+hlen:]
	descr := npyField.FindStringSubmatch(hdr)
	if descr == nil {
		return nil, fmt.Errorf("%s: .npy header has no descr: %s", path, limits.Clip(hdr))
	}
	if strings.Contains(hdr, "'fortran_order': True") {
		return nil, fmt.Errorf("%s: Fortran-order arrays are not supported (save with np.ascontiguousarray)", path)
	}
	shape := npyShape.FindStringSubmatch(hdr)
	if shape == nil {
		return nil, fmt.Errorf("%s: .npy header has no shape: %s", path, limits.Clip(hdr))
	}
	var dims []int
	for _, s := range strings.Split(shape[1], ",") {
		if s = strings.TrimSpace(s); s != "" {
			d, err := strconv.Atoi(s)
			if err != nil {
				return nil, fmt.Errorf("%s: bad shape %q", path, limits.Clip(shape[1]))
			}
			dims = append(dims, d)
		}
	}
	if len(dims) != 2 {
		return nil, fmt.Errorf("%s: shape (%s) is not 2-D (items × dimension)", path, limits.Clip(shape[1]))
	}
	var size int
	switch descr[1] {
	case "<f4":
		size = 4
	case "<f8":
		size = 8
	default:
		return nil, fmt.Errorf("%s: dtype %q is not supported (want <f4 or <f8)", path, limits.Clip(descr[1]))
	}
	n, d := dims[0], dims[1]
	if n < 0 || d < 0 {
		return nil, fmt.Errorf("%s: negative dimension in shape (%d, %d)", path, n, d)
	}
	if d == 0 && n > 0 {
		return nil, fmt.Errorf("%s: shape (%d, 0) has vectors of dimension 0", path, n)
	}
	if d != 0 && n > len(data)/size/d {
		return nil, fmt.Errorf("%s: shape (%d, %d) of %s needs more than the %d data bytes", path, n, d, descr[1], len(data))
	}
	if len(data) != n*d*size {
		return nil, fmt.Errorf("%s: %d data bytes for shape (%d, %d) of %s, want %d", path, len(data), n, d, descr[1], n*d*size)
	}
	rows := make([][]float32, n)
	for i := range rows {
		if size == 4 {
			rows[i] = leFloats(data[i*d*4:], 4, d)
		} else {
			rows[i] = leFloats(data[i*d*8:], 8, d)
		}
	}
	return rows, nil
}

var (
	npyField = regexp.MustCompile(`'descr':\s*'([^']*)'`)
	npyShape = regexp.MustCompile(`'shape':\s*\(([^)]*)\)`)
)

// WriteNPY writes rows (all of length dim) as a (len(rows), dim) little-endian
// float32 NumPy .npy file (format version 1.0), readable with numpy.load and
// ReadNPY. The file is written atomically.
func WriteNPY(path string, rows [][]float32, dim int) error {
	for i, r := range rows {
		if len(r) != dim {
			return fmt.Errorf("npy %s: row %d has %d values, want %d", path, i, len(r), dim)
		}
	}
	hdr := fmt.Sprintf("{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }", len(rows), dim)
	// Pad with spaces so magic + header ends on a 64-byte boundary, then newline.
	pad := 64 - (10+len(hdr)+1)%64
	if pad == 64 {
		pad = 0
	}
	hdr += strings.Repeat(" ", pad) + "\n"
	return fileio.WriteFileAtomic(path, func(w io.Writer) error {
		var pre bytes.Buffer
		pre.WriteString("\x93NUMPY\x01\x00")
		binary.Write(&pre, binary.LittleEndian, uint16(len(hdr)))
		pre.WriteString(hdr)
		if _, err := w.Write(pre.Bytes()); err != nil {
			return err
		}
		buf := make([]byte, 0, 4*dim)
		for _, r := range rows {
			buf = buf[:0]
			for _, v := range r {
				buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
			}
			if _, err := w.Write(buf); err != nil {
				return err
			}
		}
		return nil
	})
}

// leFloats decodes n little-endian float32 (size 4) or float64 (size 8) values.
func leFloats(b []byte, size, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		if size == 4 {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		} else {
			out[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:])))
		}
	}
	return out
}
