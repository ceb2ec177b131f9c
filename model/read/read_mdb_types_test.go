package read

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
)

// smallTree writes a tree of one benchmark of the given response type and
// scale, two subjects ("A" and "B", or two named "A" with shared) and the
// responses resp to items i1, i2, ... (NaN: null) under condition conds[k]
// ("" for none), and returns its folder.
func smallTree(t *testing.T, responseType, scale string, resp []float64, conds []string, shared bool) string {
	dir := t.TempDir()
	tr := &fxTree{}
	tr.benchmarks = []fxBenchmark{{BenchmarkID: "b", Name: "B", ResponseType: responseType, ResponseScale: scale}}
	subj := []string{tr.subject("A"), tr.subject("B")}
	if shared {
		tr.subjects[1].DisplayName = "A"
	}
	var rows []fxResponse
	for k, x := range resp {
		content := fmt.Sprintf("question %d", k/2+1)
		id := fmt.Sprintf("i%d", k/2+1)
		if k%2 == 0 {
			tr.items = append(tr.items, fxItem{ItemID: id, BenchmarkID: "b", RawItemID: id, Content: &content})
		}
		row := fxResponse{SubjectID: subj[k%2], ItemID: id, BenchmarkID: "b", Trial: 1}
		if !math.IsNaN(x) {
			row.Response = &x
		}
		if conds != nil && conds[k] != "" {
			c := conds[k]
			row.TestCondition = &c
		}
		rows = append(rows, row)
	}
	writeTable(t, filepath.Join(dir, "_registry", "subjects.parquet"), tr.subjects)
	writeTable(t, filepath.Join(dir, "_registry", "items.parquet"), tr.items)
	writeTable(t, filepath.Join(dir, "_registry", "benchmarks.parquet"), tr.benchmarks)
	writeTable(t, filepath.Join(dir, "b", "responses.parquet"), rows)
	return dir
}

// scores are the successes of r's cells, model-major (a 0/1 cell its label).
func scores(r *model.Responses) []float64 {
	out := make([]float64, r.Len())
	for c := range out {
		out[c] = float64(r.Label[c])
		if r.Successes != nil {
			out[c] = r.Successes[c]
		}
		if r.Trials != nil {
			out[c] /= float64(r.Trials[c])
		}
	}
	return out
}

// Each response type is scored by the table of docs/data.md.
func TestMDBResponseTypes(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		typ, scale, scoreMap string
		resp                 []float64
		want                 []float64 // the cells' scores: A's then B's
		missing              int
	}{
		{"binary", "{0, 1}", "", []float64{1, 0, 0, 1}, []float64{1, 0, 0, 1}, 0},
		{"error_presence", `{"kind":"discrete","values":[0,1]}`, "", []float64{1, 0, 0, 1}, []float64{0, 1, 1, 0}, 0},
		{"likert_5", `{"kind":"discrete","values":[1,2,3,4,5]}`, "", []float64{1, 5, 3, 4}, []float64{0, 0.5, 1, 0.75}, 0},
		{"likert_5", "", "", []float64{2, 5, 3, 4}, []float64{0.25, 0.5, 1, 0.75}, 0},
		{"likert_10", "{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}", "", []float64{10, 1, 4, 7}, []float64{1, 3.0 / 9, 0, 6.0 / 9}, 0},
		{"ordinal", "{0, 1, 2, 3}; -1 = not applicable", "", []float64{3, -1, 1, 2}, []float64{1, 1.0 / 3, 2.0 / 3}, 1},
		{"ordinal", `{"kind":"discrete","values":[-1,0,1,2],"meanings":{"-1":"not applicable"}}`, "", []float64{2, -1, 0, nan}, []float64{1, 0}, 2},
		{"fraction", "k/N, N varies per item", "", []float64{0.25, 0.5, 1, 0}, []float64{0.25, 1, 0.5, 0}, 0},
		{"win_rate", `{"kind":"interval","min":0,"max":100}`, "", []float64{50, 25, 100, 0}, []float64{0.5, 1, 0.25, 0}, 0},
		{"continuous_bounded", `{"kind":"interval","min":0,"max":10,"direction":"lower_is_better"}`, "", []float64{0, 10, 5, 2.5}, []float64{1, 0.5, 0, 0.75}, 0},
		{"continuous_unbounded", "[-inf, inf]", "0:20", []float64{5, 10, 20, 0}, []float64{0.25, 1, 0.5, 0}, 0},
		{"continuous_unbounded", "", ">=10", []float64{5, 10, 20, 0}, []float64{0, 1, 1, 0}, 0},
	} {
		name := c.typ + " " + c.scale + " " + c.scoreMap
		r, rep, err := File(smallTree(t, c.typ, c.scale, c.resp, nil, false), Options{ScoreMap: c.scoreMap})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got := scores(r); !reflect.DeepEqual(got, c.want) || rep.MDB.Missing != c.missing {
			t.Errorf("%s: scores %v (missing %d), want %v (missing %d)", name, got, rep.MDB.Missing, c.want, c.missing)
		}
	}
}

