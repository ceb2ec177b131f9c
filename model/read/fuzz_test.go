package read

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The readers must never panic, hang or allocate far beyond the input: every
// input gives responses or an error. Run one with
// go test -run '^$' -fuzz '^FuzzReadFile$' -fuzztime 60s ./model/read
// (scripts/fuzz.sh runs them all).

var layoutSeeds = []struct {
	format, body string
}{
	{"long", "model,item,label\nm1,q1,1\nm1,q2,0\nm2,q1,1\n"},
	{"wide", "model,q1,q2\nm1,1,0\nm2,0,1\n"},
	{"wide-items", "item,m1,m2\nq1,1,0\nq2,,1\n"},
	{"pyirt", `{"subject_id":"m1","responses":{"q1":1,"q2":0}}` + "\n"},
	{"patterns", "q1,q2,freq\n1,0,3\n0,1,2\n"},
	{"patterns", "q1,q2,freq\n1,0,100000000000\n"},
	{"patterns", "q1,q2,freq\n1,0,9223372036854775807\n0,1,9223372036854775807\n"},
	{"auto", "model\titem\tlabel\nm\tq\t-1\nm\tr\t1\n"},
	{"auto", "a,b\n\"x\n"},
	{"long", "model,item,label\nm,q,1.00\nm,q,1\n"},
	// Cells of several trials and graded scores (read with --graded and
	// --duplicates trials by the fuzz targets' option bits).
	{"long", "model,item,successes,trials\nm1,q1,3,5\nm1,q2,0,2\nm2,q1,,0\n"},
	{"long", "model,item,correct,n\nm1,q1,0.5,1\nm1,q1,1,1\nm2,q2,2.5,4\n"},
	{"wide", "model,q1,q2\nm1,3/4,0.25\nm2,1,0/0\nm1,0.5,1\n"},
	{"pyirt", `{"subject_id":"m1","responses":{"q1":0.5,"q2":"2/3"}}` + "\n"},
}

// fuzzOptions reads the fuzzed option byte: the format (formats[b % len]),
// bit 4 --graded, bits 5-6 the duplicates policy.
func fuzzOptions(b uint8, formats []string) Options {
	return Options{Format: formats[int(b&15)%len(formats)], Graded: b&16 != 0, Duplicates: DuplicatePolicies[int(b>>5)%len(DuplicatePolicies)], NoCache: true}
}

func FuzzReadFile(f *testing.F) {
	for _, s := range layoutSeeds {
		for k, format := range []string{"auto", "long", "wide", "wide-items", "pyirt", "patterns"} {
			if format == s.format || format == "auto" {
				f.Add(uint8(k), []byte(s.body))
				f.Add(uint8(k|16|3<<5), []byte(s.body)) // --graded --duplicates trials
			}
		}
	}
	// Detection peeks at the first bytes of one reader: gzip, Parquet's magic.
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(layoutSeeds[0].body))
	zw.Close()
	f.Add(uint8(0), gz.Bytes())
	f.Add(uint8(0), []byte("PAR1model,item,label\n"))
	formats := append([]string{}, Formats...)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, format uint8, body []byte) {
		p := filepath.Join(dir, "r.csv")
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
		checkRead(t, p, fuzzOptions(format, formats))
	})
}

func FuzzReadItems(f *testing.F) {
	f.Add([]byte("item_id,text\nq1,What is 2+2?\nq2,\"a, b\"\n"))
	f.Add([]byte("id,prompt\nq1,\n"))
	f.Add([]byte(`{"item_id":"q1","text":"x"}` + "\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, name := range []string{"items.csv", "items.jsonl"} {
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, body, 0o644); err != nil {
				t.Fatal(err)
			}
			if tab, err := Items(p); err == nil && len(tab.IDs) != len(tab.Text) {
				t.Fatalf("%d ids, %d texts", len(tab.IDs), len(tab.Text))
			}
		}
	})
}

