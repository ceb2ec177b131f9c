// Package read reads item-level response matrices (long, wide, item-major
// wide, py-irt JSONL and response-pattern tables, as CSV, TSV, JSONL or
// Parquet, gzip transparent) into model.Responses, with errors that name the
// file, line and field, an optional binary cache, item-text tables and a
// column-by-name CSV row reader.
package read

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/fileio"
)

// Options says how to read a response file. The zero value reads any
// supported format, decided from the header, and resolves duplicate rows by
// majority.
type Options struct {
	// Format is auto (the default), long, wide, wide-items, pyirt or patterns.
	Format string
	// Items is an optional CSV of item texts joined to the responses by item id
	// (item_id,text; item_id,problem_statement; item_id,content; prompt_id,prompt ...).
	Items string
	// Duplicates says what to do with several rows for one (model, item) cell:
	// majority (the default; ties become missing), first, error, or trials
	// (the rows are trials of one cell: their successes and trials add up).
	Duplicates string
	// Graded reads labels strictly between 0 and 1 as graded scores (partial
	// credit: a fraction of one trial's success). Without it such a label is
	// an error, as it is for every reader of 0/1 labels.
	Graded bool

	// NoCache reads a text file directly, neither loading nor writing the
	// binary response cache (see File).
	NoCache bool
	// CacheDir holds the response caches; "" means jeirt/responses under the
	// user cache folder ($XDG_CACHE_HOME, else ~/.cache).
	CacheDir string
	// CacheMin is the smallest text file, in bytes, that is cached; 0 means
	// 64 MiB, a negative value caches every file.
	CacheMin int64
	// CacheTrustMtime loads a cache when the file's size and modification
	// time are those it was written for, without hashing the file: faster,
	// and wrong for a file changed in place with its time restored.
	CacheTrustMtime bool
	// Warn receives warnings about the file, one line each (a matrix that
	// looks transposed); they are in Report.Warnings too. Nil is silent.
	Warn model.Logf
}

// Formats lists the accepted values of Options.Format.
var Formats = []string{"auto", "long", "wide", "wide-items", "pyirt", "patterns"}

// DuplicatePolicies lists the accepted values of Options.Duplicates.
var DuplicatePolicies = []string{"majority", "first", "error", "trials"}

// Report says what a reader decided and what it found.
type Report struct {
	Path   string
	Format string // the format read: long, wide, wide-items, pyirt or patterns
	Why    string // why auto chose it (or "given by --format")
	Gzip   bool   // the file was gzip-compressed

	Rows  int // data records read (pattern rows before expansion)
	Blank int // cells given as blank or NA: missing

	DuplicateCells int // (model, item) cells with more than one row
	DuplicateRows  int // rows beyond the first for those cells
	Conflicts      int // duplicate cells whose rows disagree
	TiesDropped    int // conflicts with as many 0s as 1s, left missing (majority policy)

	// Cache says what the binary response cache did: "" (not used), "loaded",
	// "written" or "rebuilt (why)"; CachePath is its file.
	Cache     string
	CachePath string

	ItemsPath       string // the item-text file, if any
	ItemTextColumn  string // its column (or JSON key) read as the text
	ItemTexts       int    // items given a text
	ItemTextUnknown int    // rows of the item-text file whose id is not an item of the responses

	// Warning is what looked wrong but was read, "" when nothing did (also
	// given to Options.Warn).
	Warning string
}

// String renders the report as a few lines for people.
func (rep *Report) String() string {
	var b strings.Builder
	gz := ""
	if rep.Gzip {
		gz = ", gzip"
	}
	fmt.Fprintf(&b, "format: %s%s (%s)\n", rep.Format, gz, rep.Why)
	if rep.Cache != "" {
		fmt.Fprintf(&b, "cache: %s %s\n", rep.Cache, rep.CachePath)
	}
	fmt.Fprintf(&b, "rows read: %d, blank cells: %d\n", rep.Rows, rep.Blank)
	fmt.Fprintf(&b, "duplicates: %d cells with %d extra rows, %d conflicting, %d ties left missing\n",
		rep.DuplicateCells, rep.DuplicateRows, rep.Conflicts, rep.TiesDropped)
	if rep.ItemsPath != "" {
		fmt.Fprintf(&b, "item text: %d items from column %s of %s (%d rows for unknown items ignored)\n", rep.ItemTexts, rep.ItemTextColumn, rep.ItemsPath, rep.ItemTextUnknown)
	}
	return b.String()
}

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
		fmt.Fprintf(&b, "%s %q: ", kind, model.Clip(e.Column))
	}
	if len(e.Msg) > 4*model.MaxQuote {
		b.WriteString(model.Clip(e.Msg[:4*model.MaxQuote]))
		fmt.Fprintf(&b, "… (%d bytes)", len(e.Msg))
	} else {
		b.WriteString(e.Msg)
	}
	return b.String()
}

