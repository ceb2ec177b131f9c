// Package csvtable reads small CSV tables with a header by column name
// (Read, Row): each problem names the file, line and column.
package csvtable

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/limits"
)

// Row reads the fields of one record of a CSV file with a header by column
// name. The first problem is kept (Err) and names the file, line and column;
// later reads return zero values.
type Row struct {
	*rowState
}

type rowState struct {
	path   string
	line   int
	header map[string]int
	rec    []string
	err    error
}

// Err is the first problem met reading this row (or an earlier one).
func (g Row) Err() error { return g.err }

// Has reports whether the file has column col.
func (g Row) Has(col string) bool {
	_, ok := g.header[col]
	return ok
}

func (g Row) raw(col string, required bool) (string, bool) {
	k, ok := g.header[col]
	if !ok {
		if required && g.err == nil {
			g.err = fmt.Errorf("%s: no column %q", g.path, col)
		}
		return "", false
	}
	return strings.TrimSpace(g.rec[k]), true
}

// Str is a required text column.
func (g Row) Str(col string) string {
	v, _ := g.raw(col, true)
	return v
}

// OptStr is a text column that may be absent.
func (g Row) OptStr(col string) string {
	v, _ := g.raw(col, false)
	return v
}

func (g Row) parse(col string, required bool) float64 {
	v, ok := g.raw(col, required)
	if !ok || v == "" {
		if ok && required && g.err == nil {
			g.err = fmt.Errorf("%s:%d: column %q is empty", g.path, g.line, col)
		}
		return math.NaN()
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil && g.err == nil {
		g.err = fmt.Errorf("%s:%d: column %q: %q is not a number", g.path, g.line, col, limits.Clip(v))
	}
	return x
}

// Num is a required number; OptNum is NaN when the column is absent or empty.
func (g Row) Num(col string) float64    { return g.parse(col, true) }
func (g Row) OptNum(col string) float64 { return g.parse(col, false) }

// Int is a required whole number; OptInt is 0 when absent or empty.
func (g Row) Int(col string) int {
	x := g.parse(col, true)
	if math.IsNaN(x) {
		return 0
	}
	return int(x)
}

func (g Row) OptInt(col string) int {
	x := g.parse(col, false)
	if math.IsNaN(x) {
		return 0
	}
	return int(x)
}

// Read calls row for every record of the CSV file at path, which has a
// header (a byte-order mark is ignored). It stops at the first error row
// returns.
func Read(path string, row func(Row) error) error {
	f, err := fileio.OpenInput(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if !f.Regular {
		f.Limit(fileio.MaxDocumentBytes, "a table")
	}
	cr := csv.NewReader(f)
	head, err := cr.Read()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	st := &rowState{path: path, header: map[string]int{}}
	for k, h := range head {
		st.header[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = k
	}
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		st.line, st.rec = line, rec
		if err := row(Row{st}); err != nil {
			return err
		}
	}
}
