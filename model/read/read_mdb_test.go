package read

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
)

// sameCells fails unless a and b hold the same models, items and cells.
func sameCells(t *testing.T, what string, a, b *model.Responses) {
	t.Helper()
	if !reflect.DeepEqual(a.Models, b.Models) || !reflect.DeepEqual(a.Items, b.Items) ||
		!reflect.DeepEqual(a.Model, b.Model) || !reflect.DeepEqual(a.Item, b.Item) || !reflect.DeepEqual(a.Label, b.Label) ||
		!reflect.DeepEqual(a.Successes, b.Successes) || !reflect.DeepEqual(a.Trials, b.Trials) {
		t.Errorf("%s: not the cells of the long CSV (%d x %d, %d cells; want %d x %d, %d cells)", what,
			a.NumModels(), a.NumItems(), a.Len(), b.NumModels(), b.NumItems(), b.Len())
	}
}

// Each data set of the fixture, given as its folder (or its responses
// file), reads to the cells of the long CSV the generator wrote from the
// same shipped rows: binary as 0/1, ordinal 0..10 as graded x/10, and ten
// binary trials a cell as k of 10.
func TestMDBReadsLikeLongCSV(t *testing.T) {
	for _, c := range []struct {
		data, long, reader string
		graded             bool
	}{
		{"testdata/mdb/swebench", "swebench", "binary", false},
		{"testdata/mdb/swebench/responses.parquet", "swebench", "binary", false},
		{"testdata/mdb-release/swebench.parquet", "swebench", "binary", false},
		{"testdata/mdb/synth_ordinal", "synth_ordinal", "graded", true},
		{"testdata/mdb/synth_ordinal/processed/responses.parquet", "synth_ordinal", "graded", true},
		{"testdata/mdb/synth_trials", "synth_trials", "trials of binary", false},
	} {
		want, _, err := File(filepath.Join("testdata", "mdb-long", c.long+".csv"), Options{Graded: c.graded})
		if err != nil {
			t.Fatal(err)
		}
		got, rep, err := File(c.data, Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.data, err)
		}
		sameCells(t, c.data, got, want)
		if rep.Format != MDBFormat || rep.MDB == nil || len(rep.MDB.Benchmarks) != 1 || rep.MDB.Benchmarks[0].Reader != c.reader {
			t.Errorf("%s: format %q, %+v", c.data, rep.Format, rep.MDB)
		}
		if got.ItemGroup != nil {
			t.Errorf("%s: one benchmark has no item groups", c.data)
		}
	}
}

