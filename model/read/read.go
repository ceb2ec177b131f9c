// Package read reads item-level response matrices (long, wide, item-major
// wide, py-irt JSONL and response-pattern tables, as CSV, TSV, JSONL or
// Parquet, gzip transparent), the logs of evaluation tools (package
// harness) and measurement-db trees (package mdb), into model.Responses,
// with errors that name the
// file, line and field, an optional binary cache, item-text tables and a
// column-by-name CSV row reader.
package read

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/limits"
	"github.com/jeirt/jeirt/model/machine"
	"github.com/jeirt/jeirt/model/progress"
	"github.com/jeirt/jeirt/model/read/harness"
	"github.com/jeirt/jeirt/model/read/internal/cell"
	"github.com/jeirt/jeirt/model/read/internal/parquet"
	"github.com/jeirt/jeirt/model/read/mdb"
)

// Options says how to read a response file. The zero value reads any
// supported format, decided from the header, and resolves duplicate rows by
// majority.
type Options struct {
	// Format is auto (the default), long, wide, wide-items, pyirt or
	// patterns, measurement-db (a tree of its Parquet tables, package mdb),
	// or the logs of an evaluation tool: lm-eval, helm, inspect or eee (auto
	// recognises both, and reads a folder as a tree of them).
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
	// Columns names the columns of a long text file whose header jeirt
	// does not know, "model=Model Name,item=Question,label=Score" (roles:
	// ColumnRoles); the roles not given are found by name as usual.
	Columns string
	// Delimiter separates the fields of a text file: "" (a comma; a tab for
	// a .tsv file or a header with tabs and no commas; a semicolon for a
	// header with semicolons and neither), ",", ";", "|" or "tab".
	Delimiter string

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
	// Metric, Filter and ModelNames choose what is read of evaluation-tool
	// logs (Format lm-eval, helm, inspect or eee, or auto given such a log
	// or a folder of them; package harness): the metrics in order of
	// preference, lm-eval's filter, and a CSV of model names to map
	// (from,to). Their repeated samples (epochs, trials) are always trials
	// of one cell, whatever Duplicates says.
	Metric     []string
	Filter     string
	ModelNames string
	// Benchmark, Condition and ScoreMap choose what is read of a
	// measurement-db tree (Format measurement-db, or auto given one):
	// the benchmarks (benchmark_id, name or data set; "all" reads every
	// one as one matrix, items grouped by benchmark; needed when there are
	// several), the test_condition ("(none)" for rows without one; needed
	// when there are several), and the stated mapping of a
	// continuous_unbounded response to a score: "LO:HI" (linear onto
	// [0, 1]) or a threshold ">=T", ">T", "<=T", "<T".
	Benchmark []string
	Condition string
	ScoreMap  string
	// Progress, when not nil, gets a line every few seconds of a long read
	// of logs.
	Progress progress.Logf

	// Warn receives warnings about the file, one line each (a matrix that
	// looks transposed); they are in Report.Warnings too. Nil is silent.
	Warn progress.Logf
}

// Formats lists the accepted values of Options.Format.
var Formats = []string{"auto", "long", "wide", "wide-items", "pyirt", "patterns", MDBFormat, harness.LMEval, harness.HELM, harness.Inspect, harness.EEE}

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
	// given to Options.Warn), with the settings it suggests named as the
	// command line names them; Warned is the same as a field error, for a
	// caller that names its settings another way (a config's keys).
	Warning string
	Warned  *model.FieldError

	// Logs says what was read of evaluation-tool logs, nil for a response file.
	Logs *harness.Summary
	// MDB says what was found in a measurement-db tree, nil for another input.
	MDB *mdb.Summary
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
	if rep.Logs != nil {
		b.WriteString(rep.Logs.String())
	}
	if rep.MDB != nil {
		b.WriteString(rep.MDB.String())
	}
	if rep.ItemsPath != "" {
		fmt.Fprintf(&b, "item text: %d items from column %s of %s (%d rows for unknown items ignored)\n", rep.ItemTexts, rep.ItemTextColumn, rep.ItemsPath, rep.ItemTextUnknown)
	}
	return b.String()
}

// ParseError reports bad input at a line of a file (a row of a row group
// of a Parquet file), in the form
//
//	data.csv:1042: column "label": "maybe" is not a 0/1 label
//
// Its fields: File; RowGroup (Parquet: the 1-based row group, and Line is
// then the 1-based row of the file); Line (1-based; 0 when the problem is
// the whole file); Column (the column or JSON key at fault, if any); Key
// (Column is a JSON key rather than a CSV column); Msg; Err (the underlying
// error, if any, given by Unwrap).
type ParseError = cell.ParseError

