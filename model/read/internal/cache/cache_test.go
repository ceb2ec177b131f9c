package cache

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
)

// What Write writes, Load gives back exactly: names, texts, groups, cells
// with their trials and successes, the summary and the key; a cache cut
// short, or cells out of order, is refused.
func TestWriteLoadRoundTrip(t *testing.T) {
	r := &model.Responses{
		Models:    []string{"m1", "m2", "m3"},
		Items:     []string{"q1", "q2"},
		ItemText:  []string{"one", ""},
		ItemGroup: []string{"g", "h"},
		Model:     []int32{0, 0, 1, 2},
		Item:      []int32{0, 1, 1, 0},
		Label:     []uint8{1, 0, 1, 1},
		Trials:    []int32{1, 4, 2, 1},
		Successes: []float64{1, 1, 2, 0.75},
	}
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	sum := Summary{Format: "long", Why: "header has columns", Gzip: true, Rows: 9, Blank: 2,
		DuplicateCells: 1, DuplicateRows: 3, Conflicts: 1, TiesDropped: 0}
	key := Key{Options: OptionsKey("long", "trials"), Size: 1234, ModTime: 5678, Sum: 0xfeedface}
	path := filepath.Join(t.TempDir(), "r.cells")
	if err := Write(path, key, r, sum); err != nil {
		t.Fatal(err)
	}
	got, gotSum, gotKey, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if gotSum != sum || gotKey != key {
		t.Errorf("summary %+v key %+v, want %+v %+v", gotSum, gotKey, sum, key)
	}
	for _, f := range []string{"Models", "Items", "ItemText", "ItemGroup", "Model", "Item", "Label", "Trials", "Successes"} {
		if a, b := reflect.ValueOf(got).Elem().FieldByName(f).Interface(), reflect.ValueOf(r).Elem().FieldByName(f).Interface(); !reflect.DeepEqual(a, b) {
			t.Errorf("%s: got %v, want %v", f, a, b)
		}
	}
	if k, err := ReadKey(path); err != nil || k != key {
		t.Errorf("ReadKey: %+v, %v", k, err)
	}
	b, _ := os.ReadFile(path)
	os.WriteFile(path, b[:len(b)-5], 0o644)
	if _, _, _, err := Load(path); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("a cache cut short: %v", err)
	}
	r.Item[0], r.Item[1] = r.Item[1], r.Item[0]
	if err := Write(path, key, r, sum); err == nil {
		t.Error("cells out of order were written")
	}
}
