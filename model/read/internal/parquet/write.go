package parquet

import (
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/read/internal/cell"
	"github.com/parquet-go/parquet-go"
)

// Write writes a table of text fields to dst as Parquet, column for column
// and row for row: every column becomes a dictionary-encoded,
// Snappy-compressed string column named as in header, in row groups of
// rowGroup rows (0 means 1,048,576). An unnamed first column (a pandas index)
// is named "index". next gives each row's fields, as many as header has, and
// io.EOF after the last; they may alias a buffer that the next call reuses.
// src names the table in errors. The output is written atomically.
func Write(src, dst string, header []string, rowGroup int, next func() ([][]byte, error)) (rows int, err error) {
	if rowGroup <= 0 {
		rowGroup = 1 << 20
	}
	schema, err := stringSchema(header)
	if err != nil {
		return 0, &cell.ParseError{File: src, Line: 1, Msg: err.Error(), Err: err}
	}
	err = fileio.WriteFileAtomic(dst, func(w io.Writer) error {
		// Page buffers sized for the column count: a wide file has thousands
		// of columns, each with its own buffer.
		page := min(256<<10, max(4<<10, (64<<20)/len(header)))
		pw := parquet.NewWriter(w, schema, parquet.MaxRowsPerRowGroup(int64(rowGroup)), parquet.PageBufferSize(page))
		const batch = 4096
		buf := make([]parquet.Row, batch)
		var arena []byte
		n := 0
		flush := func() error {
			if n == 0 {
				return nil
			}
			_, err := pw.WriteRows(buf[:n])
			n, arena = 0, arena[:0]
			return err
		}
		for {
			fields, err := next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
			// The fields alias next's buffer: copy them into the batch's
			// arena (an append that moves the arena leaves earlier rows pointing
			// at the old copy, which stays valid).
			row := buf[n][:0]
			for k, b := range fields {
				at := len(arena)
				arena = append(arena, b...)
				row = append(row, parquet.ByteArrayValue(arena[at:len(arena):len(arena)]).Level(0, 0, k))
			}
			buf[n] = row
			rows++
			if n++; n == batch || cap(arena) > 1<<24 {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		if err := flush(); err != nil {
			return err
		}
		return pw.Close()
	})
	return rows, err
}

// stringSchema is a Parquet schema of string columns named as header, in
// header order (a parquet.Group would sort them by name, and the order of a
// wide file's columns is the order of its items or models).
func stringSchema(header []string) (*parquet.Schema, error) {
	fields := make([]reflect.StructField, len(header))
	seen := map[string]bool{}
	for k, name := range header {
		if k == 0 && name == "" {
			name = "index" // an unnamed index column, as pandas writes it
		}
		if name == "" || strings.ContainsAny(name, ",`\"") || seen[name] {
			return nil, fmt.Errorf("column %d name %q cannot be a Parquet column (empty, repeated, or with a comma or quote)", k+1, name)
		}
		seen[name] = true
		fields[k] = reflect.StructField{Name: fmt.Sprintf("C%d", k), Type: reflect.TypeOf(""),
			Tag: reflect.StructTag(fmt.Sprintf(`parquet:"%s,dict,snappy"`, name))}
	}
	return parquet.SchemaOf(reflect.New(reflect.StructOf(fields)).Elem().Interface()), nil
}