func (e *ParseError) Unwrap() error { return e.Err }

// File reads item-level responses from path in any supported format,
// decompressing gzip transparently, and joins item texts from opt.Items.
// Parquet files are recognised by their magic bytes, whatever their name.
//
// The file is opened once and read through one buffer, so it may be a pipe
// (/dev/stdin, a shell's <(cmd)); a folder or a device is refused, and a
// read blocked on a FIFO ends when the run is cancelled (model.OpenInput).
//
// A regular text file of at least opt.CacheMin bytes is cached: the first
// read writes the cells in a compact binary file under opt.CacheDir, keyed
// by a hash of the whole file (xxHash64, computed as the text is parsed),
// and later reads with the same options load that instead of parsing the
// text when the file still hashes the same (the hash runs while the cache
// loads). opt.CacheTrustMtime trusts the file's size and modification time
// instead of hashing it. A stale, damaged or impossible cache is never used:
// the text is read again and the cache rewritten.
func File(path string, opt Options) (*model.Responses, *Report, error) {
	rep := &Report{Path: path}
	format := opt.Format
	if format == "" {
		format = "auto"
	}
	if !contains(Formats, format) {
		return nil, rep, fmt.Errorf("unknown format %q (want auto, long, wide, wide-items, pyirt or patterns)", format)
	}
	dup := opt.Duplicates
	if dup == "" {
		dup = "majority"
	}
	if !contains(DuplicatePolicies, dup) {
		return nil, rep, fmt.Errorf("unknown duplicates policy %q (want majority, first, error or trials)", dup)
	}
	in, err := fileio.OpenInput(path)
	if err != nil {
		return nil, rep, err
	}
	defer in.Close()
	if !in.Regular {
		// A pipe is bounded by what this machine could hold.
		in.Limit(fileio.MemoryBudget(0), "a response file from a pipe")
	}
	cache := cacheFor(in, opt)
	var r *model.Responses
	switch {
	case isParquet(in):
		if format == "pyirt" || format == "patterns" {
			return nil, rep, fmt.Errorf("%s: a Parquet file cannot be read as %s (want long, wide or wide-items)", path, format)
		}
		cells := newCellSink(dup == "error")
		r, err = readParquet(in, format, opt.Graded, cells, rep)
		if err == nil {
			err = cells.finish(r, dup, path, rep)
		}
	case cache == nil:
		r, err = readText(in, format, dup, opt.Graded, rep)
	default:
		r, err = readTextCached(in, cache, format, dup, opt, rep)
	}
	if err != nil {
		return nil, rep, err
	}
	if err := checkUTF8(path, r); err != nil {
		return nil, rep, err
	}
	if w := transposedWarning(path, r, rep); w != "" {
		rep.Warning = w
		opt.Warn.Printf("warning: %s", w)
	}
	if opt.Items != "" {
		if err := joinItemText(r, opt.Items, rep); err != nil {
			return nil, rep, err
		}
	}
	return r, rep, nil
}

// readText reads a text file (CSV, TSV or JSONL, gzip transparent) and
// resolves its duplicate cells.
func readText(in *fileio.Input, format, dup string, graded bool, rep *Report) (*model.Responses, error) {
	var r *model.Responses
	path := in.Path
	br, gz, err := openText(in)
	if err != nil {
		return nil, err
	}
	rep.Gzip = gz

	s := newCSVScanner(path, br, gz)
	cells := newCellSink(dup == "error")
	if format == "auto" {
		format, rep.Why, err = s.decide()
		if err != nil {
			return nil, err
		}
	} else {
		rep.Why = "given by --format"
		if format != "pyirt" {
			if _, err := s.readHeader(); err != nil {
				return nil, err
			}
		}
	}
	rep.Format = format
	lp := &labelParser{graded: graded}
	switch format {
	case "long":
		r, err = readLong(s, cells, lp, rep)
	case "wide":
		r, err = readWide(s, cells, lp, rep, false)
	case "wide-items":
		r, err = readWide(s, cells, lp, rep, true)
		if err == nil && s.unnamedIndex {
			orientUnnamed(r, cells, rep)
		}
	case "patterns":
		r, err = readPatterns(s, cells, rep)
	case "pyirt":
		r, err = readPyIRT(path, s.r, cells, lp, rep, gz)
	}
	if err != nil {
		return nil, err
	}
	if err := cells.finish(r, dup, path, rep); err != nil {
		return nil, err
	}
	return r, nil
}

