// Package mdb reads measurement-db (aims-foundations/measurement-db), the
// long-form schema of evaluation data that torch_measure loads its data
// sets from: a registry of subjects, items and benchmarks
// (_registry/*.parquet) and per data set a responses.parquet of one row per
// (subject, item, trial, test condition). It reads a local copy as it is,
// never downloading: a tree, a data set folder, one responses file, or a
// released copy of flat <dataset>.parquet files beside benchmarks.parquet.
// Each benchmark's responses become scores in [0, 1] by its response_type
// and response_scale (the table of docs/data.md).
package mdb

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/limits"
	"github.com/jeirt/jeirt/model/read/internal/cell"
	"github.com/jeirt/jeirt/model/read/internal/parquet"
)

// Format is the format name of measurement-db trees (read.Options.Format).
const Format = "measurement-db"

// Summary says what a measurement-db tree held and what was read of it.
type Summary struct {
	// Registry are the folders whose subjects, items and benchmarks tables
	// were read.
	Registry []string `json:"registry"`
	// Benchmarks are every benchmark with responses under the path, read or not.
	Benchmarks []Benchmark `json:"benchmarks"`
	// Conditions are the test conditions of the benchmarks read ("" for
	// none given), and Condition the one read.
	Conditions []string `json:"conditions"`
	Condition  string   `json:"condition,omitempty"`
	// Subjects named by their display_name, and those of them given
	// their subject_id too because another subject has the same name.
	Named   int `json:"subjects_named"`
	Renamed int `json:"subjects_renamed"`
	// Missing are responses read as missing: null, or a sentinel the scale
	// calls not applicable.
	Missing int `json:"responses_missing"`
	// Skipped are Parquet files beside the registry that hold no responses.
	Skipped []string `json:"skipped,omitempty"`
}

// Benchmark is one benchmark of a measurement-db tree.
type Benchmark struct {
	ID           string `json:"benchmark_id"`
	Name         string `json:"name"`
	Dataset      string `json:"dataset"`
	File         string `json:"file"`
	ResponseType string `json:"response_type"`
	Scale        string `json:"response_scale"`
	Rows         int    `json:"rows"`
	Read         bool   `json:"read"`
	// Reader (binary, graded or trials: several trials a cell) and How
	// say how its responses became scores; empty when it was not read.
	Reader string `json:"reader,omitempty"`
	How    string `json:"how,omitempty"`
}

