package read

import (
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/jeirt/jeirt/model/fileio"
	"github.com/parquet-go/parquet-go"
)

// ConvertToParquet copies a CSV or TSV file (gzip transparent) to Parquet,
// column for column and row for row: every column becomes a
// dictionary-encoded, Snappy-compressed string column of the same name, in
// rows groups of rowGroup rows (0 means 1,048,576). Reading the Parquet file
// back gives the same responses as reading the text, in the same order. The
// output is written atomically. An unnamed first column (a pandas index)
// is named "index".
func ConvertToParquet(src, dst string, rowGroup int) (rows int, err error) {
	if rowGroup <= 0 {
		rowGroup = 1 << 20
	}
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
	schema, err := stringSchema(h)
	if err != nil {
		return 0, &ParseError{File: src, Line: 1, Msg: err.Error(), Err: err}
	}
	err = fileio.WriteFileAtomic(dst, func(w io.Writer) error {
		// Page buffers sized for the column count: a wide file has thousands
		// of columns, each with its own buffer.
		page := min(256<<10, max(4<<10, (64<<20)/len(h)))
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
			fields, err := s.next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
			if len(fields) != len(h) {
				return s.errorf(s.start, "", "row has %d fields, header has %d", len(fields), len(h))
			}
			// The fields alias the scanner's buffer: copy them into the batch's
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
