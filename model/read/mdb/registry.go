package mdb

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/limits"
	"github.com/jeirt/jeirt/model/read/internal/cell"
	"github.com/jeirt/jeirt/model/read/internal/parquet"
)

// mdbRegistry is what was read of the registry tables: benchmarks by id,
// subjects' display names, and the benchmark of each item (the items'
// texts are read later, for the items read only).
type mdbRegistry struct {
	benchmarks    map[string]mdbBenchInfo
	display       map[string]string
	itemBenchmark map[string]string
	itemFiles     []string
}

type mdbBenchInfo struct{ name, responseType, scale, file string }

// readMDBRegistry reads the subjects and benchmarks tables of the registry
// folders, and the items tables' benchmark_id column.
func readMDBRegistry(dirs []string) (*mdbRegistry, error) {
	reg := &mdbRegistry{benchmarks: map[string]mdbBenchInfo{}, display: map[string]string{}, itemBenchmark: map[string]string{}}
	for _, d := range dirs {
		if p := filepath.Join(d, "benchmarks.parquet"); isFile(p) {
			err := eachRow(p, []string{"benchmark_id", "name", "response_type", "response_scale"}, 1, func(v []string) {
				reg.benchmarks[v[0]] = mdbBenchInfo{name: v[1], responseType: v[2], scale: v[3], file: p}
			})
			if err != nil {
				return nil, err
			}
		}
		if p := filepath.Join(d, "subjects.parquet"); isFile(p) {
			err := eachRow(p, []string{"subject_id", "display_name"}, 1, func(v []string) {
				if v[1] != "" {
					reg.display[v[0]] = v[1]
				}
			})
			if err != nil {
				return nil, err
			}
		}
		if p := filepath.Join(d, "items.parquet"); isFile(p) {
			reg.itemFiles = append(reg.itemFiles, p)
			err := eachRow(p, []string{"item_id", "benchmark_id"}, 1, func(v []string) {
				if v[1] != "" {
					reg.itemBenchmark[v[0]] = v[1]
				}
			})
			if err != nil {
				return nil, err
			}
		}
	}
	return reg, nil
}

// eachRow calls fn with the text of the columns names of every row of the
// table at path; the first need of them are required, and a row with an
// empty first column is an error.
func eachRow(path string, names []string, need int, fn func(v []string)) error {
	t, err := parquet.OpenTable(path)
	if err != nil {
		return err
	}
	defer t.Close()
	for _, n := range names[:need] {
		if !t.Has(n) {
			return &cell.ParseError{File: path, Msg: fmt.Sprintf("no %s column; columns are %s", n, cell.ClipJoin(t.Columns))}
		}
	}
	s := make([]string, len(names))
	return t.Each(names, func(g int, row int64, v []parquet.Value) error {
		for k := range v {
			s[k] = valueText(v[k])
		}
		if s[0] == "" {
			return &cell.ParseError{File: path, RowGroup: g + 1, Line: int(row + 1), Column: names[0], Msg: "empty " + names[0]}
		}
		fn(s)
		return nil
	})
}

// itemTexts reads the content (and, for mixed benchmarks, the
// grading_criterion) of the items wanted from the items tables.
func (reg *mdbRegistry) itemTexts(want map[string]int) (content, criterion []string, file string, err error) {
	content, criterion = make([]string, len(want)), make([]string, len(want))
	for _, p := range reg.itemFiles {
		err := eachRow(p, []string{"item_id", "content", "grading_criterion"}, 1, func(v []string) {
			if j, ok := want[v[0]]; ok {
				if content[j] == "" {
					content[j], file = v[1], p
				}
				if criterion[j] == "" {
					criterion[j] = v[2]
				}
			}
		})
		if err != nil {
			return nil, nil, "", err
		}
	}
	return content, criterion, file, nil
}

// modelNames are the subjects' display names, a name shared by several
// subjects followed by the subject_id ("GPT-4 [1a2b...]"), and a subject
// the registry does not name by its subject_id.
func (reg *mdbRegistry) modelNames(ids []string, m *Summary) []string {
	count := map[string]int{}
	for _, id := range ids {
		if n, ok := reg.display[id]; ok {
			count[n]++
		}
	}
	out := make([]string, len(ids))
	for k, id := range ids {
		n, ok := reg.display[id]
		switch {
		case !ok:
			out[k] = id
		case count[n] > 1:
			out[k] = n + " [" + id + "]"
			m.Named++
			m.Renamed++
		default:
			out[k] = n
			m.Named++
		}
	}
	return out
}

