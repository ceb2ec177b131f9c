package parquet

import (
	"fmt"
	"io"

	"github.com/jeirt/jeirt/model/read/internal/cell"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// Parquet page limits. The Parquet library allocates a page's buffers at the
// sizes its header gives before reading it, so a damaged header in a file of
// a few hundred bytes can ask for gigabytes; every page header is therefore
// read and checked against the file first.
const (
	// maxPageHeader is the largest page header read (headers are tens of
	// bytes; statistics add two values).
	maxPageHeader = 1 << 20
	// A page's uncompressed size may be up to pageRatio times its
	// compressed size, or pageFloor bytes, whichever is larger: writers
	// make pages of about 1 MiB, and gzip, the codec with the largest
	// bounded ratio, expands at most about 1,032 times.
	pageFloor = 16 << 20
	pageRatio = 1100
	// A row group may hold up to maxRowsFloor rows, or maxRowsPerBit rows
	// per bit of its compressed columns, whichever is more.
	maxRowsFloor  = 1 << 20
	maxRowsPerBit = pageRatio
)

// checkPages reads the header of every page of every column chunk of the
// file q and refuses a chunk outside the file, a page whose compressed size
// passes the end of its chunk, and a page whose uncompressed size is beyond
// the limits above (for an uncompressed chunk, beyond its compressed size).
func (q *pqFile) checkPages(size int64) error {
	var buf []byte
	var proto thrift.CompactProtocol
	for g, rg := range q.pf.Metadata().RowGroups {
		// The readers hold a row group's rows at once, so its row count
		// is bounded by its bytes: even a column of one repeated value
		// takes a bit per maxRowsPerBit rows.
		var bytes int64
		for _, cc := range rg.Columns {
			bytes += max(cc.MetaData.TotalCompressedSize, 0)
		}
		if rg.NumRows < 0 || rg.NumRows > maxRowsFloor+8*maxRowsPerBit*bytes {
			return &cell.ParseError{File: q.path, RowGroup: g + 1,
				Msg: fmt.Sprintf("%d rows in %d bytes of columns (a damaged file)", rg.NumRows, bytes)}
		}
		for k, cc := range rg.Columns {
			md := cc.MetaData
			column := fmt.Sprintf("column %d", k+1)
			if k < len(q.header) {
				column = fmt.Sprintf("column %q", q.header[k])
			}
			damaged := func(format string, args ...any) error {
				return &cell.ParseError{File: q.path, RowGroup: g + 1,
					Msg: fmt.Sprintf("%s: %s (a damaged file)", column, fmt.Sprintf(format, args...))}
			}
			off := md.DataPageOffset
			if md.DictionaryPageOffset != 0 {
				off = md.DictionaryPageOffset
			}
			n := md.TotalCompressedSize
			if off < 4 || n < 0 || off > size || n > size-off {
				return damaged("its %d bytes at byte %d are not inside the file's %d", n, off, size)
			}
			for pos := int64(0); pos < n; {
				// A header is read from 4 KiB of the file, and from up to
				// maxPageHeader when it is longer (large statistics).
				var h format.PageHeader
				var used int
				for _, want := range []int64{4 << 10, maxPageHeader} {
					w := min(n-pos, want)
					if int64(cap(buf)) < w {
						buf = make([]byte, w)
					}
					b := buf[:w]
					if _, err := q.f.ReadAt(b, off+pos); err != nil && err != io.EOF {
						return err
					}
					r := proto.NewReaderFromBytes(b)
					h = format.PageHeader{}
					err := thrift.NewDecoder(r).Decode(&h)
					if err == nil {
						used = r.(interface{ BytesRead() int }).BytesRead()
						break
					}
					if w == n-pos || want == maxPageHeader {
						return damaged("page header at byte %d: %v", off+pos, err)
					}
				}
				pos += int64(used)
				c, u := int64(h.CompressedPageSize), int64(h.UncompressedPageSize)
				switch {
				case c < 0 || c > n-pos:
					return damaged("a page at byte %d claims %d bytes, %d are left in the chunk", off+pos, c, n-pos)
				case u < 0:
					return damaged("a page at byte %d claims %d uncompressed bytes", off+pos, u)
				case md.Codec == format.Uncompressed && h.Type != format.DataPageV2 && u > c:
					return damaged("an uncompressed page at byte %d claims %d bytes, but holds %d", off+pos, u, c)
				case u > max(pageFloor, pageRatio*c):
					return damaged("a page at byte %d of %d compressed bytes claims %d uncompressed bytes (at most %d)", off+pos, c, u, max(pageFloor, pageRatio*c))
				}
				pos += c
			}
		}
	}
	return nil
}
