package read

import (
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/read/internal/cell"
	"github.com/jeirt/jeirt/model/read/internal/parquet"
)

// The Parquet side of the readers: package model/read/internal/parquet
// decodes the file into the same cells the text readers give.

// readParquet reads a Parquet file in the long or wide layout and resolves
// its duplicate cells.
func readParquet(in *fileio.Input, format, dup string, graded bool, rep *Report) (*model.Responses, error) {
	cells := cell.NewSink(dup == "error")
	r, lay, err := parquet.Read(in, format, graded, cells)
	rep.Format, rep.Why, rep.Rows = lay.Format, lay.Why, lay.Rows
	if err != nil {
		return nil, err
	}
	if lay.Unnamed {
		orientUnnamed(r, cells, rep)
	}
	if err := rep.finish(cells, r, dup, in.Path); err != nil {
		return nil, err
	}
	return r, nil
}

// readItemsParquet reads an item-text table from Parquet with the column
// names of Items.
func readItemsParquet(in *fileio.Input) (*ItemTable, error) {
	t, err := parquet.ReadItems(in, itemTextIDNames, itemTextNames)
	if err != nil {
		return nil, err
	}
	return &ItemTable{IDs: t.IDs, Text: t.Text, Group: t.Group, IDColumn: t.IDColumn, TextColumn: t.TextColumn}, nil
}

// ConvertToParquet copies a CSV or TSV file (gzip transparent) to Parquet,
// column for column and row for row: every column becomes a
// dictionary-encoded, Snappy-compressed string column of the same name, in
// rows groups of rowGroup rows (0 means 1,048,576). Reading the Parquet file
// back gives the same responses as reading the text, in the same order. The
// output is written atomically. An unnamed first column (a pandas index)
// is named "index".
func ConvertToParquet(src, dst string, rowGroup int) (rows int, err error) {
	in, err := fileio.OpenInput(src)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	br, gz, err := openText(in)
	if err != nil {
		return 0, err
	}
	s := newCSVScanner(src, br, gz)
	first, err := s.peekFirstLine()
	if err != nil {
		return 0, err
	}
	if len(first) > 0 && first[0] == '{' {
		return 0, &ParseError{File: src, Line: 1, Msg: "a JSONL file cannot be converted to Parquet (want CSV or TSV with a header)"}
	}
	h, err := s.readHeader()
	if err != nil {
		return 0, err
	}
	return parquet.Write(src, dst, h, rowGroup, func() ([][]byte, error) {
		fields, err := s.next()
		if err == nil && len(fields) != len(h) {
			return nil, s.errorf(s.start, "", "row has %d fields, header has %d", len(fields), len(h))
		}
		return fields, err
	})
}