// String renders what was found as a few lines for people.
func (m *Summary) String() string {
	var b strings.Builder
	reg := strings.Join(m.Registry, ", ")
	if reg == "" {
		reg = "none found (no _registry/ or benchmarks.parquet): subject and item ids as names, response types unknown"
	}
	fmt.Fprintf(&b, "measurement-db: %d benchmark(s); registry %s\n", len(m.Benchmarks), reg)
	for _, bm := range m.Benchmarks {
		state := "not read"
		if bm.Read {
			state = bm.Reader + ": " + bm.How
		}
		fmt.Fprintf(&b, "  %s (%s) in %s: %s, scale %s, %d rows; %s\n", bm.ID, orNone(bm.Name), bm.File, orUnknown(bm.ResponseType), orNone(bm.Scale), bm.Rows, state)
	}
	if len(m.Conditions) > 1 || m.Condition != "" {
		fmt.Fprintf(&b, "  test conditions: %s; read %s\n", strings.Join(quoteConditions(m.Conditions), ", "), quoteCondition(m.Condition))
	}
	if m.Named > 0 || m.Missing > 0 {
		fmt.Fprintf(&b, "  models named by display_name: %d (%d given their subject_id for a shared name); responses missing (null or not applicable): %d\n", m.Named, m.Renamed, m.Missing)
	}
	for _, s := range m.Skipped {
		fmt.Fprintf(&b, "  skipped %s: no subject_id, item_id and response columns\n", s)
	}
	return b.String()
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// orUnknown is a response type, "(unknown)" when the registry gives none
// (read as binary).
func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

func quoteCondition(c string) string {
	if c == "" {
		return "(none)"
	}
	return fmt.Sprintf("%q", c)
}

func quoteConditions(cs []string) []string {
	out := make([]string, len(cs))
	for k, c := range cs {
		out[k] = quoteCondition(c)
	}
	return out
}

// mdbRows are the response rows read, as indexes into their name tables.
type mdbRows struct {
	subj, item, bench, cond, file []int32
	row                           []int64
	group                         []int32
	resp                          []float64 // NaN: null
	subjects, items, benches      *cell.Names
	conds                         *cell.Names
	chosen                        int32 // the condition read, -1 for all
}

// Options choose what is read of a tree.
type Options struct {
	// Benchmark names the benchmarks read (benchmark_id, name or data set;
	// "all" for every one, as one matrix with items grouped by benchmark);
	// nil reads the only one, and is an error listing them when there are
	// several.
	Benchmark []string
	// Condition is the test_condition read ("(none)" for rows without
	// one); "" reads the only one, and is an error listing them when there
	// are several.
	Condition string
	// ScoreMap is the stated mapping of a continuous_unbounded response to
	// a score: "LO:HI" (linear onto [0, 1]) or a threshold ">=T", ">T",
	// "<=T", "<T".
	ScoreMap string
}

// Result is what Read read: the summary, the rows, the duplicate rows of
// the cells (their trials), and the items' texts.
type Result struct {
	Summary   *Summary
	Rows      int
	Tally     cell.Tally
	ItemsPath string // the items table the texts came from
	ItemTexts int    // items given a text (content)
}

// Read reads a measurement-db tree, data set folder or responses file
// (Is): the responses of the benchmarks and condition chosen, scored by
// each benchmark's response type (docs/data.md), repeated rows of a cell
// its trials (k of n), models named by display_name and items given their
// content as text. The result's Summary is set when the tree was found,
// even on an error.
func Read(path string, opt Options) (*model.Responses, *Result, error) {
	res := &Result{}
	tree, err := findMDB(path)
	if err != nil {
		return nil, res, err
	}
	m := &Summary{Registry: tree.registry, Skipped: tree.skipped}
	res.Summary = m
	if len(tree.files) == 0 {
		return nil, res, fmt.Errorf("%s: no measurement-db responses (want {dataset}/responses.parquet, {dataset}/processed/responses.parquet, or <dataset>.parquet beside benchmarks.parquet)", path)
	}
	reg, err := readMDBRegistry(tree.registry)
	if err != nil {
		return nil, res, err
	}
	rows := &mdbRows{subjects: cell.NewNames(), items: cell.NewNames(), benches: cell.NewNames(), conds: cell.NewNames()}
	benchFile := map[int32]int{}
	for k, f := range tree.files {
		if err := rows.read(f, int32(k), reg); err != nil {
			return nil, res, err
		}
	}
	res.Rows = len(rows.resp)
	counts := make([]int, len(rows.benches.List))
	for r, b := range rows.bench {
		counts[b]++
		if _, ok := benchFile[b]; !ok {
			benchFile[b] = int(rows.file[r])
		}
	}
	for b, id := range rows.benches.List {
		info := reg.benchmarks[id]
		f := tree.files[benchFile[int32(b)]]
		m.Benchmarks = append(m.Benchmarks, Benchmark{ID: id, Name: info.name, Dataset: f.dataset, File: f.path,
			ResponseType: info.responseType, Scale: info.scale, Rows: counts[b]})
	}
	keep, err := m.choose(path, opt.Benchmark)
	if err != nil {
		return nil, res, err
	}
	if err := rows.chooseCondition(path, opt.Condition, keep, m); err != nil {
		return nil, res, err
	}
	r, err := rows.responses(tree, reg, keep, opt, m, res)
	if err != nil {
		return nil, res, err
	}
	if r.Len() == 0 {
		return nil, res, fmt.Errorf("%s: no cells (every response read is missing)", path)
	}
	return r, res, nil
}

// read appends the rows of one responses file.
func (rs *mdbRows) read(f mdbFile, k int32, reg *mdbRegistry) error {
	t, err := parquet.OpenTable(f.path)
	if err != nil {
		return err
	}
	defer t.Close()
	for _, c := range []string{"subject_id", "item_id", "response"} {
		if !t.Has(c) {
			return &cell.ParseError{File: f.path, Msg: fmt.Sprintf("no %s column: a measurement-db responses table has subject_id, item_id, benchmark_id, trial, test_condition and response; columns are %s", c, cell.ClipJoin(t.Columns))}
		}
	}
	if t.Rows > 1<<31-1 {
		return &cell.ParseError{File: f.path, Msg: fmt.Sprintf("%d rows is more than jeirt can hold", t.Rows)}
	}
	cols := []string{"subject_id", "item_id", "response", "benchmark_id", "test_condition"}
	errAt := func(g int, row int64, col, format string, a ...any) error {
		return &cell.ParseError{File: f.path, RowGroup: g + 1, Line: int(row + 1), Column: col, Msg: fmt.Sprintf(format, a...)}
	}
	return t.Each(cols, func(g int, row int64, v []parquet.Value) error {
		var ids [2]int32
		for c := range 2 {
			s := valueText(v[c])
			if s == "" {
				return errAt(g, row, cols[c], "empty %s", cols[c])
			}
			ids[c] = rs.names(c).ID([]byte(s))
		}
		y, ok := parquet.Number(v[2])
		switch {
		case ok && (math.IsNaN(y) || math.IsInf(y, 0)):
			return errAt(g, row, "response", "%v is not a finite number: a response is a finite grade, or null for an ungraded attempt", y)
		case !ok && !v[2].IsNull():
			return errAt(g, row, "response", "%q is not a number: a measurement-db response is a float64 grade (or null)", limits.Clip(parquet.Text(v[2])))
		case !ok:
			y = math.NaN()
		}
		bench := valueText(v[3])
		if bench == "" {
			bench = reg.itemBenchmark[valueText(v[1])]
		}
		if bench == "" {
			bench = f.dataset
		}
		rs.subj, rs.item, rs.resp = append(rs.subj, ids[0]), append(rs.item, ids[1]), append(rs.resp, y)
		rs.bench = append(rs.bench, rs.benches.ID([]byte(bench)))
		rs.cond = append(rs.cond, rs.conds.ID([]byte(valueText(v[4]))))
		rs.file, rs.row, rs.group = append(rs.file, k), append(rs.row, row), append(rs.group, int32(g))
		return nil
	})
}

func (rs *mdbRows) names(c int) *cell.Names {
	if c == 0 {
		return rs.subjects
	}
	return rs.items
}

// valueText is a string (or integer) value as text, "" for null.
func valueText(v parquet.Value) string { return parquet.Text(v) }

// dataPath is what --data names to read the benchmark's data set alone:
// its folder in a tree, its file in a released copy.
func (b Benchmark) dataPath() string {
	if datasetName(b.File) == b.Dataset {
		d := filepath.Dir(b.File)
		if base := filepath.Base(d); base == "processed" || base == "formatted_tables" {
			d = filepath.Dir(d)
		}
		return d
	}
	return b.File
}

// choose marks the benchmarks read: those named (by benchmark_id, name or
// data set; "all" for every one), or the only one.
func (m *Summary) choose(path string, names []string) ([]bool, error) {
	keep := make([]bool, len(m.Benchmarks))
	list := func() string {
		var s []string
		for _, b := range m.Benchmarks {
			s = append(s, fmt.Sprintf("%s (%s, %d rows, in %s)", b.ID, orUnknown(b.ResponseType), b.Rows, b.File))
		}
		return strings.Join(s, "; ")
	}
	switch {
	case len(names) == 0 && len(m.Benchmarks) == 1:
		keep[0] = true
	case len(names) == 0:
		fe := model.FieldErrorf("Benchmark", "name the benchmarks to read with {Benchmark} (a list, or all: one matrix, items grouped by benchmark), or fit them one by one with one --data per data set (e.g. --data %s)", m.Benchmarks[0].dataPath())
		return nil, &cell.ParseError{File: path, Err: fe, Msg: fmt.Sprintf("%d benchmarks: %s; %s", len(m.Benchmarks), list(), fe)}
	case len(names) == 1 && names[0] == "all":
		for k := range keep {
			keep[k] = true
		}
	default:
		for _, n := range names {
			found := false
			for k, b := range m.Benchmarks {
				if n == b.ID || n == b.Name || n == b.Dataset {
					keep[k], found = true, true
				}
			}
			if !found {
				fe := model.FieldErrorf("Benchmark", "{Benchmark} %q is none of them", limits.Clip(n))
				return nil, &cell.ParseError{File: path, Err: fe, Msg: fmt.Sprintf("%s; the benchmarks are %s", fe, list())}
			}
		}
	}
	for k := range keep {
		m.Benchmarks[k].Read = keep[k]
	}
	return keep, nil
}

// chooseCondition keeps the rows of one test condition: the one named, or
// the only one of the benchmarks read.
func (rs *mdbRows) chooseCondition(path, want string, keep []bool, m *Summary) error {
	none := want == "(none)"
	if none {
		want = ""
	}
	seen := make([]bool, len(rs.conds.List))
	for r, b := range rs.bench {
		if keep[b] {
			seen[rs.cond[r]] = true
		}
	}
	for c, s := range seen {
		if s {
			m.Conditions = append(m.Conditions, rs.conds.List[c])
		}
	}
	slices.Sort(m.Conditions)
	switch {
	case (want != "" || none) && !slices.Contains(m.Conditions, want):
		fe := model.FieldErrorf("Condition", "{Condition} %q is not a test_condition of the benchmarks read", limits.Clip(want))
		return &cell.ParseError{File: path, Column: "test_condition", Err: fe, Msg: fmt.Sprintf("%s; they have %s", fe, strings.Join(quoteConditions(m.Conditions), ", "))}
	case want == "" && !none && len(m.Conditions) > 1:
		fe := model.FieldErrorf("Condition", "name one with {Condition}")
		return &cell.ParseError{File: path, Column: "test_condition", Err: fe, Msg: fmt.Sprintf("%d test conditions: %s; %s (the responses under different conditions are different measurements)", len(m.Conditions), strings.Join(quoteConditions(m.Conditions), ", "), fe)}
	}
	rs.chosen = -1
	if want != "" || none || len(m.Conditions) == 1 {
		if want == "" && !none {
			want = m.Conditions[0]
		}
		rs.chosen = rs.conds.ID([]byte(want))
	}
	if want != "" || none {
		m.Condition = want
	}
	return nil
}