// A response that does not fit its benchmark's type, or a type that cannot
// be scored, is an error naming the file, the row and the column.
func TestMDBResponseErrors(t *testing.T) {
	for _, c := range []struct {
		typ, scale string
		resp       []float64
		want       string // after the tree's folder
		field      string
	}{
		{"binary", "{0, 1}", []float64{1, 0.5}, `/b/responses.parquet: row group 1, row 2: column "response": 0.5 is not 0 or 1: it does not fit benchmark "b"'s response_type binary (response_scale {0, 1}; see the table in docs/data.md)`, ""},
		{"likert_5", "{1, 2, 3, 4, 5}", []float64{1, 0}, `/b/responses.parquet: row group 1, row 2: column "response": 0 is not one of the levels {1, 2, 3, 4, 5}: it does not fit benchmark "b"'s response_type likert_5 (response_scale {1, 2, 3, 4, 5}; see the table in docs/data.md)`, ""},
		{"fraction", "", []float64{1, 1.5}, `/b/responses.parquet: row group 1, row 2: column "response": 1.5 is outside [0, 1]: it does not fit benchmark "b"'s response_type fraction (response_scale (none); see the table in docs/data.md)`, ""},
		{"continuous_unbounded", "", []float64{1, 2}, `/_registry/benchmarks.parquet: column "response_type": benchmark "b": response_type continuous_unbounded has no bounds to score by: state a mapping with score-map LO:HI (linear onto [0, 1]) or score-map '>=T' (1 at or above T, else 0)`, "ScoreMap"},
		{"ordinal", "", []float64{1, 2}, `/_registry/benchmarks.parquet: column "response_type": benchmark "b": response_type ordinal needs the levels in response_scale (e.g. {0, 1, 2, 3}), and "" names none`, ""},
		{"binary", `{"kind":"discrete","values":[0,1],"direction":"unordered"}`, []float64{1, 0}, `/_registry/benchmarks.parquet: column "response_type": benchmark "b": response_scale "{\"kind\":\"discrete\",\"values\":[0,1],\"direction\":\"unordered\"}" says its values are unordered: no value is a better answer, so there is no score to fit`, ""},
		{"nominal", "{a, b}", []float64{1, 2}, `/_registry/benchmarks.parquet: column "response_type": benchmark "b": response_type nominal is unordered categories: no category is a better answer, so there is no score to fit`, ""},
	} {
		dir := smallTree(t, c.typ, c.scale, c.resp, nil, false)
		_, _, err := File(dir, Options{})
		if err == nil || err.Error() != dir+c.want {
			t.Errorf("%s: got\n%v\nwant\n%s", c.typ, err, dir+c.want)
			continue
		}
		var fe *model.FieldError
		if c.field != "" && (!errors.As(err, &fe) || fe.Field != c.field) {
			t.Errorf("%s: no field error for %s", c.typ, c.field)
		}
	}
}

// Several test conditions need --condition, and the error lists them; the
// condition chosen keeps its rows only.
func TestMDBConditions(t *testing.T) {
	dir := smallTree(t, "binary", "{0, 1}", []float64{1, 0, 0, 1, 1, 1}, []string{"", "", "temperature=0.7", "temperature=0.7", "few-shot=5", "few-shot=5"}, false)
	_, rep, err := File(dir, Options{})
	want := dir + `: column "test_condition": 3 test conditions: (none), "few-shot=5", "temperature=0.7"; name one with condition (the responses under different conditions are different measurements)`
	if err == nil || err.Error() != want || len(rep.MDB.Conditions) != 3 {
		t.Errorf("got %v\nwant %s", err, want)
	}
	for _, c := range []struct {
		cond string
		want []float64
	}{{"(none)", []float64{1, 0}}, {"temperature=0.7", []float64{0, 1}}, {"few-shot=5", []float64{1, 1}}} {
		r, rep, err := File(dir, Options{Condition: c.cond})
		if err != nil {
			t.Fatalf("%s: %v", c.cond, err)
		}
		if want := strings.TrimPrefix(c.cond, "(none)"); !reflect.DeepEqual(scores(r), c.want) || rep.MDB.Condition != want {
			t.Errorf("%s: scores %v, condition %q", c.cond, scores(r), rep.MDB.Condition)
		}
	}
	_, _, err = File(dir, Options{Condition: "temperature=0"})
	if err == nil || !strings.Contains(err.Error(), `condition "temperature=0" is not a test_condition of the benchmarks read; they have (none), "few-shot=5", "temperature=0.7"`) {
		t.Errorf("unknown condition: %v", err)
	}
}