// responses scores the rows of the benchmarks kept (and the condition
// chosen) into a matrix: models in order of first appearance, items too,
// repeated rows of a cell its trials (k of n).
func (rs *mdbRows) responses(tree *mdbTree, reg *mdbRegistry, keep []bool, opt Options, m *Summary, res *Result) (*model.Responses, error) {
	cond := rs.chosen
	use := func(r int) bool { return keep[rs.bench[r]] && (cond < 0 || rs.cond[r] == cond) }
	// The models and items read, in order of first appearance.
	subj, item := make([]int32, len(rs.subjects.List)), make([]int32, len(rs.items.List))
	for k := range subj {
		subj[k] = -1
	}
	for k := range item {
		item[k] = -1
	}
	var subjIDs, itemIDs []string
	itemBench := []int32{}
	want := map[string]int{}
	for r := range rs.resp {
		if !use(r) {
			continue
		}
		if s := rs.subj[r]; subj[s] < 0 {
			subj[s] = int32(len(subjIDs))
			subjIDs = append(subjIDs, rs.subjects.List[s])
		}
		if i := rs.item[r]; item[i] < 0 {
			item[i] = int32(len(itemIDs))
			want[rs.items.List[i]] = len(itemIDs)
			itemIDs = append(itemIDs, rs.items.List[i])
			itemBench = append(itemBench, rs.bench[r])
		}
	}
	content, criterion, itemsFile, err := reg.itemTexts(want)
	if err != nil {
		return nil, err
	}
	// How each benchmark (or item of a mixed one) is scored.
	scorers := map[int32]mdbScore{}
	for b, k := range keep {
		if !k {
			continue
		}
		bm := &m.Benchmarks[b]
		if bm.ResponseType == "mixed" {
			bm.Reader, bm.How = "mixed", "by each item's response_scale in grading_criterion"
			continue
		}
		sc, err := scorer(bm.ResponseType, parseScale(bm.Scale), opt.ScoreMap)
		if err != nil {
			return nil, mdbTypeError(bm, err, reg)
		}
		scorers[int32(b)] = sc
		bm.Reader, bm.How = sc.Reader, sc.How
	}
	itemScorer := func(j int32) (mdbScore, error) {
		b := itemBench[j]
		if sc, ok := scorers[b]; ok {
			return sc, nil
		}
		s := mixedScale(criterion[j])
		if s == "" {
			return mdbScore{}, &cell.ParseError{File: itemsFile, Column: "grading_criterion", Msg: fmt.Sprintf("item %q of mixed benchmark %q gives no response_scale", limits.Clip(itemIDs[j]), m.Benchmarks[b].ID)}
		}
		sc := parseScale(s)
		out, err := scorer(mixedType(sc), sc, opt.ScoreMap)
		if err != nil {
			return out, &cell.ParseError{File: itemsFile, Column: "grading_criterion", Err: err, Msg: fmt.Sprintf("item %q of mixed benchmark %q: %v", limits.Clip(itemIDs[j]), m.Benchmarks[b].ID, err)}
		}
		return out, nil
	}
	byItem := map[int32]mdbScore{}
	sink := cell.NewSink(false)
	for r, x := range rs.resp {
		if !use(r) {
			continue
		}
		j := item[rs.item[r]]
		sc, ok := byItem[j]
		if !ok {
			if sc, err = itemScorer(j); err != nil {
				return nil, err
			}
			byItem[j] = sc
		}
		f := tree.files[rs.file[r]].path
		at := &cell.ParseError{File: f, RowGroup: int(rs.group[r]) + 1, Line: int(rs.row[r]) + 1, Column: "response"}
		if x != x { // null: an ungraded attempt
			m.Missing++
			sink.Blank++
			continue
		}
		y, missing, why := sc.score(x)
		if why != "" {
			bm := m.Benchmarks[rs.bench[r]]
			at.Msg = fmt.Sprintf("%s %s: it does not fit benchmark %q's response_type %s (response_scale %s; see the table in docs/data.md)", fmtNum(x), why, bm.ID, bm.ResponseType, orNone(bm.Scale))
			if bm.ResponseType == "" {
				at.Msg = fmt.Sprintf("%s %s: benchmark %q has no response_type (no benchmarks.parquet names it), so its responses are read as binary; give the tree with its _registry/ (see the table in docs/data.md)", fmtNum(x), why, bm.ID)
			}
			return nil, at
		}
		if missing {
			m.Missing++
			sink.Blank++
			continue
		}
		mi, ii := subj[rs.subj[r]], j
		sink.AddCounts(mi, ii, y, 1, int(rs.row[r])+1)
	}
	r := &model.Responses{Models: reg.modelNames(subjIDs, m), Items: itemIDs}
	for _, t := range content {
		if t != "" {
			r.ItemText = content
			res.ItemsPath = itemsFile
			break
		}
	}
	for _, t := range content {
		if t != "" {
			res.ItemTexts++
		}
	}
	read := 0
	for _, k := range keep {
		if k {
			read++
		}
	}
	if read > 1 {
		r.ItemGroup = make([]string, len(itemIDs))
		for j, b := range itemBench {
			r.ItemGroup[j] = m.Benchmarks[b].ID
		}
	}
	t, err := sink.Finish(r, "trials", tree.files[0].path)
	res.Tally = t
	if err != nil {
		return nil, err
	}
	for c, n := range r.Trials {
		if bm := &m.Benchmarks[itemBench[r.Item[c]]]; n > 1 && bm.Reader != "mixed" && !strings.HasPrefix(bm.Reader, "trials") {
			bm.Reader = "trials of " + bm.Reader
		}
	}
	return r, nil
}

// mdbTypeError says that a benchmark's response type cannot be scored,
// naming the registry file and column.
func mdbTypeError(bm *Benchmark, err error, reg *mdbRegistry) error {
	file := reg.benchmarks[bm.ID].file
	if file == "" {
		file = bm.File
	}
	return &cell.ParseError{File: file, Column: "response_type", Err: err, Msg: fmt.Sprintf("benchmark %q: %v", bm.ID, err)}
}
