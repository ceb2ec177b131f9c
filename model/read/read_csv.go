package read

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/limits"
	"github.com/jeirt/jeirt/model/machine"
	"github.com/jeirt/jeirt/model/read/internal/cell"
)

// csvScanner reads CSV or TSV records without allocating per record: a line
// without quotes is split in place (the fields alias the read buffer and are
// valid until the next call), and only records with quoted fields, possibly
// spanning several lines, are copied. It follows RFC 4180 like encoding/csv,
// except that a quote inside an unquoted field is kept as text.
type csvScanner struct {
	file  string
	r     *bufio.Reader
	gz    bool
	comma byte

	header []string
	line   int // physical lines read so far
	start  int // line on which the current record starts

	fields  [][]byte
	ends    []int
	rec     []byte // the current record, when it had to be copied
	longBuf []byte // a line longer than the bufio buffer
	pending bool   // the previous read ended at EOF
	// keepCR keeps a \r\n line break inside a quoted field as \r\n (item
	// texts, byte for byte); otherwise it is read as \n. lastCR says the
	// line readLine returned ended in \r\n.
	keepCR, lastCR bool

	// layout is the delimiter and the column names the options give.
	layout textLayout

	// unnamedIndex is set by decide for a matrix whose first column is an
	// unnamed index: its orientation is settled after reading (readText).
	unnamedIndex bool
	// guessed is why auto chose the format ("" when it was given): a
	// matrix's readers name it when a label fails (guessedWrong).
	guessed string

	// consumed is the bytes of the lines read so far; size is the file's
	// size when those bytes are the file's own (a regular file, not gzip),
	// else 0. eachRow reserves room in sink from the two (reserveAhead).
	consumed, size int64
	sink           *cell.Sink
}

// reserveMin is the fewest cells a sink holds before eachRow reserves room
// for the rest of the file from the bytes read so far (reserveAhead); a
// variable so tests can lower it.
var reserveMin = 1 << 20

func newCSVScanner(file string, r *bufio.Reader, gz bool) *csvScanner {
	comma := byte(',')
	lower := strings.ToLower(strings.TrimSuffix(file, ".gz"))
	if strings.HasSuffix(lower, ".tsv") || strings.HasSuffix(lower, ".tab") {
		comma = '\t'
	}
	return &csvScanner{file: file, r: r, gz: gz, comma: comma}
}

func (s *csvScanner) errorf(line int, column, format string, args ...any) error {
	return &ParseError{File: s.file, Line: line, Column: column, Msg: fmt.Sprintf(format, args...)}
}

// readLine returns the next physical line without its line ending.
func (s *csvScanner) readLine() ([]byte, error) {
	if s.pending {
		return nil, io.EOF
	}
	l, err := s.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		s.longBuf = append(s.longBuf[:0], l...)
		for err == bufio.ErrBufferFull {
			if len(s.longBuf) > limits.MaxLineBytes {
				return nil, &ParseError{File: s.file, Line: s.line + 1, Msg: fmt.Sprintf("a line longer than %s (is this a text file?)", machine.Bytes(limits.MaxLineBytes))}
			}
			l, err = s.r.ReadSlice('\n')
			s.longBuf = append(s.longBuf, l...)
		}
		l = s.longBuf
	}
	if err != nil && err != io.EOF {
		s.line++
		if s.gz {
			return nil, &ParseError{File: s.file, Line: s.line, Msg: "corrupt gzip data: " + err.Error(), Err: err}
		}
		return nil, &ParseError{File: s.file, Line: s.line, Msg: err.Error(), Err: err}
	}
	if err == io.EOF {
		if len(l) == 0 {
			return nil, io.EOF
		}
		s.pending = true
	}
	s.line++
	s.consumed += int64(len(l))
	n := len(l)
	s.lastCR = n > 1 && l[n-1] == '\n' && l[n-2] == '\r'
	if n > 0 && l[n-1] == '\n' {
		n--
	}
	if n > 0 && l[n-1] == '\r' {
		n--
	}
	l = l[:n]
	if s.line == 1 {
		l = bytes.TrimPrefix(l, []byte("\xef\xbb\xbf"))
	}
	return l, nil
}

