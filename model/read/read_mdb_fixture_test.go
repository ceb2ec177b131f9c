package read

import (
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// The measurement-db fixture, testdata/mdb (a tree), testdata/mdb-release
// (a released copy: flat <dataset>.parquet beside the registry tables) and
// testdata/mdb-long (the same cells as long CSVs, and the SWE-bench texts
// as an item file), is made from two shipped
// sets by mdbFixture:
//
//   - swebench: binary, the first 10 systems x 12 issues of
//     configs/data/swebench-verified, with the issue texts as content;
//   - synth_ordinal: ordinal 0..10 (response = 10 x score), 10 models x the
//     first 12 items of configs/data/graded-synth, in processed/;
//   - synth_trials: binary, 10 trials a cell, the next 12 items of
//     graded-synth, score s read as 10 s successes in 10 trials.
//
// Regenerate it with
//
//	JEIRT_WRITE_MDB_FIXTURE=1 go test ./model/read -run TestMDBFixture

// The schema's column types (DATA_FORMAT.md, parquet_schemas.yaml),
// with a nested metadata struct and list columns as the real tables have.
type (
	fxSubject struct {
		SubjectID   string   `parquet:"subject_id"`
		DisplayName string   `parquet:"display_name"`
		Provider    *string  `parquet:"provider,optional"`
		RawLabels   []string `parquet:"raw_labels_seen,list"`
	}
	fxItem struct {
		ItemID        string  `parquet:"item_id"`
		BenchmarkID   string  `parquet:"benchmark_id"`
		RawItemID     string  `parquet:"raw_item_id"`
		Content       *string `parquet:"content,optional"`
		CorrectAnswer *string `parquet:"correct_answer,optional"`
		ContentHash   string  `parquet:"content_hash"`
	}
	fxBenchmark struct {
		BenchmarkID   string   `parquet:"benchmark_id"`
		Name          string   `parquet:"name"`
		Modality      []string `parquet:"modality,list"`
		Domain        []string `parquet:"domain,list"`
		ResponseType  string   `parquet:"response_type"`
		ResponseScale string   `parquet:"response_scale"`
		Categorical   bool     `parquet:"categorical"`
	}
	fxMeta struct {
		LatencyS float64  `parquet:"latency_s"`
		Tags     []string `parquet:"tags,list"`
	}
	fxResponse struct {
		SubjectID     string   `parquet:"subject_id"`
		ItemID        string   `parquet:"item_id"`
		BenchmarkID   string   `parquet:"benchmark_id"`
		Trial         int64    `parquet:"trial"`
		TestCondition *string  `parquet:"test_condition,optional"`
		Response      *float64 `parquet:"response,optional"`
		Trace         *string  `parquet:"trace,optional"`
		Metadata      *fxMeta  `parquet:"metadata,optional"`
	}
)

// fxTree is a measurement-db tree in memory.
type fxTree struct {
	subjects   []fxSubject
	items      []fxItem
	benchmarks []fxBenchmark
	responses  map[string][]fxResponse // by data set
	long       map[string]string       // the same cells as a long CSV, by data set
}

func hash16(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])[:16]
}

// add registers a subject once.
func (t *fxTree) subject(name string) string {
	id := hash16(strings.ToLower(strings.TrimSpace(name)))
	for _, s := range t.subjects {
		if s.SubjectID == id {
			return id
		}
	}
	t.subjects = append(t.subjects, fxSubject{SubjectID: id, DisplayName: name, RawLabels: []string{name}})
	return id
}

// item registers an item as measurement-db's register_item does.
func (t *fxTree) item(bench, raw string, content *string) string {
	in := "raw:" + raw
	if content != nil {
		in = strings.TrimSpace(*content)
	}
	id := hash16(bench + "::" + in)
	t.items = append(t.items, fxItem{ItemID: id, BenchmarkID: bench, RawItemID: raw, Content: content, ContentHash: hash16(in)})
	return id
}

