package model

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strings"
)

// WriteNPYFloat32 writes rows (all of one length) as a little-endian float32
// NumPy .npy file (format version 1.0) of shape (len(rows), len(rows[0])),
// readable with numpy.load. The file is written atomically.
func WriteNPYFloat32(path string, rows [][]float32) error {
	cols := 0
	if len(rows) > 0 {
		cols = len(rows[0])
	}
	for i, r := range rows {
		if len(r) != cols {
			return fmt.Errorf("npy %s: row %d has %d values, row 0 has %d", path, i, len(r), cols)
		}
	}
	return WriteFileAtomic(path, func(w io.Writer) error {
		bw, ok := w.(*bufio.Writer)
		if !ok {
			bw = bufio.NewWriter(w)
		}
		header := fmt.Sprintf("{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }", len(rows), cols)
		// magic (6) + version (2) + header length (2) + header + '\n' is a multiple of 64.
		pad := 64 - (10+len(header)+1)%64
		if pad == 64 {
			pad = 0
		}
		header += strings.Repeat(" ", pad) + "\n"
		bw.WriteString("\x93NUMPY\x01\x00")
		var n [2]byte
		binary.LittleEndian.PutUint16(n[:], uint16(len(header)))
		bw.Write(n[:])
		bw.WriteString(header)
		var b [4]byte
		for _, r := range rows {
			for _, v := range r {
				binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
				bw.Write(b[:])
			}
		}
		return bw.Flush()
	})
}
