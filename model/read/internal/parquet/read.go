// Package parquet is the Parquet side of package model/read: it reads
// item-level responses (into a cell.Sink) and item-text tables from Parquet
// files, checking every page header against the file before the library
// reads it, and writes text tables as Parquet.
//
// It uses github.com/parquet-go/parquet-go, a pure-Go library (no cgo, a
// small dependency tree) that decodes one column chunk at a time, so a file
// is read row group by row group and never held whole; its dictionary pages
// let a string column of model or item names be mapped to ids once per
// distinct name instead of once per cell.
package parquet

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/limits"
	"github.com/jeirt/jeirt/model/read/internal/cell"
	"github.com/parquet-go/parquet-go"
)

// The layouts and column names are those of the CSV readers: long (a model,
// an item and a label column, optionally text and category) or wide (the
// first column names the rows, one column per item or model). Labels may be
// booleans, integers 0/1 or -1/1, floats (NaN missing) or strings as in CSV;
// null is missing.

// parquetMagic starts (and ends) every Parquet file.
var parquetMagic = []byte("PAR1")

// Is reports whether the opened file starts with the Parquet magic (peeked,
// not consumed).
func Is(in *fileio.Input) bool {
	head, err := in.Peek(len(parquetMagic))
	return err == nil && bytes.Equal(head, parquetMagic)
}

// pqFile is an open Parquet file with the names of its top-level columns.
type pqFile struct {
	path   string
	f      *os.File
	pf     *parquet.File
	header []string
	buf    []parquet.Value // reused by each
}

// recoverParquet turns a panic of the Parquet library on damaged metadata
// (it panics on some, for example a MAP annotation on a flat column) into
// the file's error; deferred by the Parquet readers.
func recoverParquet(path string, err *error) {
	if p := recover(); p != nil {
		*err = &cell.ParseError{File: path, Msg: "not a readable Parquet file (a damaged file): " + limits.Clip(fmt.Sprint(p))}
	}
}

// openParquet reads the metadata of the opened Parquet file of flat
// columns; the caller closes in.
func openParquet(in *fileio.Input) (*pqFile, error) { return openParquetFile(in, false) }

// openParquetFile is openParquet; nested allows nested columns, and the
// header then names every leaf column by its dotted path (the index of a
// column chunk).
func openParquetFile(in *fileio.Input, nested bool) (*pqFile, error) {
	path := in.Path
	if !in.Regular {
		return nil, &cell.ParseError{File: path, Msg: "a Parquet file is read from its end, so it cannot come from a pipe: copy it to a file first"}
	}
	f := in.File
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	// The footer's length is the file's last 4 bytes before "PAR1": checked
	// against the file's size first, because the library allocates it as
	// given (a damaged length asks for up to 4 GB).
	var tail [8]byte
	if st.Size() < 12 {
		return nil, &cell.ParseError{File: path, Msg: fmt.Sprintf("not a readable Parquet file: %d bytes is too short", st.Size())}
	}
	if _, err := f.ReadAt(tail[:], st.Size()-8); err != nil {
		return nil, err
	}
	if n := int64(binary.LittleEndian.Uint32(tail[:4])); n+12 > st.Size() {
		return nil, &cell.ParseError{File: path, Msg: fmt.Sprintf("not a readable Parquet file: its footer claims %d bytes of the file's %d (a damaged file)", n, st.Size())}
	}
	pf, err := parquet.OpenFile(f, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, &cell.ParseError{File: path, Msg: "not a readable Parquet file: " + err.Error(), Err: err}
	}
	q := &pqFile{path: path, f: f, pf: pf}
	if nested {
		for _, p := range pf.Schema().Columns() {
			q.header = append(q.header, strings.Join(p, "."))
		}
	} else {
		for _, c := range pf.Root().Columns() {
			if !c.Leaf() {
				return nil, &cell.ParseError{File: path, Column: c.Name(), Msg: "nested columns are not supported: want flat columns (a long or wide table)"}
			}
			q.header = append(q.header, c.Name())
		}
	}
	if err := q.checkPages(st.Size()); err != nil {
		return nil, err
	}
	return q, nil
}

// Close ends the reading; the file itself belongs to its Input.
func (q *pqFile) Close() error { return nil }

