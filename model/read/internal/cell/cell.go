// Package cell holds what every reader of package model/read shares: the
// parse error that names the file, line and field, the label grammar
// (Labels), the table of model and item names (Names), the sink that
// collects cells and resolves duplicate rows by policy (Sink), and the column
// names of the long and wide layouts.
package cell

import (
	"fmt"
	"strings"

	"github.com/jeirt/jeirt/model/limits"
)

// ParseError reports bad input at a line of a file, in the form
//
//	data.csv:1042: column "label": "maybe" is not a 0/1 label
type ParseError struct {
	File     string
	RowGroup int    // Parquet: the 1-based row group, and Line is then the 1-based row of the file
	Line     int    // 1-based; 0 when the problem is the whole file
	Column   string // the column (or JSON key) at fault, if any
	Key      bool   // Column is a JSON key rather than a CSV column
	Msg      string
	Err      error // underlying error, if any
}

func (e *ParseError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	switch {
	case e.RowGroup > 0 && e.Line > 0:
		fmt.Fprintf(&b, ": row group %d, row %d", e.RowGroup, e.Line)
	case e.RowGroup > 0:
		fmt.Fprintf(&b, ": row group %d", e.RowGroup)
	case e.Line > 0:
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Column != "" {
		kind := "column"
		if e.Key {
			kind = "key"
		}
		fmt.Fprintf(&b, "%s %q: ", kind, limits.Clip(e.Column))
	}
	if len(e.Msg) > 4*limits.MaxQuote {
		b.WriteString(limits.Clip(e.Msg[:4*limits.MaxQuote]))
		fmt.Fprintf(&b, "… (%d bytes)", len(e.Msg))
	} else {
		b.WriteString(e.Msg)
	}
	return b.String()
}

func (e *ParseError) Unwrap() error { return e.Err }

// Names maps names to dense indices in order of first appearance; List
// holds them in that order.
type Names struct {
	index map[string]int32
	List  []string
}

// NewNames returns an empty table.
func NewNames() *Names { return &Names{index: map[string]int32{}} }

// ID returns the index of name, adding it if new; the lookup with a []byte key
// does not allocate.
func (t *Names) ID(name []byte) int32 {
	if v, ok := t.index[string(name)]; ok {
		return v
	}
	s := string(name)
	v := int32(len(t.List))
	t.index[s] = v
	t.List = append(t.List, s)
	return v
}

// ClipJoin joins a header's names with commas for an error message, stopping
// once the text passes limits.MaxQuote bytes.
func ClipJoin(h []string) string {
	var b strings.Builder
	for i, s := range h {
		if i > 0 {
			b.WriteByte(',')
		}
		if b.Len()+len(s) > limits.MaxQuote {
			b.WriteString(limits.Clip(s))
			fmt.Fprintf(&b, "… (%d columns)", len(h))
			break
		}
		b.WriteString(s)
	}
	return b.String()
}
