package read

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jeirt/jeirt/model"
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

	// Touched: same content, new time.
	later := time.Now().Add(time.Hour)
	os.Chtimes(path, later, later)
	if _, rep := cachedRead(t, path, cache); rep.Cache != "rebuilt (the file or the options changed)" {
		t.Errorf("touched: cache %q", rep.Cache)
	}
	// Modified in place, same size and time: the head hash changes.
	st, _ := os.Stat(path)
	text, _ := os.ReadFile(path)
	mod := strings.Replace(string(text), "model-0,", "model-X,", 1)
	os.WriteFile(path, []byte(mod), 0o644)
	os.Chtimes(path, st.ModTime(), st.ModTime())
	r, rep = cachedRead(t, path, cache)
	if rep.Cache != "rebuilt (the file or the options changed)" || r.Models[0] != "model-X" {
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