// errorAt locates a problem at a row group (0-based g) and a file row (0-based).
func (q *pqFile) errorAt(g int, row int64, column, format string, args ...any) error {
	return &cell.ParseError{File: q.path, RowGroup: g + 1, Line: int(row + 1), Column: column, Msg: fmt.Sprintf(format, args...)}
}

// each calls fn for every value of column k of row group rg, with the row's
// 0-based index within the row group. When dict is non-nil and a page is
// dictionary-encoded without nulls, fn is replaced by dictFn on the page's
// dictionary indexes (so a string is looked at once per distinct value).
func (q *pqFile) each(rg parquet.RowGroup, k int, fn func(i int, v parquet.Value) error,
	dictFn func(i int, d parquet.Dictionary, idx int32) error) error {
	pages := rg.ColumnChunks()[k].Pages()
	defer pages.Close()
	if q.buf == nil {
		q.buf = make([]parquet.Value, 4096)
	}
	buf := q.buf
	rows := rg.NumRows()
	column := ""
	if k < len(q.header) {
		column = q.header[k]
	}
	// A damaged file can hold more or fewer values in a column than its
	// row group has rows, or dictionary indexes past the dictionary.
	tooMany := func() error {
		return fmt.Errorf("column %q holds more values than the row group's %d rows (a damaged file)", limits.Clip(column), rows)
	}
	i := 0
	for {
		p, err := pages.ReadPage()
		if err == io.EOF {
			if int64(i) != rows {
				return fmt.Errorf("column %q holds %d values for the row group's %d rows (a damaged file)", limits.Clip(column), i, rows)
			}
			return nil
		}
		if err != nil {
			return err
		}
		if d := p.Dictionary(); dictFn != nil && d != nil && p.NumNulls() == 0 && p.DefinitionLevels() == nil {
			data := p.Data()
			for _, idx := range data.Int32() {
				if int64(i) >= rows {
					parquet.Release(p)
					return tooMany()
				}
				if idx < 0 || int(idx) >= d.Len() {
					parquet.Release(p)
					return fmt.Errorf("column %q: dictionary index %d outside the dictionary's %d values (a damaged file)", limits.Clip(column), idx, d.Len())
				}
				if err := dictFn(i, d, idx); err != nil {
					parquet.Release(p)
					return err
				}
				i++
			}
			parquet.Release(p)
			continue
		}
		vr := p.Values()
		for {
			n, err := vr.ReadValues(buf)
			for _, v := range buf[:n] {
				if int64(i) >= rows {
					parquet.Release(p)
					return tooMany()
				}
				if e := fn(i, v); e != nil {
					parquet.Release(p)
					return e
				}
				i++
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				parquet.Release(p)
				return err
			}
		}
		parquet.Release(p)
	}
}

// pqNames maps the values of a name column (strings or integers) to ids.
type pqNames struct {
	tab     *cell.Names
	small   []int32 // id of integer name v, for 0 <= v < len(small); -1 unset
	last    []byte
	lastID  int32
	dict    parquet.Dictionary
	dictIDs []int32
	num     []byte
}

func newPQNames() *pqNames { return &pqNames{tab: cell.NewNames(), lastID: -1} }

// id returns the id of v, or -1 when v is null or empty.
func (n *pqNames) id(v parquet.Value) int32 {
	switch v.Kind() {
	case parquet.ByteArray, parquet.FixedLenByteArray:
		b := v.ByteArray()
		if len(b) == 0 {
			return -1
		}
		if n.lastID >= 0 && bytes.Equal(b, n.last) {
			return n.lastID
		}
		n.lastID = n.tab.ID(b)
		n.last = append(n.last[:0], b...)
		return n.lastID
	case parquet.Int32, parquet.Int64:
		x := v.Int64()
		if x >= 0 && x < 1<<24 {
			for int64(len(n.small)) <= x {
				n.small = append(n.small, -1)
			}
			if id := n.small[x]; id >= 0 {
				return id
			}
			n.num = strconv.AppendInt(n.num[:0], x, 10)
			id := n.tab.ID(n.num)
			n.small[x] = id
			return id
		}
		n.num = strconv.AppendInt(n.num[:0], x, 10)
		return n.tab.ID(n.num)
	}
	if v.IsNull() {
		return -1
	}
	s := v.String()
	if s == "" {
		return -1
	}
	return n.tab.ID([]byte(s))
}