// orientUnnamed settles a matrix whose first column is an unnamed index (as
// pandas writes it), read with rows as items: models go on the shorter side,
// since benchmarks have more items than models. A matrix with fewer rows than
// columns is turned so its rows are the models; a square one keeps rows as
// items. --format wide or wide-items overrides the rule.
func orientUnnamed(r *model.Responses, cells *cellSink, rep *Report) {
	rows, cols := len(r.Items), len(r.Models)
	if rows < cols {
		r.Models, r.Items = r.Items, r.Models
		cells.transpose()
		rep.Format = "wide"
		rep.Why = fmt.Sprintf("first column is an unnamed index; %d rows x %d columns: models on the shorter side, so rows are models (--format wide-items reads rows as items)", rows, cols)
		return
	}
	rep.Why = fmt.Sprintf("first column is an unnamed index; %d rows x %d columns: models on the shorter side, so rows are items (--format wide reads rows as models)", rows, cols)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// openText reads the opened file through a gzip reader when it starts with
// the gzip magic bytes, whatever its name, and reports whether it did.
func openText(in *fileio.Input) (br *bufio.Reader, gz bool, err error) {
	magic, _ := in.Peek(2)
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(in)
		if err != nil {
			return nil, true, &ParseError{File: in.Path, Msg: "corrupt gzip data: " + err.Error(), Err: err}
		}
		return bufio.NewReaderSize(zr, 1<<20), true, nil
	}
	return in.Reader, false, nil
}

// Label parsing: 0/1, 0.0/1.0, -1/1, true/false (any case); blank, NA and NaN
// are missing. A file may not mix 0 and -1 as its wrong answer. With graded,
// a decimal strictly between 0 and 1 is a score (one trial, that fraction of
// a success); "k/n" is k successes in n trials (k a fraction only with graded).
type labelParser struct {
	zeroLine, minusLine int // first line with a 0 and with a -1 label
	fracLine            int // first line with a fraction (a score or k/n)
	graded              bool
	// k and n are the successes and trials of the last labelCounts.
	k float64
	n int32
}

const (
	labelMissing = 2
	labelBad     = 3
	// labelCounts: the label is k successes in n trials (labelParser.k, .n),
	// not one 0/1 answer.
	labelCounts = 4
)

func (lp *labelParser) parse(b []byte, line int) (uint8, error) {
	b = bytes.TrimSpace(b)
	switch len(b) {
	case 0:
		return labelMissing, nil
	case 1:
		switch b[0] {
		case '1':
			return 1, nil
		case '0':
			return lp.zero(line)
		}
	case 2:
		if b[0] == '-' && b[1] == '1' {
			return lp.minus(line)
		}
	case 3:
		if b[1] == '.' && b[2] == '0' {
			switch b[0] {
			case '1':
				return 1, nil
			case '0':
				return lp.zero(line)
			}
		}
	}
	switch strings.ToLower(string(b)) {
	case "true":
		return 1, nil
	case "false":
		return 0, nil
	case "na", "nan", "n/a", "null":
		return labelMissing, nil
	}
	if v, ok := parseFloatLabel(b); ok {
		switch {
		case v == 1:
			return 1, nil
		case v == 0:
			return lp.zero(line)
		case v == -1:
			return lp.minus(line)
		case lp.graded && v > 0 && v < 1:
			return lp.counts(v, 1, line)
		}
	}
	if i := bytes.IndexByte(b, '/'); i > 0 {
		k, kok := parseFloatLabel(bytes.TrimSpace(b[:i]))
		n, nerr := strconv.ParseInt(string(bytes.TrimSpace(b[i+1:])), 10, 32)
		switch {
		case !kok || nerr != nil || n < 0:
			return labelBad, nil
		case n == 0 && k == 0:
			return labelMissing, nil
		case k < 0 || k > float64(n):
			return 0, fmt.Errorf("is not k successes in n trials with 0 ≤ k ≤ n")
		case k != math.Trunc(k) && !lp.graded:
			return 0, fmt.Errorf("has a fractional number of successes (use --graded for graded scores)")
		}
		return lp.counts(k, int32(n), line)
	}
	return labelBad, nil
}

