package parquet

import (
	"strconv"

	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/read/internal/cell"
	"github.com/parquet-go/parquet-go"
)

// Value is a Parquet value as Table hands it out.
type Value = parquet.Value

// Table is an open Parquet table read column by name, whose other columns
// may be nested (structs, lists), as measurement-db's tables are.
type Table struct {
	Path string
	// Columns are the names of its top-level columns, nested ones included.
	Columns []string
	// Rows is its number of rows.
	Rows int64

	in *fileio.Input
	q  *pqFile
}

// OpenTable opens the Parquet file at path as a Table; Close closes it.
func OpenTable(path string) (t *Table, err error) {
	defer recoverParquet(path, &err)
	in, err := fileio.OpenInput(path)
	if err != nil {
		return nil, err
	}
	if !Is(in) {
		in.Close()
		return nil, &cell.ParseError{File: path, Msg: "not a Parquet file (it does not start with PAR1)"}
	}
	q, err := openParquetFile(in, true)
	if err != nil {
		in.Close()
		return nil, err
	}
	t = &Table{Path: path, Rows: q.pf.NumRows(), in: in, q: q}
	for _, f := range q.pf.Root().Fields() {
		t.Columns = append(t.Columns, f.Name())
	}
	return t, nil
}

// Close closes the file.
func (t *Table) Close() error { return t.in.Close() }

// Has reports whether the table has name as a flat (not nested) top-level column.
func (t *Table) Has(name string) bool {
	leaf, ok := t.q.pf.Schema().Lookup(name)
	return ok && len(leaf.Path) == 1
}

// Each calls fn for every row, in order, with its 0-based row group and
// its 0-based row of the file, and the values of the flat top-level columns names (a null value for a column
// the table lacks: see Has). The values are valid during the call only.
func (t *Table) Each(names []string, fn func(group int, row int64, vals []Value) error) (err error) {
	defer recoverParquet(t.Path, &err)
	q := t.q
	idx := make([]int, len(names))
	for k, n := range names {
		idx[k] = -1
		if leaf, ok := q.pf.Schema().Lookup(n); ok && len(leaf.Path) == 1 {
			idx[k] = leaf.ColumnIndex
		}
	}
	cols := make([][]parquet.Value, len(names))
	vals := make([]parquet.Value, len(names))
	var row0 int64
	for g, rg := range q.pf.RowGroups() {
		n := int(rg.NumRows())
		for k, c := range idx {
			cols[k] = resize(cols[k], n)
			clear(cols[k])
			if c < 0 {
				continue
			}
			col := cols[k]
			if err := q.each(rg, c, func(i int, v parquet.Value) error {
				col[i] = v.Clone()
				return nil
			}, nil); err != nil {
				return q.wrap(g, err)
			}
		}
		for i := 0; i < n; i++ {
			for k := range names {
				vals[k] = cols[k][i]
			}
			if err := fn(g, row0+int64(i), vals); err != nil {
				return err
			}
		}
		row0 += int64(n)
	}
	return nil
}

// Text is a string or integer value as text, "" for null.
func Text(v Value) string {
	switch v.Kind() {
	case parquet.ByteArray, parquet.FixedLenByteArray:
		return string(v.ByteArray())
	case parquet.Int32, parquet.Int64:
		return strconv.FormatInt(v.Int64(), 10)
	}
	if v.IsNull() {
		return ""
	}
	return v.String()
}

// Number is a numeric or boolean value as a float64; ok is false for a
// value of another kind, null included.
func Number(v Value) (x float64, ok bool) {
	switch v.Kind() {
	case parquet.Double:
		return v.Double(), true
	case parquet.Float:
		return float64(v.Float()), true
	case parquet.Int32, parquet.Int64:
		return float64(v.Int64()), true
	case parquet.Boolean:
		if v.Boolean() {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}