// dictID maps dictionary index idx of d to an id, once per distinct index.
func (n *pqNames) dictID(d parquet.Dictionary, idx int32) int32 {
	if d != n.dict {
		n.dict = d
		n.dictIDs = n.dictIDs[:0]
		for k := d.Len(); k > 0; k-- {
			n.dictIDs = append(n.dictIDs, -2)
		}
	}
	if idx < 0 || int(idx) >= len(n.dictIDs) {
		return -1
	}
	id := n.dictIDs[idx]
	if id == -2 {
		id = n.id(d.Index(idx))
		n.dictIDs[idx] = id
	}
	return id
}

// pqLabel turns one Parquet value into 0, 1, cell.Missing or cell.Counts
// (a graded score with lp.Graded, or a "k/n" string: lp.K, lp.N), or an
// error message; line is used to report 0/1 mixed with -1/1 as in CSV.
func pqLabel(lp *cell.Labels, v parquet.Value, line int) (uint8, string) {
	if v.IsNull() {
		return cell.Missing, ""
	}
	switch v.Kind() {
	case parquet.Boolean:
		if v.Boolean() {
			return 1, ""
		}
		return 0, ""
	case parquet.Int32, parquet.Int64:
		return lp.Number(float64(v.Int64()), line)
	case parquet.Float:
		return lp.Number(float64(v.Float()), line)
	case parquet.Double:
		return lp.Number(v.Double(), line)
	case parquet.ByteArray, parquet.FixedLenByteArray:
		y, err := lp.Parse(v.ByteArray(), line)
		if err != nil {
			return 0, fmt.Sprintf("%q %s", limits.Clip(string(v.ByteArray())), err.Error())
		}
		if y == cell.Bad {
			return 0, lp.BadLabel(v.ByteArray())
		}
		return y, ""
	}
	return 0, fmt.Sprintf("a %s value is not a 0/1 label", v.Kind())
}

// pqText is a Parquet value as the text a CSV field would hold (numbers as
// plain decimals), nil for null: successes and trials columns are checked by
// cell.ParseCounts, as in CSV.
func pqText(v parquet.Value, buf []byte) []byte {
	switch v.Kind() {
	case parquet.Boolean:
		if v.Boolean() {
			return append(buf[:0], '1')
		}
		return append(buf[:0], '0')
	case parquet.Int32, parquet.Int64:
		return strconv.AppendInt(buf[:0], v.Int64(), 10)
	case parquet.Float:
		return strconv.AppendFloat(buf[:0], float64(v.Float()), 'f', -1, 32)
	case parquet.Double:
		return strconv.AppendFloat(buf[:0], v.Double(), 'f', -1, 64)
	case parquet.ByteArray, parquet.FixedLenByteArray:
		return append(buf[:0], v.ByteArray()...)
	}
	if v.IsNull() {
		return nil
	}
	return append(buf[:0], v.String()...)
}

// decideParquet picks long or wide from the column names as decide does for CSV.
func decideParquet(q *pqFile) (format, why string, err error) {
	h := q.header
	if c, ok := cell.FindLongColumns(h); ok {
		return "long", "Parquet columns have " + c.Describe(h), nil
	}
	if len(h) > 0 {
		first0 := strings.ToLower(h[0])
		switch {
		case slices.Contains(cell.ModelNames, first0) || first0 == "name" || first0 == "subject":
			return "wide", fmt.Sprintf("Parquet: first column %q names the models; %d item columns", h[0], len(h)-1), nil
		case slices.Contains(cell.ItemNames, first0) || first0 == "question" || first0 == "id":
			return "wide-items", fmt.Sprintf("Parquet: first column %q names the items; %d model columns", h[0], len(h)-1), nil
		case first0 == "" || first0 == "index" || first0 == "__index_level_0__" || first0 == "unnamed: 0":
			return "wide-unnamed", "", nil
		}
	}
	fe := model.FieldErrorf("Format", "use {Format} long|wide|wide-items")
	return "", "", &cell.ParseError{File: q.path, Err: fe, Msg: fmt.Sprintf("cannot tell the layout from the Parquet columns %s (want model, item and label columns, or a first column naming models or items); %s", cell.ClipJoin(h), fe)}
}

