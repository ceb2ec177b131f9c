package mdb

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jeirt/jeirt/model/read/internal/parquet"
)

// Where a measurement-db tree keeps its tables (its DATA_FORMAT.md and
// parquet_schemas.yaml): a registry, _registry/{subjects,items,
// benchmarks}.parquet, and per data set {dataset}/responses.parquet (or
// processed/responses.parquet, or formatted_tables/ with the data set's own
// registry tables); a released copy keeps flat <dataset>.parquet files
// beside benchmarks.parquet, or <benchmark>/response.parquet.

// mdbRegistryDir is the registry folder of a tree.
const mdbRegistryDir = "_registry"

// mdbTables are the registry tables; with traces and assets they are never
// response files.
var (
	mdbTables    = []string{"subjects.parquet", "items.parquet", "benchmarks.parquet"}
	mdbNotRows   = []string{"subjects.parquet", "items.parquet", "benchmarks.parquet", "traces.parquet", "assets.parquet"}
	mdbResponses = []string{"responses.parquet", "response.parquet", "processed/responses.parquet", "formatted_tables/responses.parquet", "formatted_tables/response.parquet"}
)

// mdbTree is what findMDB found: the folders whose registry tables are read
// and the response files with their data set names.
type mdbTree struct {
	registry []string
	files    []mdbFile
	skipped  []string // Parquet files beside the registry that hold no responses
}

type mdbFile struct{ path, dataset string }

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// hasRegistry says whether dir holds registry tables (benchmarks.parquet).
func hasRegistry(dir string) bool { return isFile(filepath.Join(dir, "benchmarks.parquet")) }

// datasetFile is the responses file of the data set folder dir, "" if none.
func datasetFile(dir string) string {
	for _, c := range mdbResponses {
		if p := filepath.Join(dir, c); isFile(p) {
			return p
		}
	}
	return ""
}

// Is says whether auto should read path as measurement-db: a folder with
// _registry/ or benchmarks.parquet, a data set folder, a folder of data set
// folders (a released tree, each with its tables), or a Parquet file
// named responses.parquet or beside (or below) a registry; a responses
// file must have the columns subject_id, item_id and response. Another
// Parquet file is measurement-db's when it also has benchmark_id or trial
// (a long file of subject_id, item_id and response alone is left to the
// long reader).
func Is(path string) bool {
	if isDir(path) {
		if isDir(filepath.Join(path, mdbRegistryDir)) || hasRegistry(path) {
			return true
		}
		if f := datasetFile(path); f != "" {
			return isResponseTable(f)
		}
		// A released tree of data set folders, each with its own tables.
		entries, _ := os.ReadDir(path)
		for _, e := range entries {
			if name := e.Name(); e.IsDir() && !strings.HasPrefix(name, ".") {
				if f := datasetFile(filepath.Join(path, name)); f != "" && isResponseTable(f) {
					return true
				}
			}
		}
		return false
	}
	if !isFile(path) || !strings.EqualFold(filepath.Ext(path), ".parquet") {
		return false
	}
	base := strings.ToLower(filepath.Base(path))
	if slices.Contains(mdbNotRows, base) {
		return false
	}
	if base == "responses.parquet" || base == "response.parquet" || len(registriesAbove(filepath.Dir(path))) > 0 {
		return isResponseTable(path)
	}
	return hasSchemaColumns(path)
}

// registriesAbove are the registry folders of a data set at dir: dir itself
// when it holds registry tables, and the first _registry/ (or folder with
// benchmarks.parquet) among its three parents.
func registriesAbove(dir string) []string {
	var out []string
	if hasRegistry(dir) {
		out = append(out, dir)
	}
	d := dir
	for range 3 {
		up := filepath.Dir(d)
		if up == d {
			break
		}
		d = up
		if r := filepath.Join(d, mdbRegistryDir); isDir(r) {
			return append(out, r)
		}
		if hasRegistry(d) {
			return append(out, d)
		}
	}
	return out
}

// findMDB finds the registry and response files of path: a tree, a data
// set folder, a released folder of flat files, or one responses file.
func findMDB(path string) (*mdbTree, error) {
	t := &mdbTree{}
	if !isDir(path) {
		t.registry = registriesAbove(filepath.Dir(path))
		name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		if n := strings.ToLower(name); n == "responses" || n == "response" {
			name = datasetName(path)
		}
		t.files = []mdbFile{{path, name}}
		return t, nil
	}
	if f := datasetFile(path); f != "" && !isDir(filepath.Join(path, mdbRegistryDir)) {
		t.registry = registriesAbove(filepath.Dir(f))
		t.files = []mdbFile{{f, filepath.Base(filepath.Clean(path))}}
		return t, nil
	}
	if r := filepath.Join(path, mdbRegistryDir); isDir(r) {
		t.registry = append(t.registry, r)
	}
	flat := hasRegistry(path)
	if flat {
		t.registry = append(t.registry, path)
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".") {
			continue
		}
		p := filepath.Join(path, name)
		switch {
		case e.IsDir():
			if f := datasetFile(p); f != "" {
				t.files = append(t.files, mdbFile{f, name})
				if d := filepath.Dir(f); hasRegistry(d) && !slices.Contains(t.registry, d) {
					t.registry = append(t.registry, d)
				}
			}
		case flat && strings.EqualFold(filepath.Ext(name), ".parquet") && !slices.Contains(mdbNotRows, strings.ToLower(name)):
			if isResponseTable(p) {
				t.files = append(t.files, mdbFile{p, strings.TrimSuffix(name, filepath.Ext(name))})
			} else {
				t.skipped = append(t.skipped, p)
			}
		}
	}
	return t, nil
}

// datasetName is the data set of a responses file: its folder, above
// processed/ or formatted_tables/.
func datasetName(path string) string {
	d := filepath.Dir(path)
	if b := filepath.Base(d); b == "processed" || b == "formatted_tables" {
		d = filepath.Dir(d)
	}
	return filepath.Base(d)
}

// isResponseTable says whether a Parquet file has the columns of responses.
func isResponseTable(path string) bool {
	t, err := parquet.OpenTable(path)
	if err != nil {
		return false
	}
	defer t.Close()
	return t.Has("subject_id") && t.Has("item_id") && t.Has("response")
}

// hasSchemaColumns says whether a Parquet file has the columns of
// measurement-db's responses, benchmark_id or trial among them.
func hasSchemaColumns(path string) bool {
	t, err := parquet.OpenTable(path)
	if err != nil {
		return false
	}
	defer t.Close()
	return t.Has("subject_id") && t.Has("item_id") && t.Has("response") && (t.Has("benchmark_id") || t.Has("trial"))
}