// FuzzReadParquet feeds Parquet bytes (seeded with the Parquet copies of the
// layout seeds, and with those copies cut short or with a byte changed) to
// the reader: every input gives responses or an error.
func FuzzReadParquet(f *testing.F) {
	dir := f.TempDir()
	for k, s := range append(layoutSeeds[:3:3], layoutSeeds[len(layoutSeeds)-4:len(layoutSeeds)-1]...) {
		src, dst := filepath.Join(dir, "s.csv"), filepath.Join(dir, "s.parquet")
		os.WriteFile(src, []byte(s.body), 0o644)
		if _, err := ConvertToParquet(src, dst, 0); err != nil {
			f.Fatal(err)
		}
		b, _ := os.ReadFile(dst)
		f.Add(uint8(k), b)
		f.Add(uint8(k|16|3<<5), b)
		f.Add(uint8(k), b[:len(b)/2])
		bad := append([]byte(nil), b...)
		bad[len(bad)/3] ^= 0x5a
		f.Add(uint8(k), bad)
	}
	if b, err := os.ReadFile("testdata/page-size-2g.parquet"); err == nil {
		f.Add(uint8(3), b)
	}
	formats := []string{"auto", "long", "wide", "wide-items"}
	p := filepath.Join(dir, "r.parquet")
	f.Fuzz(func(t *testing.T, format uint8, body []byte) {
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
		checkRead(t, p, fuzzOptions(format, formats))
	})
}

// checkRead reads path with opt and fails on an oversized error, a cell
// outside the names read, or impossible trials and successes.
func checkRead(t *testing.T, path string, opt Options) {
	r, _, err := File(path, opt)
	if err != nil {
		if len(err.Error()) > 4096 {
			t.Errorf("error of %d bytes", len(err.Error()))
		}
		return
	}
	for c := range r.Label {
		if int(r.Model[c]) >= len(r.Models) || int(r.Item[c]) >= len(r.Items) || r.Label[c] > 1 {
			t.Fatalf("cell %d out of range: model %d item %d label %d", c, r.Model[c], r.Item[c], r.Label[c])
		}
	}
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	if !opt.Graded && r.GradedCells() > 0 {
		t.Fatalf("%d graded cells read without --graded", r.GradedCells())
	}
}

// FuzzReadCache replaces a response file's binary cache with other bytes:
// a damaged cache is never used, so every input reads the same responses as
// the text file itself.
func FuzzReadCache(f *testing.F) {
	dir := f.TempDir()
	src := filepath.Join(dir, "r.csv")
	os.WriteFile(src, []byte("model,item,label\nm1,q1,1\nm1,q2,0.5\nm2,q1,1\nm2,q2,1\nm1,q1,0\nm3,q1,2/3\n"), 0o644)
	opt := Options{CacheDir: filepath.Join(dir, "cache"), CacheMin: -1, Graded: true, Duplicates: "trials"}
	want, rep, err := File(src, opt)
	if err != nil || rep.Cache != "written" {
		f.Fatalf("writing the cache: %v (%q)", err, rep.Cache)
	}
	good, err := os.ReadFile(rep.CachePath)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)/2])
	bad := append([]byte(nil), good...)
	bad[len(bad)/2] ^= 0x40
	f.Add(bad)
	// Impossible contents with a checksum that matches: a model twice.
	key, _ := readCacheKey(rep.CachePath)
	twice := cloneResponses(want)
	twice.Models[1] = twice.Models[0]
	writeCache(rep.CachePath, key, twice, rep)
	if b, err := os.ReadFile(rep.CachePath); err == nil {
		f.Add(b)
	}
	// A cache of the earlier format.
	f.Add(append([]byte("JEIRTRC1"), good[8:]...))
	f.Fuzz(func(t *testing.T, body []byte) {
		if err := os.WriteFile(rep.CachePath, body, 0o644); err != nil {
			t.Fatal(err)
		}
		got, _, err := File(src, opt)
		if err != nil {
			t.Fatalf("with a damaged cache: %v", err)
		}
		if !slices.Equal(got.Label, want.Label) || !slices.Equal(got.Model, want.Model) || !slices.Equal(got.Item, want.Item) ||
			!slices.Equal(got.Models, want.Models) || !slices.Equal(got.Items, want.Items) ||
			!slices.Equal(got.Trials, want.Trials) || !slices.Equal(got.Successes, want.Successes) {
			t.Fatal("a damaged cache changed the responses")
		}
	})
}
