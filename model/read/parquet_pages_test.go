package read

import (
	"runtime"
	"strings"
	"testing"
)

// A 583-byte Parquet file (found by FuzzReadParquet) whose page header claims
// almost 2 GB made the Parquet library allocate 1.87 GB before reading the
// page; the page headers are now checked against the file first.
func TestReadParquetPageSize(t *testing.T) {
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	_, _, err := File("testdata/page-size-2g.parquet", Options{Format: "long", NoCache: true})
	runtime.ReadMemStats(&m1)
	if err == nil || !strings.Contains(err.Error(), "(a damaged file)") {
		t.Fatalf("got %v, want a damaged-file error", err)
	}
	t.Log(err)
	if a := m1.TotalAlloc - m0.TotalAlloc; a > 16<<20 {
		t.Errorf("reading a 583-byte file allocated %d bytes", a)
	}
}