// next returns the fields of the next record, skipping blank lines, or io.EOF.
func (s *csvScanner) next() ([][]byte, error) {
	for {
		line, err := s.readLine()
		if err != nil {
			return nil, err
		}
		s.start = s.line
		if len(line) == 0 {
			continue
		}
		if bytes.IndexByte(line, '"') < 0 {
			s.fields = s.fields[:0]
			for {
				i := bytes.IndexByte(line, s.comma)
				if i < 0 {
					s.fields = append(s.fields, line)
					return s.fields, nil
				}
				s.fields = append(s.fields, line[:i])
				line = line[i+1:]
			}
		}
		return s.quoted(line)
	}
}

// quoted parses a record with quoted fields, reading more lines while a quoted
// field is open.
func (s *csvScanner) quoted(line []byte) ([][]byte, error) {
	s.rec, s.ends = s.rec[:0], s.ends[:0]
	pos := 0
	for {
		if pos < len(line) && line[pos] == '"' {
			pos++
			for {
				i := bytes.IndexByte(line[pos:], '"')
				if i < 0 {
					s.rec = append(s.rec, line[pos:]...)
					if s.keepCR && s.lastCR {
						s.rec = append(s.rec, '\r')
					}
					s.rec = append(s.rec, '\n')
					if len(s.rec) > limits.MaxLineBytes {
						return nil, s.errorf(s.start, s.columnName(len(s.ends)), "a record longer than %s (a quoted field that is never closed?)", machine.Bytes(limits.MaxLineBytes))
					}
					next, err := s.readLine()
					if err == io.EOF {
						return nil, s.errorf(s.start, s.columnName(len(s.ends)), "quoted field is never closed (the file ends at line %d)", s.line)
					}
					if err != nil {
						return nil, err
					}
					line, pos = next, 0
					continue
				}
				s.rec = append(s.rec, line[pos:pos+i]...)
				pos += i + 1
				if pos < len(line) && line[pos] == '"' {
					s.rec = append(s.rec, '"')
					pos++
					continue
				}
				break
			}
			s.ends = append(s.ends, len(s.rec))
			if pos == len(line) {
				return s.split(), nil
			}
			if line[pos] != s.comma {
				return nil, s.errorf(s.line, s.columnName(len(s.ends)-1), "text after the closing quote of a quoted field")
			}
			pos++
			continue
		}
		i := bytes.IndexByte(line[pos:], s.comma)
		if i < 0 {
			s.rec = append(s.rec, line[pos:]...)
			s.ends = append(s.ends, len(s.rec))
			return s.split(), nil
		}
		s.rec = append(s.rec, line[pos:pos+i]...)
		s.ends = append(s.ends, len(s.rec))
		pos += i + 1
	}
}

func (s *csvScanner) split() [][]byte {
	s.fields = s.fields[:0]
	from := 0
	for _, e := range s.ends {
		s.fields = append(s.fields, s.rec[from:e])
		from = e
	}
	return s.fields
}

func (s *csvScanner) columnName(k int) string {
	if k < len(s.header) {
		return s.header[k]
	}
	return ""
}

// readHeader reads the first record as the header, choosing a tab delimiter
// when the header has tabs and no commas.
func (s *csvScanner) readHeader() ([]string, error) {
	line, err := s.peekFirstLine()
	if err != nil {
		return nil, err
	}
	switch {
	case s.layout.delim != 0:
	case bytes.IndexByte(line, '\t') >= 0 && bytes.IndexByte(line, ',') < 0:
		s.comma = '\t'
	case s.comma == ',' && bytes.IndexByte(line, ';') >= 0 && bytes.IndexByte(line, ',') < 0:
		s.comma = ';'
	}
	f, err := s.next()
	if err == io.EOF {
		return nil, &ParseError{File: s.file, Msg: "the file is empty (no header)"}
	}
	if err != nil {
		return nil, err
	}
	s.header = make([]string, len(f))
	for i, b := range f {
		s.header[i] = strings.TrimSpace(string(b))
	}
	return s.header, nil
}