// Two subjects with one display name keep apart: each is given its id.
func TestMDBSharedDisplayName(t *testing.T) {
	r, rep, err := File(smallTree(t, "binary", "{0, 1}", []float64{1, 0}, nil, true), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"A [" + hash16("a") + "]", "A [" + hash16("b") + "]"}; !reflect.DeepEqual(r.Models, want) || rep.MDB.Renamed != 2 {
		t.Errorf("models %v, want %v", r.Models, want)
	}
}

// A mixed benchmark scores each item by the response_scale of its
// grading_criterion (schema 3): {0, 1} binary, other levels ordinal,
// bounds continuous_bounded; an item without one is an error.
func TestMDBMixed(t *testing.T) {
	type item struct {
		ItemID      string `parquet:"item_id"`
		BenchmarkID string `parquet:"benchmark_id"`
		Criterion   string `parquet:"grading_criterion"`
	}
	write := func(items []item) string {
		dir := t.TempDir()
		tr := &fxTree{benchmarks: []fxBenchmark{{BenchmarkID: "m", Name: "M", ResponseType: "mixed", ResponseScale: `{"kind":"mixed"}`}}}
		a, b := tr.subject("A"), tr.subject("B")
		var rows []fxResponse
		for k, x := range []float64{1, 0, 4, 2, 30, 60} {
			x := x
			rows = append(rows, fxResponse{SubjectID: []string{a, b}[k%2], ItemID: items[k/2].ItemID, BenchmarkID: "m", Trial: 1, Response: &x})
		}
		writeTable(t, filepath.Join(dir, "_registry", "subjects.parquet"), tr.subjects)
		writeTable(t, filepath.Join(dir, "_registry", "items.parquet"), items)
		writeTable(t, filepath.Join(dir, "_registry", "benchmarks.parquet"), tr.benchmarks)
		writeTable(t, filepath.Join(dir, "m", "responses.parquet"), rows)
		return dir
	}
	items := []item{
		{"i1", "m", `{"rule":"exact","response_scale":{"kind":"discrete","values":[0,1]}}`},
		{"i2", "m", `{"rule":"rubric","response_scale":{"kind":"discrete","values":[0,1,2,3,4]}}`},
		{"i3", "m", `{"rule":"time","response_scale":{"kind":"interval","min":0,"max":60,"direction":"lower_is_better"}}`},
	}
	r, rep, err := File(write(items), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := scores(r), []float64{1, 1, 0.5, 0, 0.5, 0}; !reflect.DeepEqual(got, want) || rep.MDB.Benchmarks[0].Reader != "mixed" {
		t.Errorf("scores %v, want %v (%+v)", got, want, rep.MDB.Benchmarks[0])
	}
	// An item scale without bounds needs a stated mapping, and says so.
	items[2].Criterion = `{"rule":"time","response_scale":{"kind":"interval","min":0,"max":null}}`
	dir0 := write(items)
	_, _, err = File(dir0, Options{})
	if want := dir0 + `/_registry/items.parquet: column "grading_criterion": item "i3" of mixed benchmark "m": response_type continuous_unbounded has no bounds to score by: state a mapping with score-map LO:HI (linear onto [0, 1]) or score-map '>=T' (1 at or above T, else 0)`; err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	items[1].Criterion = `{"rule":"rubric"}`
	dir := write(items)
	_, _, err = File(dir, Options{})
	if want := dir + `/_registry/items.parquet: column "grading_criterion": item "i2" of mixed benchmark "m" gives no response_scale`; err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

// A scale given with no range (open or equal bounds) is an error for the
// types scored by their range, never a default range.
func TestMDBScaleWithoutRange(t *testing.T) {
	dir := smallTree(t, "continuous_bounded", `{"kind":"interval","min":0,"max":null}`, []float64{1, 2}, nil, false)
	_, _, err := File(dir, Options{})
	want := dir + `/_registry/benchmarks.parquet: column "response_type": benchmark "b": response_scale "{\"kind\":\"interval\",\"min\":0,\"max\":null}" gives no range to score continuous_bounded by (its bounds are open or equal)`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}
