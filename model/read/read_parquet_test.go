package read

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/parquet-go/parquet-go"
)

// writeParquetRows writes rows of type T with the library's struct writer.
func writeParquetRows[T any](t *testing.T, path string, rows []T, rowGroup int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[T](f, parquet.MaxRowsPerRowGroup(rowGroup))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// sameResponses fails unless a and b hold the same names, texts and cells.
func sameResponses(t *testing.T, a, b *model.Responses) {
	t.Helper()
	switch {
	case !slices.Equal(a.Models, b.Models):
		t.Errorf("models differ: %v vs %v", head(a.Models), head(b.Models))
	case !slices.Equal(a.Items, b.Items):
		t.Errorf("items differ: %v vs %v", head(a.Items), head(b.Items))
	case !slices.Equal(a.ItemText, b.ItemText) || (a.ItemText == nil) != (b.ItemText == nil):
		t.Errorf("item texts differ")
	case !slices.Equal(a.ItemGroup, b.ItemGroup) || (a.ItemGroup == nil) != (b.ItemGroup == nil):
		t.Errorf("item groups differ")
	case !slices.Equal(a.Model, b.Model) || !slices.Equal(a.Item, b.Item) || !slices.Equal(a.Label, b.Label):
		t.Errorf("cells differ: %d vs %d", a.Len(), b.Len())
	case !slices.Equal(a.Trials, b.Trials) || (a.Trials == nil) != (b.Trials == nil):
		t.Errorf("trials differ")
	case !slices.Equal(a.Successes, b.Successes) || (a.Successes == nil) != (b.Successes == nil):
		t.Errorf("successes differ")
	}
}

func head(s []string) []string { return s[:min(len(s), 5)] }

type longRow struct {
	Model    string  `parquet:"model_name,dict"`
	Item     int64   `parquet:"question_id"`
	Correct  *bool   `parquet:"correct,optional"`
	Text     string  `parquet:"prompt"`
	Category *string `parquet:"category,optional"`
}

// A long Parquet file with typed columns (integer item ids, nullable boolean
// labels) reads as the same CSV does, across several row groups.
func TestReadParquetLongTyped(t *testing.T) {
	dir := t.TempDir()
	var rows []longRow
	var csv strings.Builder
	csv.WriteString("model_name,question_id,correct,prompt,category\n")
	for i := 0; i < 7; i++ {
		for j := 0; j < 50; j++ {
			if (i*31+j*7)%11 == 0 {
				continue // not in the file
			}
			row := longRow{Model: fmt.Sprintf("m%d", i), Item: int64(j * 3), Text: fmt.Sprintf("question %d", j)}
			label := ""
			if (i+j)%13 != 0 {
				y := (i*j+i+j)%3 != 0
				row.Correct = &y
				label = "0"
				if y {
					label = "1"
				}
			}
			if j%2 == 0 {
				g := "even"
				row.Category = &g
			}
			rows = append(rows, row)
			cat := ""
			if row.Category != nil {
				cat = *row.Category
			}
			fmt.Fprintf(&csv, "%s,%d,%s,%s,%s\n", row.Model, row.Item, label, row.Text, cat)
		}
	}
	pq := filepath.Join(dir, "long.bin") // the magic bytes decide, not the name
	writeParquetRows(t, pq, rows, 64)
	csvPath := filepath.Join(dir, "long.csv")
	if err := os.WriteFile(csvPath, []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	got, rep, err := File(pq, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, wrep, err := File(csvPath, Options{NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Format != "long" || rep.Rows != len(rows) || rep.Blank != wrep.Blank || rep.Blank == 0 {
		t.Errorf("report %+v, want long with %d rows and %d blank", rep, len(rows), wrep.Blank)
	}
	sameResponses(t, got, want)
}

type wideRow struct {
	Model string `parquet:"model,dict"`
	Q1    *int32 `parquet:"q1,optional"`
	Q0    int32  `parquet:"q0"`
	Q2    float64
}

// A model-major wide Parquet file: integer and float labels, nulls and NaN
// missing, columns in file order (not sorted by name).
func TestReadParquetWide(t *testing.T) {
	one, zero := int32(1), int32(0)
	nan := 0.0
	nan = nan / nan
	rows := []wideRow{{"a", &one, 0, 1}, {"b", nil, 1, nan}, {"c", &zero, 1, 0}}
	path := filepath.Join(t.TempDir(), "wide.parquet")
	writeParquetRows(t, path, rows, 2)
	r, rep, err := File(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Format != "wide" || rep.Blank != 2 {
		t.Errorf("format %s, %d blank; want wide, 2", rep.Format, rep.Blank)
	}
	if !slices.Equal(r.Items, []string{"q1", "q0", "Q2"}) || !slices.Equal(r.Models, []string{"a", "b", "c"}) {
		t.Errorf("items %v, models %v", r.Items, r.Models)
	}
	// Sorted by (model, item index): a:q1=1,q0=0,Q2=1  b:q0=1  c:q1=0,q0=1,Q2=0.
	if !slices.Equal(r.Label, []uint8{1, 0, 1, 1, 0, 1, 0}) || !slices.Equal(r.Item, []int32{0, 1, 2, 1, 0, 1, 2}) {
		t.Errorf("labels %v items %v", r.Label, r.Item)
	}
}

type badRow struct {
	Model string `parquet:"model"`
	Item  string `parquet:"item"`
	Label string `parquet:"label"`
}

// Bad values are reported with the file, the row group, the row and the column.
func TestReadParquetErrorsLocated(t *testing.T) {
	dir := t.TempDir()
	var rows []badRow
	for k := 0; k < 10; k++ {
		rows = append(rows, badRow{"m", fmt.Sprint(k), "1"})
	}
	rows[6].Label = "maybe"
	path := filepath.Join(dir, "bad.parquet")
	writeParquetRows(t, path, rows, 4)
	_, _, err := File(path, Options{})
	var pe *ParseError
	if !errors.As(err, &pe) || pe.RowGroup != 2 || pe.Line != 7 || pe.Column != "label" {
		t.Fatalf("error %v, want row group 2, row 7, column label", err)
	}
	if want := path + `: row group 2, row 7: column "label": "maybe" is not a 0/1 label`; err.Error() != want {
		t.Errorf("error\n%s\nwant\n%s", err, want)
	}

	rows[6].Label, rows[9].Model = "0", ""
	writeParquetRows(t, path, rows, 4)
	if _, _, err := File(path, Options{}); err == nil || !strings.Contains(err.Error(), `row group 3, row 10: column "model": empty or null model name`) {
		t.Errorf("error %v, want the empty model at row group 3, row 10", err)
	}

	// The same through a dictionary-encoded label column (ConvertToParquet).
	src := filepath.Join(dir, "bad.csv")
	os.WriteFile(src, []byte("model,item,label\nm,a,1\nm,b,0\nm,c,1\nm,d,maybe\nm,e,0\n"), 0o644)
	dictPath := filepath.Join(dir, "bad-dict.parquet")
	if _, err := ConvertToParquet(src, dictPath, 2); err != nil {
		t.Fatal(err)
	}
	if _, _, err := File(dictPath, Options{}); err == nil || err.Error() != dictPath+`: row group 2, row 4: column "label": "maybe" is not a 0/1 label` {
		t.Errorf("dictionary labels: error %v", err)
	}
	os.WriteFile(src, []byte("model,item,label\nm,a,1\nm,b,0\nm,c,1\nm,d,-1\n"), 0o644)
	if _, err := ConvertToParquet(src, dictPath, 2); err != nil {
		t.Fatal(err)
	}
	if _, _, err := File(dictPath, Options{}); err == nil || !strings.Contains(err.Error(), "row group 2, row 4") || !strings.Contains(err.Error(), "mixes 0/1 and -1/1") {
		t.Errorf("dictionary labels mixing 0 and -1: error %v", err)
	}

	// A truncated file is refused as not Parquet, naming the file.
	b, _ := os.ReadFile(path)
	cut := filepath.Join(dir, "cut.parquet")
	os.WriteFile(cut, b[:len(b)/2], 0o644)
	if _, _, err := File(cut, Options{}); err == nil || !strings.HasPrefix(err.Error(), cut+": ") {
		t.Errorf("truncated file: error %v", err)
	}
	// Damaged page data is located at its row group.
	bad := slices.Clone(b)
	for k := 8; k < len(b)/3; k++ {
		bad[k] ^= 0x5a
	}
	dmg := filepath.Join(dir, "damaged.parquet")
	os.WriteFile(dmg, bad, 0o644)
	if _, _, err := File(dmg, Options{}); err == nil || !strings.HasPrefix(err.Error(), dmg+": row group 1") {
		t.Errorf("damaged file: error %v, want it located at row group 1", err)
	}
}

// ConvertToParquet keeps every row and column: the Parquet copy of a CSV reads
// back to the same responses, item texts included.
func TestConvertToParquetRoundTrip(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "r.csv")
	text := "item_id,claude,gpt,llama\n" +
		"q2,1,0,\n" +
		"q1,0,,1\n" +
		"\"q,3\",1,1,NA\n"
	os.WriteFile(src, []byte(text), 0o644)
	dst := filepath.Join(dir, "r.parquet")
	n, err := ConvertToParquet(src, dst, 2)
	if err != nil || n != 3 {
		t.Fatalf("converted %d rows, %v", n, err)
	}
	want, _, err := File(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, rep, err := File(dst, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Format != "wide-items" {
		t.Errorf("format %s", rep.Format)
	}
	sameResponses(t, got, want)

	items := filepath.Join(dir, "items.csv")
	os.WriteFile(items, []byte("item_id,text,category\nq1,\"first, with a comma\",x\nq2,second,y\n"), 0o644)
	itemsPQ := filepath.Join(dir, "items.parquet")
	if _, err := ConvertToParquet(items, itemsPQ, 0); err != nil {
		t.Fatal(err)
	}
	a, err := Items(items)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Items(itemsPQ)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.IDs, b.IDs) || !slices.Equal(a.Text, b.Text) || !slices.Equal(a.Group, b.Group) {
		t.Errorf("item table %+v, want %+v", b, a)
	}
	withText, _, err := File(dst, Options{Items: itemsPQ})
	if err != nil || withText.ItemText[withText.ItemIndex("q1")] != "first, with a comma" {
		t.Errorf("item text from Parquet: %v", err)
	}
}

// Every wide and long file of ../shared/data reads the same from its Parquet copy.
func TestParquetSharedDataSame(t *testing.T) {
	data := filepath.Join(repoRoot(t), "..", "shared", "data")
	files, _ := filepath.Glob(filepath.Join(data, "*", "*.csv"))
	if len(files) == 0 {
		t.Skip("../shared/data is absent")
	}
	dir := t.TempDir()
	tested := 0
	for k, f := range files {
		want, rep, err := File(f, Options{NoCache: true})
		if err != nil || rep.Format == "patterns" {
			continue // item-text tables and pattern tables are not response matrices in Parquet
		}
		dst := filepath.Join(dir, fmt.Sprintf("%d.parquet", k))
		if _, err := ConvertToParquet(f, dst, 50_000); err != nil {
			t.Fatal(err)
		}
		got, grep, err := File(dst, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if grep.Format != rep.Format {
			t.Errorf("%s: Parquet read as %s, CSV as %s", f, grep.Format, rep.Format)
		}
		sameResponses(t, got, want)
		tested++
	}
	if tested < 5 {
		t.Errorf("only %d shared response files tested", tested)
	}
}

// A Parquet matrix with an unnamed index column is oriented as its CSV copy
// is: models on the shorter side.
func TestReadParquetUnnamedIndex(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		csv           string
		format        string
		models, items int
	}{
		{"Unnamed: 0,q1,q2,q3\nm1,1,0,1\nm2,0,1,\n", "wide", 2, 3},
		{"index,m1,m2\nq1,1,0\nq2,0,1\nq3,1,\n", "wide-items", 2, 3},
	} {
		src, dst := filepath.Join(dir, "m.csv"), filepath.Join(dir, "m.parquet")
		os.WriteFile(src, []byte(c.csv), 0o644)
		if _, err := ConvertToParquet(src, dst, 0); err != nil {
			t.Fatal(err)
		}
		want, _, err := File(src, Options{NoCache: true})
		if err != nil {
			t.Fatal(err)
		}
		got, rep, err := File(dst, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Format != c.format || got.NumModels() != c.models || got.NumItems() != c.items || !strings.Contains(rep.Why, "models on the shorter side") {
			t.Errorf("%q: %s (%s), %d models x %d items", c.csv, rep.Format, rep.Why, got.NumModels(), got.NumItems())
		}
		if !slices.Equal(got.Models, want.Models) || !slices.Equal(got.Label, want.Label) || !slices.Equal(got.Item, want.Item) {
			t.Errorf("%q: Parquet and CSV differ", c.csv)
		}
	}
}