// Layout says how Read read a file: the layout read and why (for
// read.Report), the rows read, and whether the first column is an unnamed
// index (as pandas writes it), whose orientation the caller settles by shape
// once the file is read (the rows are then taken as items).
type Layout struct {
	Format, Why string
	Rows        int
	Unnamed     bool
}

// Read reads responses from the opened Parquet file in in the long or wide
// layout (format auto, long, wide or wide-items) into cells; the names come
// back in the responses, the cells in the sink, to be finished by the caller.
// The file must be a regular file: Parquet is read from its end.
func Read(in *fileio.Input, format string, graded bool, cells *cell.Sink) (r *model.Responses, lay Layout, err error) {
	defer recoverParquet(in.Path, &err)
	q, err := openParquet(in)
	if err != nil {
		return nil, lay, err
	}
	defer q.Close()
	if format == "auto" {
		if format, lay.Why, err = decideParquet(q); err != nil {
			return nil, lay, err
		}
	} else {
		lay.Why = "given by --format"
	}
	lay.Format = format
	switch format {
	case "wide-unnamed":
		// An unnamed index (pandas): orientation by shape, as for CSV.
		lay.Format, lay.Unnamed = "wide-items", true
		r, err = readParquetWide(q, cells, graded, &lay, true)
	case "long":
		r, err = readParquetLong(q, cells, graded, &lay)
	case "wide":
		r, err = readParquetWide(q, cells, graded, &lay, false)
	case "wide-items":
		r, err = readParquetWide(q, cells, graded, &lay, true)
	default:
		err = fmt.Errorf("%s: format %s cannot be read from Parquet (want long, wide or wide-items)", in.Path, format)
	}
	return r, lay, err
}

