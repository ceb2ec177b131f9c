package read

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/read/internal/cache"
)

// writeCacheTestCSV writes a long CSV with duplicates, blanks, texts and groups.
func writeCacheTestCSV(t *testing.T, path string, models, items int) {
	t.Helper()
	var b strings.Builder
	b.WriteString("model,item,correct,text,category\n")
	for i := 0; i < models; i++ {
		for j := 0; j < items; j++ {
			label := fmt.Sprint((i*7 + j*3 + i*j) % 2)
			if (i+j)%17 == 0 {
				label = ""
			}
			fmt.Fprintf(&b, "model-%d,item-%d,%s,text of %d,g%d\n", i, (j*37)%items, label, (j*37)%items, j%3)
		}
	}
	b.WriteString("model-1,item-2,1,,\nmodel-1,item-2,0,,\n") // a tie, left missing
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func cachedRead(t *testing.T, path, dir string) (*model.Responses, *Report) {
	t.Helper()
	r, rep, err := File(path, Options{CacheDir: dir, CacheMin: -1})
	if err != nil {
		t.Fatal(err)
	}
	return r, rep
}

// The cache gives back exactly what the text gave, report included; a
// modified or touched file, or a damaged or truncated cache, is detected and
// the cache rebuilt.
func TestResponseCache(t *testing.T) {
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	path := filepath.Join(dir, "r.csv")
	writeCacheTestCSV(t, path, 23, 301)
	want, wrep, err := File(path, Options{NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	if wrep.Cache != "" {
		t.Errorf("NoCache: cache %q", wrep.Cache)
	}
	// Below the size threshold nothing is cached.
	if _, rep, _ := File(path, Options{CacheDir: cache}); rep.Cache != "" {
		t.Errorf("small file: cache %q", rep.Cache)
	}

	r, rep := cachedRead(t, path, cache)
	if rep.Cache != "written" {
		t.Fatalf("first read: cache %q", rep.Cache)
	}
	sameResponses(t, r, want)
	r, rep = cachedRead(t, path, cache)
	if rep.Cache != "loaded" {
		t.Fatalf("second read: cache %q", rep.Cache)
	}
	sameResponses(t, r, want)
	wrep.Cache, wrep.CachePath = rep.Cache, rep.CachePath
	if *rep != *wrep {
		t.Errorf("report from the cache\n%+v\nwant\n%+v", rep, wrep)
	}
	// Other options are another cache.
	if _, rep, err := File(path, Options{CacheDir: cache, CacheMin: -1, Duplicates: "first"}); err != nil || rep.Cache != "written" {
		t.Errorf("other options: cache %q, %v", rep.Cache, err)
	}

	cfile := rep.CachePath
	blob, err := os.ReadFile(cfile)
	if err != nil {
		t.Fatal(err)
	}
	for _, damage := range []struct {
		name string
		do   func()
	}{
		{"flipped byte", func() {
			b := []byte(string(blob))
			b[len(b)/2] ^= 1
			os.WriteFile(cfile, b, 0o644)
		}},
		{"flipped checksum", func() {
			b := []byte(string(blob))
			b[len(b)-1] ^= 0x80
			os.WriteFile(cfile, b, 0o644)
		}},
		{"truncated", func() { os.WriteFile(cfile, blob[:len(blob)-9], 0o644) }},
		{"cut to the header", func() { os.WriteFile(cfile, blob[:20], 0o644) }},
		{"grown", func() { os.WriteFile(cfile, append([]byte(string(blob)), 0), 0o644) }},
	} {
		damage.do()
		r, rep := cachedRead(t, path, cache)
		if !strings.HasPrefix(rep.Cache, "rebuilt (damaged") {
			t.Errorf("%s: cache %q, want rebuilt", damage.name, rep.Cache)
		}
		sameResponses(t, r, want)
		if b, _ := os.ReadFile(cfile); string(b) != string(blob) {
			t.Errorf("%s: the rebuilt cache differs from the first", damage.name)
		}
	}

	// Touched: same content, new time. The key is the content: loaded.
	later := time.Now().Add(time.Hour)
	os.Chtimes(path, later, later)
	if _, rep := cachedRead(t, path, cache); rep.Cache != "loaded" {
		t.Errorf("touched: cache %q", rep.Cache)
	}
	// Modified in place, same size and time: the hash changes.
	st, _ := os.Stat(path)
	text, _ := os.ReadFile(path)
	mod := strings.Replace(string(text), "model-0,", "model-X,", 1)
	os.WriteFile(path, []byte(mod), 0o644)
	os.Chtimes(path, st.ModTime(), st.ModTime())
	r, rep = cachedRead(t, path, cache)
	if rep.Cache != "rebuilt (the file's content changed)" || r.Models[0] != "model-X" {
		t.Errorf("modified: cache %q, first model %q", rep.Cache, r.Models[0])
	}
	if _, rep := cachedRead(t, path, cache); rep.Cache != "loaded" {
		t.Errorf("after the rebuild: cache %q", rep.Cache)
	}
	// Writes are atomic: no temporary file is left behind.
	left, _ := filepath.Glob(filepath.Join(cache, ".*"))
	if len(left) != 0 {
		t.Errorf("temporary files left in the cache folder: %v", left)
	}
}

// flipMiddleLabels rewrites the long CSV at path with every label of the
// middle third of its lines flipped (0 and 1 swapped: the same size) and
// gives it back its modification time, as "touch -r" would.
func flipMiddleLabels(t *testing.T, path string) int {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	text, _ := os.ReadFile(path)
	lines := strings.Split(string(text), "\n")
	flipped := 0
	for k := len(lines) / 3; k < 2*len(lines)/3; k++ {
		f := strings.Split(lines[k], ",")
		if len(f) > 2 && (f[2] == "0" || f[2] == "1") {
			f[2] = map[string]string{"0": "1", "1": "0"}[f[2]]
			lines[k] = strings.Join(f, ",")
			flipped++
		}
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	if st2, _ := os.Stat(path); st2.Size() != st.Size() || !st2.ModTime().Equal(st.ModTime()) {
		t.Fatalf("the flipped file differs in size or time")
	}
	return flipped
}

// Labels flipped in the middle of a file, with its size and time kept, are
// read from the text, not from the cache: the cache is keyed by a hash of
// every byte. Only CacheTrustMtime, which says it trusts the time, loads
// the old cells.
func TestResponseCacheMiddleFlip(t *testing.T) {
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	path := filepath.Join(dir, "r.csv")
	writeCacheTestCSV(t, path, 40, 500)
	before, rep := cachedRead(t, path, cache)
	if rep.Cache != "written" {
		t.Fatalf("first read: %q", rep.Cache)
	}
	if n := flipMiddleLabels(t, path); n < 1000 {
		t.Fatalf("flipped only %d labels", n)
	}
	want, _, err := File(path, Options{NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	if sameLabels(before, want) {
		t.Fatal("the flip did not change the responses")
	}
	trusted, rep, err := File(path, Options{CacheDir: cache, CacheMin: -1, CacheTrustMtime: true})
	if err != nil || !strings.HasPrefix(rep.Cache, "loaded (size and modification time trusted") {
		t.Fatalf("trusting the time: %q, %v", rep.Cache, err)
	}
	if !sameLabels(trusted, before) {
		t.Error("trusting the time should load the old cells")
	}
	r, rep := cachedRead(t, path, cache)
	if rep.Cache != "rebuilt (the file's content changed)" {
		t.Errorf("after the flip: cache %q", rep.Cache)
	}
	sameResponses(t, r, want)
	if r, rep := cachedRead(t, path, cache); rep.Cache != "loaded" || !sameLabels(r, want) {
		t.Errorf("after the rebuild: cache %q", rep.Cache)
	}
}

func sameLabels(a, b *model.Responses) bool {
	if a.Len() != b.Len() {
		return false
	}
	for k := range a.Label {
		if a.Label[k] != b.Label[k] || a.Model[k] != b.Model[k] || a.Item[k] != b.Item[k] {
			return false
		}
	}
	return true
}

// A cache with a valid checksum but impossible contents (a model or an
// item named twice, one cell twice) is not used.
func TestResponseCacheImpossible(t *testing.T) {
	dir := t.TempDir()
	cacheDir := filepath.Join(dir, "cache")
	path := filepath.Join(dir, "r.csv")
	writeCacheTestCSV(t, path, 5, 20)
	want, rep := cachedRead(t, path, cacheDir)
	key, err := cache.ReadKey(rep.CachePath)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		bad  func(r *model.Responses)
	}{
		{"a model twice", func(r *model.Responses) { r.Models[1] = r.Models[0] }},
		{"an item twice", func(r *model.Responses) { r.Items[2] = r.Items[3] }},
	} {
		r := cloneResponses(want)
		c.bad(r)
		if err := cache.Write(rep.CachePath, key, r, rep.summary()); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, rep2 := cachedRead(t, path, cacheDir)
		if !strings.HasPrefix(rep2.Cache, "rebuilt (damaged") {
			t.Errorf("%s: cache %q, want rebuilt", c.name, rep2.Cache)
		}
		sameResponses(t, got, want)
	}
	// One cell twice: the second cell's item made the first's, the
	// checksum made right. Cells are written sorted, so the writer cannot.
	if err := cache.Write(rep.CachePath, key, want, rep.summary()); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(rep.CachePath)
	n := want.Len()
	items := len(b) - 4 - (n+7)/8 - 4*n
	copy(b[items+4:items+8], b[items:items+4])
	binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[:len(b)-4], crc32.MakeTable(crc32.Castagnoli)))
	os.WriteFile(rep.CachePath, b, 0o644)
	got, rep2 := cachedRead(t, path, cacheDir)
	if !strings.HasPrefix(rep2.Cache, "rebuilt (damaged") {
		t.Errorf("a cell twice: cache %q, want rebuilt", rep2.Cache)
	}
	sameResponses(t, got, want)
}

func cloneResponses(r *model.Responses) *model.Responses {
	c := *r
	c.Models = append([]string(nil), r.Models...)
	c.Items = append([]string(nil), r.Items...)
	c.Model = append([]int32(nil), r.Model...)
	c.Item = append([]int32(nil), r.Item...)
	c.Label = append([]uint8(nil), r.Label...)
	return &c
}