// File reads item-level responses from path in any supported format,
// decompressing gzip transparently, and joins item texts from opt.Items.
// Parquet files are recognised by their magic bytes, whatever their name.
//
// The file is opened once and read through one buffer, so it may be a pipe
// (/dev/stdin, a shell's <(cmd)); a device is refused, and a read blocked
// on a FIFO ends when the run is cancelled (model.OpenInput). A
// measurement-db tree, data set or responses file is read by package mdb
// (Format measurement-db, or auto: mdb.Is; the summary is Report.MDB).
// Another folder, or a log file of an evaluation tool, is read as
// evaluation-tool logs by package harness (Format lm-eval, helm, inspect
// or eee, or auto; the summary is Report.Logs).
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
		return nil, rep, fmt.Errorf("unknown format %q (want %s or %s)", format, strings.Join(Formats[:len(Formats)-1], ", "), Formats[len(Formats)-1])
	}
	if format == MDBFormat || format == "auto" && mdb.Is(path) {
		return readMDB(path, opt, rep)
	}
	if slices.Contains(harness.Tools, format) || format == "auto" && isLogs(path) {
		return readLogs(path, format, opt, rep)
	}
	dup := opt.Duplicates
	if dup == "" {
		dup = "majority"
	}
	if !contains(DuplicatePolicies, dup) {
		return nil, rep, fmt.Errorf("unknown duplicates policy %q (want majority, first, error or trials)", dup)
	}
	lay, err := parseLayout(opt)
	if err != nil {
		return nil, rep, err
	}
	if lay.columns != nil && format != "auto" && format != "long" {
		return nil, rep, model.FieldErrorf("Columns", "{Columns} names the columns of a long file; it cannot go with {Format} %s", format)
	}
	in, err := fileio.OpenInput(path)
	if err != nil {
		return nil, rep, err
	}
	defer in.Close()
	if !in.Regular {
		// A pipe is bounded by what this machine could hold.
		in.Limit(machine.MemoryBudget(0), "a response file from a pipe")
	}
	cache := cacheFor(in, opt)
	var r *model.Responses
	switch {
	case parquet.Is(in):
		if lay.columns != nil || lay.delim != 0 {
			return nil, rep, fmt.Errorf("%s: %w", path, model.FieldErrorf("Columns", "{Columns} and {Delimiter} apply to text files; a Parquet file's columns are found by their names"))
		}
		if format == "pyirt" || format == "patterns" {
			return nil, rep, fmt.Errorf("%s: a Parquet file cannot be read as %s (want long, wide or wide-items)", path, format)
		}
		r, err = readParquet(in, format, dup, opt.Graded, rep)
	case cache == nil:
		r, err = readText(in, format, dup, opt.Graded, lay, rep)
	default:
		r, err = readTextCached(in, cache, format, dup, opt, lay, rep)
	}
	if err != nil {
		return nil, rep, err
	}
	if err := checkUTF8(path, r); err != nil {
		return nil, rep, err
	}
	if fe := transposedWarning(path, r, rep); fe != nil {
		rep.Warned = fe
		rep.Warning = fe.Render(func(f string) string { return "--" + model.FieldName(f) })
		opt.Warn.Printf("warning: %s", rep.Warning)
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
func readText(in *fileio.Input, format, dup string, graded bool, lay textLayout, rep *Report) (*model.Responses, error) {
	var r *model.Responses
	path := in.Path
	br, gz, err := openText(in)
	if err != nil {
		return nil, err
	}
	rep.Gzip = gz
	if br, err = sniffText(path, br); err != nil {
		return nil, err
	}

	s := newCSVScanner(path, br, gz)
	s.layout = lay
	if lay.delim != 0 {
		s.comma = lay.delim
	}
	cells := cell.NewSink(dup == "error")
	s.sink = cells
	if in.Regular && !gz {
		s.size = in.Size
	}
	if format == "auto" && lay.columns != nil {
		// The columns are named: the file is long.
		format, rep.Why = "long", "given by --columns"
		if _, err := s.readHeader(); err != nil {
			return nil, err
		}
	} else if format == "auto" {
		format, rep.Why, err = s.decide()
		if err != nil {
			return nil, err
		}
		s.guessed = rep.Why
	} else {
		rep.Why = "given by --format"
		if format != "pyirt" {
			if _, err := s.readHeader(); err != nil {
				return nil, err
			}
		}
	}
	rep.Format = format
	lp := &cell.Labels{Graded: graded}
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
	if err := rep.finish(cells, r, dup, path); err != nil {
		return nil, err
	}
	return r, nil
}

// finish resolves the duplicate cells of r held by cells by the policy dup
// (cell.Sink.Finish), and adds what the sink counted to rep.
func (rep *Report) finish(cells *cell.Sink, r *model.Responses, dup, path string) error {
	t, err := cells.Finish(r, dup, path)
	rep.Blank += t.Blank
	rep.DuplicateCells += t.DuplicateCells
	rep.DuplicateRows += t.DuplicateRows
	rep.Conflicts += t.Conflicts
	rep.TiesDropped += t.TiesDropped
	return err
}

// orientUnnamed settles a matrix whose first column is an unnamed index (as
// pandas writes it), read with rows as items: models go on the shorter side,
// since benchmarks have more items than models. A matrix with fewer rows than
// columns is turned so its rows are the models; a square one keeps rows as
// items. --format wide or wide-items overrides the rule.
func orientUnnamed(r *model.Responses, cells *cell.Sink, rep *Report) {
	rows, cols := len(r.Items), len(r.Models)
	if rows < cols {
		r.Models, r.Items = r.Items, r.Models
		cells.Transpose()
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
				return fmt.Errorf("%s: %s %q is not valid UTF-8 (re-encode the file as UTF-8)", path, l.kind, limits.Clip(n))
			}
		}
	}
	return nil
}