func readParquetLong(q *pqFile, cells *cell.Sink, graded bool, lay *Layout) (*model.Responses, error) {
	h := q.header
	c, ok := cell.FindLongColumns(h)
	if !ok {
		return nil, &cell.ParseError{File: q.path, Msg: fmt.Sprintf("no model, item and label columns (want one of %s; one of %s; one of %s); columns are %s",
			strings.Join(cell.ModelNames, ", "), strings.Join(cell.ItemNames, ", "), strings.Join(cell.LabelNames, ", "), cell.ClipJoin(h))}
	}
	graded = graded || c.Graded // a graded_score column: jeirt wrote the file so
	models, items := newPQNames(), newPQNames()
	var text, group []string
	lp := cell.Labels{Graded: graded}
	var m, it []int32
	var y []uint8
	// ks and ns: each row's successes and trials, once a row group has a
	// cell that is not one 0/1 answer (nil until then).
	var ks []float64
	var ns []int32
	var isCount []bool
	var kText [][]byte
	lastCounts := false
	var labelDict parquet.Dictionary
	var dictLabels []uint8
	var row0 int64
	cells.Reserve(q.pf.NumRows())
	for g, rg := range q.pf.RowGroups() {
		n := int(rg.NumRows())
		m, it, y = resize(m, n), resize(it, n), resize(y, n)
		isCount = isCount[:0]
		counts := func(i int, k float64, t int32) {
			if len(isCount) == 0 {
				isCount, ks, ns = resize(isCount, n), resize(ks, n), resize(ns, n)
				clear(isCount)
			}
			isCount[i], ks[i], ns[i] = true, k, t
		}
		names := func(col int, tab *pqNames, out []int32, what string) error {
			check := func(i int, id int32) error {
				if id < 0 {
					return q.errorAt(g, row0+int64(i), h[col], "empty or null %s", what)
				}
				out[i] = id
				return nil
			}
			return q.each(rg, col,
				func(i int, v parquet.Value) error { return check(i, tab.id(v)) },
				func(i int, d parquet.Dictionary, idx int32) error { return check(i, tab.dictID(d, idx)) })
		}
		if err := names(c.Model, models, m, "model name"); err != nil {
			return nil, q.wrap(g, err)
		}
		if err := names(c.Item, items, it, "item id"); err != nil {
			return nil, q.wrap(g, err)
		}
		label := func(i int, v parquet.Value) error {
			l, msg := pqLabel(&lp, v, int(row0)+i+1)
			if msg != "" {
				return q.errorAt(g, row0+int64(i), h[c.Label], "%s", msg)
			}
			y[i], lastCounts = l, l == cell.Counts
			if l == cell.Counts {
				y[i] = model.RoundedLabel(lp.K, int(lp.N))
				counts(i, lp.K, lp.N)
			}
			return nil
		}
		if c.Trials >= 0 {
			// Successes and trials columns: each row checked as in CSV.
			kText = resize(kText, n)
			if err := q.each(rg, c.Label, func(i int, v parquet.Value) error {
				kText[i] = pqText(v, kText[i])
				return nil
			}, nil); err != nil {
				return nil, q.wrap(g, err)
			}
			var nb []byte
			if err := q.each(rg, c.Trials, func(i int, v parquet.Value) error {
				nb = pqText(v, nb)
				k, t, msg, col := cell.ParseCounts(kText[i], nb, graded)
				if msg != "" {
					return q.errorAt(g, row0+int64(i), h[[]int{c.Label, c.Trials}[col]], "%s", msg)
				}
				if t == 0 {
					y[i] = cell.Missing
					return nil
				}
				y[i] = model.RoundedLabel(k, int(t))
				if t != 1 || k != float64(y[i]) {
					counts(i, k, t)
				}
				return nil
			}, nil); err != nil {
				return nil, q.wrap(g, err)
			}
		} else if err := q.each(rg, c.Label, label, func(i int, d parquet.Dictionary, idx int32) error {
			// A dictionary-encoded label column: each distinct value is parsed
			// once; a value never seen before goes through label, which also
			// keeps the 0/1 versus -1/1 check. Counts and scores are parsed
			// every time (they are not a code).
			if d != labelDict {
				labelDict, dictLabels = d, dictLabels[:0]
				for k := d.Len(); k > 0; k-- {
					dictLabels = append(dictLabels, cell.Bad)
				}
			}
			if idx >= 0 && int(idx) < len(dictLabels) && dictLabels[idx] != cell.Bad {
				y[i] = dictLabels[idx]
				return nil
			}
			if err := label(i, d.Index(idx)); err != nil {
				return err
			}
			if idx >= 0 && int(idx) < len(dictLabels) && !lastCounts {
				dictLabels[idx] = y[i]
			}
			return nil
		}); err != nil {
			return nil, q.wrap(g, err)
		}
		for _, tc := range []struct {
			col  int
			list *[]string
		}{{c.Text, &text}, {c.Group, &group}} {
			if tc.col < 0 {
				continue
			}
			if err := q.each(rg, tc.col, func(i int, v parquet.Value) error {
				if !v.IsNull() {
					*tc.list = cell.SetFirst(*tc.list, int(it[i]), []byte(v.String()))
				}
				return nil
			}, nil); err != nil {
				return nil, q.wrap(g, err)
			}
		}
		if len(isCount) > 0 {
			for i := range y {
				switch {
				case y[i] == cell.Missing:
					cells.Blank++
				case isCount[i]:
					cells.AddCounts(m[i], it[i], ks[i], ns[i], int(row0)+i+1)
				default:
					cells.Add(m[i], it[i], y[i], int(row0)+i+1)
				}
			}
		} else {
			cells.AddRows(m, it, y, int(row0))
		}
		lay.Rows += n
		row0 += int64(n)
	}
	if lay.Rows == 0 {
		return nil, &cell.ParseError{File: q.path, Msg: "no data rows"}
	}
	r := &model.Responses{Models: models.tab.List, Items: items.tab.List}
	if c.Text >= 0 {
		r.ItemText = cell.PadTo(text, len(r.Items))
	}
	if c.Group >= 0 {
		r.ItemGroup = cell.PadTo(group, len(r.Items))
	}
	return r, nil
}