// peekFirstLine looks at the first non-blank line without consuming it.
func (s *csvScanner) peekFirstLine() ([]byte, error) {
	for n := 4096; ; n *= 2 {
		b, err := s.r.Peek(n)
		trimmed := bytes.TrimLeft(b, "\r\n\t \xef\xbb\xbf")
		if i := bytes.IndexByte(trimmed, '\n'); i >= 0 {
			return trimmed[:i], nil
		}
		if err != nil || n >= s.r.Size() {
			if len(trimmed) == 0 {
				if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
					return nil, &ParseError{File: s.file, Msg: "corrupt gzip data: " + err.Error(), Err: err}
				}
				return nil, &ParseError{File: s.file, Msg: "the file is empty (no header)"}
			}
			return trimmed, nil
		}
	}
}

// decide picks the format from the first line and reads the header (except
// for JSONL).
func (s *csvScanner) decide() (format, why string, err error) {
	first, err := s.peekFirstLine()
	if err != nil {
		return "", "", err
	}
	if len(first) > 0 && first[0] == '{' {
		return "pyirt", "the first line is a JSON object: py-irt JSONL", nil
	}
	header, err := s.readHeader()
	if err != nil {
		return "", "", err
	}
	if c, ok := cell.FindLongColumns(header); ok {
		return "long", "header has " + c.Describe(header), nil
	}
	if k := cell.FindColumn(header, cell.FreqNames); k >= 0 {
		return "patterns", fmt.Sprintf("column %q counts the respondents with each response pattern", limits.Clip(header[k])), nil
	}
	first0 := strings.ToLower(header[0])
	switch {
	case contains(cell.ModelNames, first0) || first0 == "name" || first0 == "subject":
		return "wide", fmt.Sprintf("first column %q names the models; %d item columns", limits.Clip(header[0]), len(header)-1), nil
	case contains(cell.ItemNames, first0) || first0 == "question" || first0 == "id":
		return "wide-items", fmt.Sprintf("first column %q names the items; %d model columns", limits.Clip(header[0]), len(header)-1), nil
	case first0 == "" || first0 == "unnamed: 0" || first0 == "index":
		s.unnamedIndex = true
		return "wide-items", "", nil
	}
	fe := model.FieldErrorf("Format", "use {Format} long|wide|wide-items|pyirt|patterns, or name the columns of a long file with {Columns} %s", longColumnsExample(header))
	return "", "", &ParseError{File: s.file, Line: 1, Err: fe, Msg: fmt.Sprintf("cannot tell the format from the header (first column %q names neither models nor items, and there are no model, item and label columns); %s", limits.Clip(header[0]), fe)}
}

// eachRow calls row with each data row (counted in rep and checked to have as
// many fields as the header), and fails when the file has none.
func (s *csvScanner) eachRow(rep *Report, row func(f [][]byte) error) error {
	for {
		f, err := s.nextRow(rep, len(s.header))
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		held := s.held()
		if err := row(f); err != nil {
			return err
		}
		s.reserveAhead(s.held() - held)
	}
	if rep.Rows == 0 {
		return s.errorf(0, "", "no data rows after the header")
	}
	return nil
}

// reserveAhead makes room in the sink for the cells of the rest of the
// file before the next row (of about last cells, as the row just read) would
// outgrow it: the cells held, scaled by the file's size over the bytes read,
// and a sixteenth more. Without it the cells grow by append, and a read of
// 10^8 cells leaves several outgrown copies of them to the collector, which
// set the peak of the whole run (a 1 GB long CSV: the heap up to 1.76 GB for
// 0.81 GB of cells). A gzip file or a pipe, whose size is unknown, grows by
// append.
func (s *csvScanner) reserveAhead(last int) {
	c, held := s.sink, s.held()
	if c == nil || s.size <= 0 || held < reserveMin || held+max(last, 1) <= c.Room() || s.consumed <= 0 {
		return
	}
	want := int64(float64(held) * float64(s.size) / float64(s.consumed))
	want += want/16 + int64(max(last, 1))
	c.Reserve(max(want, int64(held)+int64(held)/4))
}

// held is the number of cells the sink holds (0 without one).
func (s *csvScanner) held() int {
	if s.sink == nil {
		return 0
	}
	return s.sink.Held()
}

// nextRow returns the next data row, counting it in rep, and checks that it
// has as many fields as the header.
func (s *csvScanner) nextRow(rep *Report, fields int) ([][]byte, error) {
	f, err := s.next()
	if err != nil {
		return nil, err
	}
	rep.Rows++
	if len(f) != fields {
		return nil, s.errorf(s.start, "", "row has %d fields, header has %d", len(f), fields)
	}
	return f, nil
}
