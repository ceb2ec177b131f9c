package parquet

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/read/internal/cell"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// A 583-byte Parquet file (found by FuzzReadParquet) whose page header claims
// almost 2 GB made the Parquet library allocate 1.87 GB before reading the
// page; the page headers are now checked against the file first.
func TestReadParquetPageSize(t *testing.T) {
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	_, err := readFile("testdata/page-size-2g.parquet", "long")
	runtime.ReadMemStats(&m1)
	if err == nil || !strings.Contains(err.Error(), "(a damaged file)") {
		t.Fatalf("got %v, want a damaged-file error", err)
	}
	t.Log(err)
	if a := m1.TotalAlloc - m0.TotalAlloc; a > 16<<20 {
		t.Errorf("reading a 583-byte file allocated %d bytes", a)
	}
}

// A row group that claims a billion rows in a few hundred bytes (the readers
// would allocate gigabytes for its rows) is refused.
func TestReadParquetRowCount(t *testing.T) {
	dir := t.TempDir()
	dst := filepath.Join(dir, "s.parquet")
	writeRows(t, dst, "model,item,label", "m1,q1,1", "m1,q2,0", "m2,q1,1")
	b, _ := os.ReadFile(dst)
	footer := int(binary.LittleEndian.Uint32(b[len(b)-8:]))
	start := len(b) - 8 - footer
	var meta format.FileMetaData
	var proto thrift.CompactProtocol
	if err := thrift.Unmarshal(&proto, b[start:len(b)-8], &meta); err != nil {
		t.Fatal(err)
	}
	meta.RowGroups[0].NumRows = 1e9
	meta.NumRows = 1e9
	nf, err := thrift.Marshal(&proto, &meta)
	if err != nil {
		t.Fatal(err)
	}
	out := append(append([]byte(nil), b[:start]...), nf...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(nf)))
	out = append(out, "PAR1"...)
	p := filepath.Join(dir, "rows.parquet")
	os.WriteFile(p, out, 0o644)
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	_, err = readFile(p, "auto")
	runtime.ReadMemStats(&m1)
	if err == nil || !strings.Contains(err.Error(), "row group 1: 1000000000 rows in") {
		t.Fatalf("got %v", err)
	}
	if a := m1.TotalAlloc - m0.TotalAlloc; a > 16<<20 {
		t.Errorf("allocated %d bytes", a)
	}
}

// readFile reads the Parquet file path in the layout format.
func readFile(path, format string) (*model.Responses, error) {
	in, err := fileio.OpenInput(path)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	r, _, err := Read(in, format, false, cell.NewSink(false))
	return r, err
}

// writeRows writes the comma-separated header and rows to path with Write.
func writeRows(t *testing.T, path, header string, rows ...string) {
	t.Helper()
	k := 0
	if _, err := Write("rows", path, strings.Split(header, ","), 0, func() ([][]byte, error) {
		if k == len(rows) {
			return nil, io.EOF
		}
		k++
		return bytes.Split([]byte(rows[k-1]), []byte(",")), nil
	}); err != nil {
		t.Fatal(err)
	}
}