func readCSV(t testing.TB, path string) [][]string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// mdbFixture builds the fixture from the shipped sets under configs/data.
func mdbFixture(t testing.TB) *fxTree {
	const nModels, nItems = 10, 12
	data := filepath.Join("..", "..", "configs", "data")
	tr := &fxTree{responses: map[string][]fxResponse{}, long: map[string]string{}}
	trace := "see the patch"
	// swebench: binary, with the issue texts.
	tr.benchmarks = append(tr.benchmarks, fxBenchmark{BenchmarkID: "swebench", Name: "SWE-bench Verified", Modality: []string{"text"},
		Domain: []string{"software_engineering"}, ResponseType: "binary", ResponseScale: `{"kind":"discrete","values":[0,1]}`, Categorical: true})
	text := map[string]string{}
	for _, r := range readCSV(t, filepath.Join(data, "swebench-verified", "item_content.csv"))[1:] {
		text[r[0]] = r[1]
	}
	wide := readCSV(t, filepath.Join(data, "swebench-verified", "response_matrix.csv"))
	ids := make([]string, nItems)
	for j := range ids {
		c := text[wide[0][j+1]]
		ids[j] = tr.item("swebench", wide[0][j+1], &c)
	}
	var long strings.Builder
	long.WriteString("model,item,correct\n")
	for _, row := range wide[1 : nModels+1] {
		s := tr.subject(row[0])
		for j := range ids {
			y, _ := strconv.ParseFloat(row[j+1], 64)
			meta := &fxMeta{LatencyS: float64(j) / 4, Tags: []string{"text"}}
			tr.responses["swebench"] = append(tr.responses["swebench"], fxResponse{SubjectID: s, ItemID: ids[j], BenchmarkID: "swebench", Trial: 1, Response: &y, Trace: &trace, Metadata: meta})
			fmt.Fprintf(&long, "%s,%s,%s\n", row[0], ids[j], row[j+1])
		}
	}
	tr.long["swebench"] = long.String()
	var itemFile bytes.Buffer
	w := csv.NewWriter(&itemFile)
	_ = w.Write([]string{"item_id", "text"})
	for j, id := range ids {
		_ = w.Write([]string{id, text[wide[0][j+1]]})
	}
	w.Flush()
	tr.long["swebench_items"] = itemFile.String()
	// graded-synth: ordinal 0..10, and 10 trials a cell.
	tr.benchmarks = append(tr.benchmarks,
		fxBenchmark{BenchmarkID: "synth_ordinal", Name: "Graded synth (ordinal)", Modality: []string{"text"}, Domain: []string{"general"},
			ResponseType: "ordinal", ResponseScale: `{"kind":"discrete","values":[0,1,2,3,4,5,6,7,8,9,10]}`, Categorical: true},
		fxBenchmark{BenchmarkID: "synth_trials", Name: "Graded synth (trials)", Modality: []string{"text"}, Domain: []string{"general"},
			ResponseType: "binary", ResponseScale: "{0, 1}", Categorical: true})
	score := map[string]map[string]string{}
	var models, items []string
	for _, r := range readCSV(t, filepath.Join(data, "graded-synth", "responses.csv"))[1:] {
		if score[r[0]] == nil {
			score[r[0]] = map[string]string{}
			models = append(models, r[0])
		}
		if len(models) == 1 {
			items = append(items, r[1])
		}
		score[r[0]][r[1]] = r[2]
	}
	for _, b := range []struct {
		id    string
		items []string
	}{{"synth_ordinal", items[:nItems]}, {"synth_trials", items[nItems : 2*nItems]}} {
		ids := make([]string, len(b.items))
		for j, it := range b.items {
			ids[j] = tr.item(b.id, it, nil)
		}
		var long strings.Builder
		if b.id == "synth_trials" {
			long.WriteString("model,item,successes,trials\n")
		} else {
			long.WriteString("model,item,correct\n")
		}
		for _, m := range models[:nModels] {
			s := tr.subject(m)
			for j, it := range b.items {
				v := score[m][it]
				x, err := strconv.ParseFloat(v, 64)
				if err != nil {
					t.Fatal(err)
				}
				k := math.Round(10 * x)
				if b.id == "synth_ordinal" {
					tr.responses[b.id] = append(tr.responses[b.id], fxResponse{SubjectID: s, ItemID: ids[j], BenchmarkID: b.id, Trial: 1, Response: &k})
					fmt.Fprintf(&long, "%s,%s,%s\n", m, ids[j], v)
					continue
				}
				for trial := 1; trial <= 10; trial++ {
					y := 0.0
					if float64(trial) <= k {
						y = 1
					}
					tr.responses[b.id] = append(tr.responses[b.id], fxResponse{SubjectID: s, ItemID: ids[j], BenchmarkID: b.id, Trial: int64(trial), Response: &y})
				}
				fmt.Fprintf(&long, "%s,%s,%d,10\n", m, ids[j], int(k))
			}
		}
		tr.long[b.id] = long.String()
	}
	return tr
}