func readParquetWide(q *pqFile, cells *cell.Sink, graded bool, lay *Layout, itemMajor bool) (*model.Responses, error) {
	h := q.header
	if len(h) < 2 {
		return nil, &cell.ParseError{File: q.path, Msg: fmt.Sprintf("a wide file needs a name column and at least one more column; columns are %s", cell.ClipJoin(h))}
	}
	rows, cols := newPQNames(), cell.NewNames()
	colID := make([]int32, len(h))
	for k := 1; k < len(h); k++ {
		colID[k] = cols.ID([]byte(h[k]))
	}
	rowKind := "model name"
	if itemMajor {
		rowKind = "item id"
	}
	lp := cell.Labels{Graded: graded}
	var ids []int32
	var row0 int64
	for g, rg := range q.pf.RowGroups() {
		n := int(rg.NumRows())
		ids = resize(ids, n)
		set := func(i int, id int32) error {
			if id < 0 {
				return q.errorAt(g, row0+int64(i), h[0], "empty or null %s", rowKind)
			}
			ids[i] = id
			return nil
		}
		if err := q.each(rg, 0, func(i int, v parquet.Value) error { return set(i, rows.id(v)) },
			func(i int, d parquet.Dictionary, idx int32) error { return set(i, rows.dictID(d, idx)) }); err != nil {
			return nil, q.wrap(g, err)
		}
		for k := 1; k < len(h); k++ {
			if err := q.each(rg, k, func(i int, v parquet.Value) error {
				line := int(row0) + i + 1
				l, msg := pqLabel(&lp, v, line)
				if msg != "" {
					return q.errorAt(g, row0+int64(i), h[k], "%s", msg)
				}
				m, it := ids[i], colID[k]
				if itemMajor {
					m, it = colID[k], ids[i]
				}
				cells.AddLabel(m, it, l, &lp, line)
				return nil
			}, nil); err != nil {
				return nil, q.wrap(g, err)
			}
		}
		lay.Rows += n
		row0 += int64(n)
	}
	if lay.Rows == 0 {
		return nil, &cell.ParseError{File: q.path, Msg: "no data rows"}
	}
	if itemMajor {
		return &model.Responses{Models: cols.List, Items: rows.tab.List}, nil
	}
	return &model.Responses{Models: rows.tab.List, Items: cols.List}, nil
}

// wrap locates a decoding error of the library at its row group.
func (q *pqFile) wrap(g int, err error) error {
	var pe *cell.ParseError
	if errors.As(err, &pe) {
		return err
	}
	return &cell.ParseError{File: q.path, RowGroup: g + 1, Msg: "corrupt Parquet data: " + err.Error(), Err: err}
}

func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// Items is an item-text table: ids with their text and, optionally, group
// (nil without a category or benchmark column).
type Items struct {
	IDs, Text, Group []string
	// IDColumn and TextColumn are the names of the columns read as the id
	// and the text.
	IDColumn, TextColumn string
}

// ReadItems reads an item-text table from the opened Parquet file: its id
// column is the first of idNames it has, its text column the first of
// textNames, its group column one of cell.GroupNames.
func ReadItems(in *fileio.Input, idNames, textNames []string) (t *Items, err error) {
	path := in.Path
	defer recoverParquet(path, &err)
	q, err := openParquet(in)
	if err != nil {
		return nil, err
	}
	defer q.Close()
	h := q.header
	ic := cell.FindColumn(h, idNames)
	if ic < 0 {
		return nil, &cell.ParseError{File: path, Msg: fmt.Sprintf("no item id column (want one of %s); columns are %s", strings.Join(idNames, ", "), cell.ClipJoin(h))}
	}
	tc := cell.FindColumn(h, textNames)
	if tc < 0 {
		return nil, &cell.ParseError{File: path, Msg: fmt.Sprintf("no text column (want one of %s); columns are %s", strings.Join(textNames, ", "), cell.ClipJoin(h))}
	}
	gc := cell.FindColumn(h, cell.GroupNames)
	t = &Items{IDColumn: h[ic], TextColumn: h[tc]}
	var row0 int64
	for g, rg := range q.pf.RowGroups() {
		n := int(rg.NumRows())
		base := len(t.IDs)
		t.IDs = append(t.IDs, make([]string, n)...)
		t.Text = append(t.Text, make([]string, n)...)
		if gc >= 0 {
			t.Group = append(t.Group, make([]string, n)...)
		}
		for _, col := range []struct {
			k   int
			out []string
			id  bool
		}{{ic, t.IDs[base:], true}, {tc, t.Text[base:], false}, {gc, t.Group[base:], false}} {
			if col.k < 0 {
				continue
			}
			if err := q.each(rg, col.k, func(i int, v parquet.Value) error {
				if !v.IsNull() {
					col.out[i] = v.String()
				}
				if col.id && col.out[i] == "" {
					return q.errorAt(g, row0+int64(i), h[col.k], "empty item id")
				}
				return nil
			}, nil); err != nil {
				return nil, q.wrap(g, err)
			}
		}
		row0 += int64(n)
	}
	return t, nil
}
