package encoder

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model/tensorfile"
)

func TestVectorsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	v := &Vectors{IDs: []string{"q1", "q:2", "q3"}, Rows: [][]float32{{1, -2.5, 3e-8}, {0, 1, 2}, {7, 8, 9}}, Dim: 3}
	for _, ext := range []string{".npy", ".safetensors", ".jsonl"} {
		path := filepath.Join(dir, "v"+ext)
		if err := WriteVectors(path, v, map[string]string{"encoder": "x"}); err != nil {
			t.Fatal(err)
		}
		got, err := ReadVectors(path)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.IDs, v.IDs) || !reflect.DeepEqual(got.Rows, v.Rows) || got.Dim != 3 {
			t.Errorf("%s: read back %+v", ext, got)
		}
	}
	// Inputs in the other formats users bring.
	os.WriteFile(filepath.Join(dir, "ref.json"), []byte(`{"q3": [7, 8, 9], "q1": [1, -2.5, 3e-8]}`), 0o644)
	os.WriteFile(filepath.Join(dir, "v.csv"), []byte("item_id,d0,d1,d2\nq3,7,8,9\nq1,1,-2.5,3e-8\n"), 0o644)
	for _, name := range []string{"ref.json", "v.csv"} {
		got, err := ReadVectors(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		want := &Vectors{IDs: []string{"q3", "q1"}, Rows: [][]float32{{7, 8, 9}, {1, -2.5, 3e-8}}, Dim: 3}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %+v", name, got)
		}
	}
}

func TestVectorsErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(s), 0o644)
		return p
	}
	for _, tc := range []struct{ path, want string }{
		{write("a.json", `{"a": [1, 2], "b": [1]}`), `a.json: item "b" has 1 values, but item "a" has 2`},
		{write("b.json", `{"a": [1, 2], "a": [3, 4]}`), `b.json: item id "a" appears twice (items 1 and 2)`},
		{write("c.json", `[[1, 2]]`), `c.json: want a JSON object {"item_id": [floats], ...}`},
		{write("d.json", `{"a": [1, "x"]}`), `d.json: item "a": want a list of numbers`},
		{write("e.csv", "a,1,2\nb,1,zz\n"), `e.csv:2: column 3: value "zz" is not a number`},
		{write("f.jsonl", "{\"id\":\"a\",\"embedding\":[1]}\n{\"embedding\":[2]}\n"), `f.jsonl:2: field "id" is missing or empty`},
		{write("g.npy", "\x93NUMPY\x01\x00\x10\x00{'descr': '<f4'}"), `g.npy: .npy header has no shape`},
		{write("h.txt", ""), `h.txt: unknown vector file type ".txt"`},
	} {
		_, err := ReadVectors(tc.path)
		if err == nil || !strings.HasPrefix(err.Error(), filepath.Join(dir, tc.want)) {
			t.Errorf("error %v\nwant prefix %s", err, filepath.Join(dir, tc.want))
		}
	}
	// A .npy whose id file is missing.
	p := filepath.Join(dir, "v.npy")
	tensorfile.WriteNPY(p, [][]float32{{1}}, 1)
	if _, err := ReadVectors(p); err == nil || !strings.Contains(err.Error(), "the item ids go in "+IDsPath(p)) {
		t.Errorf("missing ids file: %v", err)
	}
}