// Model names come from subjects' display_name, item texts from items'
// content; a released flat file finds its registry beside it.
func TestMDBNamesAndTexts(t *testing.T) {
	for _, p := range []string{"testdata/mdb/swebench", "testdata/mdb-release", "testdata/mdb-release/swebench.parquet"} {
		r, rep, err := File(p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Models[0] != "20231010_rag_claude2" || rep.MDB.Named != 10 || rep.MDB.Renamed != 0 {
			t.Errorf("%s: models %v, named %d", p, r.Models[:2], rep.MDB.Named)
		}
		if len(r.ItemText) != 12 || !strings.HasPrefix(r.ItemText[0], "Modeling's `separability_matrix` does not compute separability correctly") || rep.ItemTexts != 12 || rep.ItemTextColumn != "content" {
			t.Errorf("%s: item text %d %q", p, len(r.ItemText), r.ItemText[0][:min(40, len(r.ItemText[0]))])
		}
	}
	// The ordinal set has no content: no texts.
	r, _, err := File("testdata/mdb/synth_ordinal", Options{})
	if err != nil || r.ItemText != nil {
		t.Errorf("synth_ordinal: %v, texts %v", err, r.ItemText != nil)
	}
}

// A tree of several benchmarks is read one at a time by --benchmark (or by
// its data set's folder), or jointly with all; none named is an error that
// lists them.
func TestMDBSeveralBenchmarks(t *testing.T) {
	_, rep, err := File("testdata/mdb", Options{})
	want := "testdata/mdb: 3 benchmarks: swebench (binary, 120 rows, in testdata/mdb/swebench/responses.parquet); synth_ordinal (ordinal, 120 rows, in testdata/mdb/synth_ordinal/processed/responses.parquet); synth_trials (binary, 1200 rows, in testdata/mdb/synth_trials/responses.parquet); name the benchmarks to read with benchmark (a list, or all: one matrix, items grouped by benchmark), or fit them one by one with one --data per data set (e.g. --data testdata/mdb/swebench)"
	var fe *model.FieldError
	if err == nil || err.Error() != want || !errors.As(err, &fe) || fe.Field != "Benchmark" {
		t.Errorf("got %v\nwant %s", err, want)
	}
	if rep.MDB == nil || len(rep.MDB.Benchmarks) != 3 {
		t.Errorf("the report lists what was found: %+v", rep.MDB)
	}
	one, _, err := File("testdata/mdb", Options{Benchmark: []string{"synth_ordinal"}})
	if err != nil {
		t.Fatal(err)
	}
	byDir, _, err := File("testdata/mdb/synth_ordinal", Options{})
	if err != nil {
		t.Fatal(err)
	}
	sameCells(t, "--benchmark synth_ordinal", one, byDir)
	all, rep, err := File("testdata/mdb", Options{Benchmark: []string{"all"}})
	if err != nil {
		t.Fatal(err)
	}
	// 10 SWE-bench systems and 10 synthetic models (shared by the two
	// synthetic sets), 3 x 12 items grouped by benchmark.
	if all.NumModels() != 20 || all.NumItems() != 36 || all.Len() != 360 || len(all.ItemGroup) != 36 ||
		all.ItemGroup[0] != "swebench" || all.ItemGroup[35] != "synth_trials" || len(rep.MDB.Benchmarks) != 3 {
		t.Errorf("all: %d x %d, %d cells, groups %v", all.NumModels(), all.NumItems(), all.Len(), all.ItemGroup)
	}
	_, _, err = File("testdata/mdb", Options{Benchmark: []string{"mmlu"}})
	if err == nil || !strings.Contains(err.Error(), `benchmark "mmlu" is none of them; the benchmarks are swebench (binary, 120 rows`) {
		t.Errorf("unknown benchmark: %v", err)
	}
}

// --format measurement-db reads a tree; auto leaves a long Parquet file
// named responses.parquet, without the schema's columns, to the long reader.
func TestMDBFormatGiven(t *testing.T) {
	r, rep, err := File("testdata/mdb/swebench", Options{Format: MDBFormat})
	if err != nil || rep.Why != "given by --format" || r.NumModels() != 10 {
		t.Fatalf("%v %q", err, rep.Why)
	}
	// A long Parquet file named responses.parquet without the schema's
	// columns is still read as long.
	dir := t.TempDir()
	p := filepath.Join(dir, "responses.parquet")
	lr, _, err := File("testdata/mdb-long/swebench.csv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteLongParquet(p, lr); err != nil {
		t.Fatal(err)
	}
	back, rep, err := File(p, Options{})
	if err != nil || rep.Format != "long" {
		t.Fatalf("%v %q", err, rep.Format)
	}
	sameCells(t, "long responses.parquet", back, lr)
}

// A released tree keeps each benchmark in its folder with its own tables:
// <benchmark>/response.parquet, or formatted_tables/ (schema 3).
func TestMDBPerDatasetTables(t *testing.T) {
	dir := t.TempDir()
	copyFile := func(src, dst string) {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ src, dst string }{
		{"swebench/responses.parquet", "swebench/response.parquet"},
		{"synth_trials/responses.parquet", "synth_trials/formatted_tables/responses.parquet"},
	} {
		copyFile(filepath.Join("testdata", "mdb", c.src), filepath.Join(dir, c.dst))
		for _, tab := range []string{"subjects", "items", "benchmarks"} {
			copyFile(filepath.Join("testdata", "mdb", "_registry", tab+".parquet"), filepath.Join(dir, filepath.Dir(c.dst), tab+".parquet"))
		}
	}
	for _, c := range []struct{ data, tree string }{{"swebench", "swebench"}, {"synth_trials", "synth_trials"}, {"synth_trials/formatted_tables/responses.parquet", "synth_trials"}} {
		got, rep, err := File(filepath.Join(dir, c.data), Options{})
		if err != nil {
			t.Fatal(err)
		}
		want, _, err := File(filepath.Join("testdata", "mdb", c.tree), Options{})
		if err != nil {
			t.Fatal(err)
		}
		sameCells(t, c.data, got, want)
		if !reflect.DeepEqual(got.ItemText, want.ItemText) || rep.MDB.Named != 10 {
			t.Errorf("%s: texts or names differ (%d named)", c.data, rep.MDB.Named)
		}
	}
	all, rep, err := File(dir, Options{Benchmark: []string{"all"}})
	if err != nil || all.NumModels() != 20 || all.NumItems() != 24 || len(rep.MDB.Benchmarks) != 2 || rep.Format != MDBFormat {
		t.Errorf("the released tree: %v, %+v", err, rep.MDB)
	}
}

// A responses file with no registry in reach reads with the subjects' and
// items' ids as names and its responses as binary: 0/1 responses read,
// others are an error that says why.
func TestMDBWithoutRegistry(t *testing.T) {
	dir := t.TempDir()
	for src, dst := range map[string]string{"swebench/responses.parquet": "sw.parquet", "synth_ordinal/processed/responses.parquet": "x/responses.parquet"} {
		b, err := os.ReadFile(filepath.Join("testdata", "mdb", src))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, dst)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, dst), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, rep, err := File(filepath.Join(dir, "sw.parquet"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Format != MDBFormat || r.Models[0] != hash16("20231010_rag_claude2") || r.ItemText != nil || r.Len() != 120 {
		t.Errorf("format %s, models %v, texts %v", rep.Format, r.Models[:1], r.ItemText != nil)
	}
	p := filepath.Join(dir, "x", "responses.parquet")
	_, _, err = File(p, Options{})
	want := p + `: row group 1, row 3: column "response": 2 is not 0 or 1: benchmark "synth_ordinal" has no response_type (no benchmarks.parquet names it), so its responses are read as binary; give the tree with its _registry/ (see the table in docs/data.md)`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}