// counts records k successes in n trials, refusing a file that also has -1
// labels (a score or a count has no -1/1 reading).
func (lp *labelParser) counts(k float64, n int32, line int) (uint8, error) {
	if lp.fracLine == 0 {
		lp.fracLine = line
	}
	if lp.minusLine != 0 {
		return 0, fmt.Errorf("is a score or a count of trials, but line %d has -1: scores are in [0, 1] and wrong answers 0", lp.minusLine)
	}
	lp.k, lp.n = k, n
	return labelCounts, nil
}

func (lp *labelParser) zero(line int) (uint8, error) {
	if lp.zeroLine == 0 {
		lp.zeroLine = line
		if lp.minusLine != 0 {
			return 0, fmt.Errorf("is 0, but line %d has -1: the file mixes 0/1 and -1/1 labels", lp.minusLine)
		}
	}
	return 0, nil
}

func (lp *labelParser) minus(line int) (uint8, error) {
	if lp.minusLine == 0 {
		lp.minusLine = line
		if lp.zeroLine != 0 {
			return 0, fmt.Errorf("is -1, but line %d has 0: the file mixes 0/1 and -1/1 labels", lp.zeroLine)
		}
		if lp.fracLine != 0 {
			return 0, fmt.Errorf("is -1, but line %d has a score or a count of trials: scores are in [0, 1] and wrong answers 0", lp.fracLine)
		}
	}
	return 0, nil
}

// label parses one cell value and turns failures into a ParseError.
func (lp *labelParser) label(file string, line int, column string, b []byte) (uint8, error) {
	y, err := lp.parse(b, line)
	if err != nil {
		return 0, &ParseError{File: file, Line: line, Column: column, Msg: fmt.Sprintf("%q %s", model.Clip(string(b)), err.Error())}
	}
	if y == labelBad {
		return 0, &ParseError{File: file, Line: line, Column: column, Msg: lp.badLabel(b)}
	}
	return y, nil
}

// badLabel says why b is not a label, with the flag that reads a fraction.
func (lp *labelParser) badLabel(b []byte) string {
	q := model.Clip(string(b))
	v, ok := parseFloatLabel(bytes.TrimSpace(b))
	switch {
	case ok && v > 0 && v < 1:
		return fmt.Sprintf("%q is not a 0/1 label (for graded scores in [0, 1] use --graded)", q)
	case lp.graded:
		return fmt.Sprintf("%q is not a 0/1 label, a score in [0, 1] or k/n", q)
	}
	return fmt.Sprintf("%q is not a 0/1 label", q)
}

func parseFloatLabel(b []byte) (float64, bool) {
	// Only plain decimals such as 1.00 or -1.0, not 1e0 or 0x1.
	if !isDecimal(string(b)) {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(b), 64)
	return v, err == nil
}

func isDecimal(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == '-' || s[0] == '+' {
		s = s[1:]
	}
	dot, digits := false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !dot:
			dot = true
		default:
			return false
		}
	}
	return digits > 0
}

// nameTable maps names to dense indices in order of first appearance.
type nameTable struct {
	index map[string]int32
	list  []string
}

// checkUTF8 refuses model names and item ids that are not UTF-8 text:
// written to a manifest or a CSV they would turn into U+FFFD and no longer
// match the file they came from.
func checkUTF8(path string, r *model.Responses) error {
	for _, l := range []struct {
		kind  string
		names []string
	}{{"model name", r.Models}, {"item id", r.Items}} {
		for _, n := range l.names {
			if !utf8.ValidString(n) {
				return fmt.Errorf("%s: %s %q is not valid UTF-8 (re-encode the file as UTF-8)", path, l.kind, model.Clip(n))
			}
		}
	}
	return nil
}

func newNameTable() *nameTable { return &nameTable{index: map[string]int32{}} }

// id returns the index of name, adding it if new; the lookup with a []byte key
// does not allocate.
func (t *nameTable) id(name []byte) int32 {
	if v, ok := t.index[string(name)]; ok {
		return v
	}
	s := string(name)
	v := int32(len(t.list))
	t.index[s] = v
	t.list = append(t.list, s)
	return v
}

// clipJoin joins a header's names with commas for an error message, stopping
// once the text passes model.MaxQuote bytes.
func clipJoin(h []string) string {
	var b strings.Builder
	for i, s := range h {
		if i > 0 {
			b.WriteByte(',')
		}
		if b.Len()+len(s) > model.MaxQuote {
			b.WriteString(model.Clip(s))
			fmt.Fprintf(&b, "… (%d columns)", len(h))
			break
		}
		b.WriteString(s)
	}
	return b.String()
}
