package main

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/encoder"
	"github.com/jeirt/jeirt/model/tensorfile"
)

func TestEncodeCommandShardsAndMerge(t *testing.T) {
	t.Chdir(t.TempDir())
	os.WriteFile("items.csv", []byte("item_id,text\nq1,What is 2+2?\nq2,Name a prime number.\nq3,\"Capital of France, please.\"\nq4,Who wrote Hamlet?\nq5,Boiling point of water?\n"), 0o644)
	if _, err := runCmd(t, newEncodeCmd(), "--encoder", "hash:16", "--items", "items.csv", "--out", "all.npy"); err != nil {
		t.Fatal(err)
	}
	all, err := encoder.ReadVectors("all.npy")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(all.IDs, []string{"q1", "q2", "q3", "q4", "q5"}) || all.Dim != 16 {
		t.Fatalf("all.npy: ids %v dim %d", all.IDs, all.Dim)
	}
	h, _ := encoder.NewHash(16)
	want, _ := h.Encode(t.Context(), []string{"What is 2+2?", "Name a prime number.", "Capital of France, please.", "Who wrote Hamlet?", "Boiling point of water?"})
	if !reflect.DeepEqual(all.Rows, want) {
		t.Error("all.npy rows differ from the hash encoder's vectors")
	}
	var parts []string
	for i, ext := range []string{".jsonl", ".safetensors", ".npy"} {
		p := "part" + string(rune('0'+i)) + ext
		out, err := runCmd(t, newEncodeCmd(), "--encoder", "hash:16", "--items", "items.csv", "--out", p, "--shard", string(rune('0'+i))+"/3", "--cache", "cache")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, "encode: wrote "+p) {
			t.Errorf("stderr: %s", out)
		}
		parts = append(parts, p)
	}
	if _, err := runCmd(t, newEncodeCmd(), append([]string{"merge", "--out", "merged.safetensors"}, parts...)...); err != nil {
		t.Fatal(err)
	}
	merged, err := encoder.ReadVectors("merged.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(merged.IDs, all.IDs) || !reflect.DeepEqual(merged.Rows, all.Rows) {
		t.Errorf("merged shards differ: %v", merged.IDs)
	}
	// Shards out of order are refused; so is a bad --shard.
	if _, err := runCmd(t, newEncodeCmd(), "merge", "--out", "x.npy", parts[2], parts[0], parts[1]); err == nil {
		t.Error("merge accepted shards out of order")
	}
	if _, err := runCmd(t, newEncodeCmd(), "--items", "items.csv", "--out", "x.npy", "--shard", "3/3"); err == nil || err.Error() != `encode: --shard "3/3": want i/n with 0 <= i < n, e.g. 0/4` {
		t.Errorf("bad shard: %v", err)
	}
	// The cache has one folder for hash:16 holding every item.
	dirs, _ := filepath.Glob("cache/*/part-*.safetensors")
	if len(dirs) != 3 {
		t.Errorf("cache parts: %v", dirs)
	}
	// A text file: ids are line numbers; precomputed re-encodes by id.
	os.WriteFile("texts.txt", []byte("alpha beta\r\ngamma\n"), 0o644)
	if _, err := runCmd(t, newEncodeCmd(), "--items", "texts.txt", "--out", "t.jsonl"); err != nil {
		t.Fatal(err)
	}
	if _, err := runCmd(t, newEncodeCmd(), "--encoder", "precomputed:t.jsonl", "--items", "texts.txt", "--out", "t2.npy"); err != nil {
		t.Fatal(err)
	}
	a, _ := encoder.ReadVectors("t.jsonl")
	b, _ := encoder.ReadVectors("t2.npy")
	if !reflect.DeepEqual(a, b) || !reflect.DeepEqual(a.IDs, []string{"1", "2"}) || a.Dim != 384 {
		t.Errorf("text file round trip: %v vs %v", a.IDs, b.IDs)
	}
}

// An encoder-cache part whose vectors are NaN: encode refuses it, naming
// the part and the item, and writes nothing (it wrote NaN vectors, exit 0).
func TestEncodeRefusesANaNCachePart(t *testing.T) {
	t.Chdir(t.TempDir())
	os.WriteFile("items.csv", []byte("item_id,text\nq1,What is 2+2?\nq2,Name a prime number.\n"), 0o644)
	if _, err := runCmd(t, newEncodeCmd(), "--encoder", "hash:16", "--items", "items.csv", "--out", "first.npy", "--cache", "cache"); err != nil {
		t.Fatal(err)
	}
	parts, _ := filepath.Glob("cache/*/part-*.safetensors")
	if len(parts) != 1 {
		t.Fatalf("cache parts %v", parts)
	}
	st, err := tensorfile.ReadSafetensors(parts[0])
	if err != nil {
		t.Fatal(err)
	}
	emb := st.Tensors["embeddings"]
	data := append([]float32(nil), emb.Data...)
	for k := range data {
		data[k] = float32(math.NaN())
	}
	os.Remove(parts[0])
	if err := tensorfile.WriteSafetensorsFile(parts[0], map[string]tensorfile.Tensor{"embeddings": {Shape: emb.Shape, Data: data}}, st.Metadata); err != nil {
		t.Fatal(err)
	}
	_, err = runCmd(t, newEncodeCmd(), "--encoder", "hash:16", "--items", "items.csv", "--out", "again.npy", "--cache", "cache")
	if err == nil || !strings.Contains(err.Error(), "cache "+parts[0]+`: item "q1": value 0 of its vector is NaN`) {
		t.Errorf("NaN cache part: %v", err)
	}
	if _, err := os.Stat("again.npy"); !os.IsNotExist(err) {
		t.Errorf("again.npy was written (%v)", err)
	}
}
