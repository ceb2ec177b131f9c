package read

import (
	"bufio"
	"io"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/read/internal/parquet"
)

// WriteLongParquet writes r as WriteLongCSV does, the same columns and rows,
// as a Parquet file of string columns (ConvertToParquet's layout); it is
// written atomically.
func WriteLongParquet(path string, r *model.Responses) error {
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(writeLong(pw, r, true)) }()
	defer pr.Close()
	s := newCSVScanner(path, bufio.NewReaderSize(pr, 1<<20), false)
	h, err := s.readHeader()
	if err != nil {
		return err
	}
	_, err = parquet.Write(path, path, h, 0, func() ([][]byte, error) { return s.next() })
	return err
}