func TestPrecomputedEncoder(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "emb.json")
	os.WriteFile(p, []byte(`{"q1": [1, 0], "q2": [0, 1]}`), 0o644)
	enc, err := Open("precomputed:" + p)
	if err != nil {
		t.Fatal(err)
	}
	if enc.Dim() != 2 || !strings.HasPrefix(enc.Fingerprint(), "precomputed/") {
		t.Errorf("dim %d fingerprint %q", enc.Dim(), enc.Fingerprint())
	}
	ctx := context.Background()
	if _, err := enc.Encode(ctx, []string{"text"}); !errors.Is(err, ErrByItemID) {
		t.Errorf("Encode(texts) = %v", err)
	}
	got, err := EncodeItems(ctx, enc, []string{"q2", "q1"}, []string{"", ""}, ItemOptions{})
	if err != nil || !reflect.DeepEqual(got, [][]float32{{0, 1}, {1, 0}}) {
		t.Errorf("EncodeItems = %v, %v", got, err)
	}
	_, err = EncodeItems(ctx, enc, []string{"q1", "q9"}, nil, ItemOptions{})
	if err == nil || err.Error() != p+`: 1 of 2 items have no vector, e.g. ["q9"]` {
		t.Errorf("missing id: %v", err)
	}
	// Changing one number changes the fingerprint.
	os.WriteFile(p, []byte(`{"q1": [1, 0], "q2": [0, 1.5]}`), 0o644)
	enc2, _ := Open("precomputed:" + p)
	if enc2.Fingerprint() == enc.Fingerprint() {
		t.Error("fingerprint ignores the vectors")
	}
}

// countingEncoder counts the texts it encodes.
type countingEncoder struct {
	Hash
	n int
}

func (c *countingEncoder) Encode(ctx context.Context, texts []string) ([][]float32, error) {
	c.n += len(texts)
	return c.Hash.Encode(ctx, texts)
}

func TestEncodeItemsCache(t *testing.T) {
	cache := &Cache{Dir: t.TempDir()}
	enc := &countingEncoder{Hash: Hash{Width: 8}}
	ctx := context.Background()
	ids := []string{"a", "b", "c"}
	texts := []string{"first text", "second text", "third text"}
	first, err := EncodeItems(ctx, enc, ids, texts, ItemOptions{Cache: cache, Chunk: 2})
	if err != nil || enc.n != 3 {
		t.Fatalf("first run encoded %d texts, err %v", enc.n, err)
	}
	// Same items: nothing is encoded. One text changed and one new item: two are.
	again, err := EncodeItems(ctx, enc, ids, texts, ItemOptions{Cache: cache})
	if err != nil || enc.n != 3 || !reflect.DeepEqual(again, first) {
		t.Fatalf("cached run encoded %d texts in total, err %v", enc.n, err)
	}
	var reports []int
	mixed, err := EncodeItems(ctx, enc, []string{"a", "b", "d"}, []string{"first text", "changed", "fourth"},
		ItemOptions{Cache: cache, Progress: func(done, total int) { reports = append(reports, done, total) }})
	if err != nil || enc.n != 5 {
		t.Fatalf("after a change encoded %d texts in total, err %v", enc.n, err)
	}
	if !reflect.DeepEqual(reports, []int{1, 3, 3, 3}) {
		t.Errorf("progress %v", reports)
	}
	want, _ := enc.Hash.Encode(ctx, []string{"first text", "changed", "fourth"})
	if !reflect.DeepEqual(mixed, want) {
		t.Error("cached and fresh vectors differ")
	}
	// Another width is another encoder: its own folder.
	other := &countingEncoder{Hash: Hash{Width: 4}}
	if _, err := EncodeItems(ctx, other, ids, texts, ItemOptions{Cache: cache}); err != nil || other.n != 3 {
		t.Errorf("different fingerprint reused the cache (%d encoded, %v)", other.n, err)
	}
	// Many small runs are compacted into one part.
	for i := 0; i < 10; i++ {
		if _, err := EncodeItems(ctx, enc, []string{"x"}, []string{strings.Repeat("y", i+1)}, ItemOptions{Cache: cache}); err != nil {
			t.Fatal(err)
		}
	}
	_, parts, err := cache.parts(enc.Fingerprint())
	if err != nil || len(parts) > 8 {
		t.Errorf("%d parts after compaction, err %v", len(parts), err)
	}
	m, _, _ := cache.load(enc.Fingerprint())
	if m["x"].textHash != TextHash(strings.Repeat("y", 10)) || len(m) != 5 {
		t.Errorf("compacted cache has %d items, x hash %s", len(m), m["x"].textHash)
	}
}