func writeTable[T any](t testing.TB, path string, rows []T) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	w := parquet.NewGenericWriter[T](&b, parquet.Compression(&parquet.Snappy))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// write writes the tree under dir/mdb, the released copy under
// dir/mdb-release and the long CSVs under dir/mdb-long.
func (tr *fxTree) write(t testing.TB, dir string) {
	reg := func(d string) {
		writeTable(t, filepath.Join(d, "subjects.parquet"), tr.subjects)
		writeTable(t, filepath.Join(d, "items.parquet"), tr.items)
		writeTable(t, filepath.Join(d, "benchmarks.parquet"), tr.benchmarks)
	}
	reg(filepath.Join(dir, "mdb", "_registry"))
	writeTable(t, filepath.Join(dir, "mdb", "swebench", "responses.parquet"), tr.responses["swebench"])
	writeTable(t, filepath.Join(dir, "mdb", "synth_ordinal", "processed", "responses.parquet"), tr.responses["synth_ordinal"])
	writeTable(t, filepath.Join(dir, "mdb", "synth_trials", "responses.parquet"), tr.responses["synth_trials"])
	reg(filepath.Join(dir, "mdb-release"))
	writeTable(t, filepath.Join(dir, "mdb-release", "swebench.parquet"), tr.responses["swebench"])
	for d, s := range tr.long {
		p := filepath.Join(dir, "mdb-long", d+".csv")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMDBFixture checks that the fixture under testdata is what
// mdbFixture makes of the shipped sets, byte for byte (and writes it with
// JEIRT_WRITE_MDB_FIXTURE=1).
func TestMDBFixture(t *testing.T) {
	tr := mdbFixture(t)
	if os.Getenv("JEIRT_WRITE_MDB_FIXTURE") == "1" {
		for _, d := range []string{"mdb", "mdb-release", "mdb-long"} {
			if err := os.RemoveAll(filepath.Join("testdata", d)); err != nil {
				t.Fatal(err)
			}
		}
		tr.write(t, "testdata")
	}
	tmp := t.TempDir()
	tr.write(t, tmp)
	n := 0
	err := filepath.Walk(tmp, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(tmp, p)
		want, _ := os.ReadFile(p)
		got, err := os.ReadFile(filepath.Join("testdata", rel))
		if err != nil {
			t.Errorf("%v (regenerate: JEIRT_WRITE_MDB_FIXTURE=1 go test ./model/read -run TestMDBFixture)", err)
		} else if !bytes.Equal(got, want) {
			t.Errorf("testdata/%s is not what the generator writes (regenerate: JEIRT_WRITE_MDB_FIXTURE=1 go test ./model/read -run TestMDBFixture)", rel)
		}
		n++
		return nil
	})
	if err != nil || n != 14 {
		t.Fatalf("%d files: %v", n, err)
	}
}
