package read

import (
	"errors"
	"os"

	"github.com/cespare/xxhash/v2"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/read/internal/cache"
)

// When to use the binary response cache (package model/read/internal/cache
// holds its file format): a regular text file of at least Options.CacheMin
// bytes, keyed by its content.

// defaultCacheMin is the smallest file cached when Options.CacheMin is 0.
const defaultCacheMin = 64 << 20

// textCache is the hashing of a text file that may be cached: the hash
// sees every byte read from the file from its first.
type textCache struct {
	h *xxhash.Digest
}

// cacheFor starts hashing in when it is a regular text file large enough
// to be cached with opt, and returns nil otherwise.
func cacheFor(in *fileio.Input, opt Options) *textCache {
	threshold := opt.CacheMin
	if threshold == 0 {
		threshold = defaultCacheMin
	}
	if opt.NoCache || !in.Regular || in.Size < threshold || !cache.LittleEndian {
		return nil
	}
	c := &textCache{h: xxhash.New()}
	in.Hash(c.h)
	return c
}

// readTextCached reads a text file through the cache. The cache is loaded
// while the file is hashed; when the hash is not the one the cache was
// written for, the file is parsed (and hashed again as it is) and the cache
// rewritten.
func readTextCached(in *fileio.Input, tc *textCache, format, dup string, opt Options, lay textLayout, rep *Report) (*model.Responses, error) {
	path := in.Path
	dupKey := dup
	if opt.Graded {
		dupKey += "\x00graded"
	}
	dupKey += lay.key()
	cpath, err := cache.Path(opt.CacheDir, path, format, dupKey)
	if err != nil {
		return readText(in, format, dup, opt.Graded, lay, rep)
	}
	rep.CachePath = cpath
	want := cache.Key{Options: cache.OptionsKey(format, dupKey), Size: in.Size, ModTime: in.ModTime.UnixNano()}
	why := ""
	switch have, err := cache.ReadKey(cpath); {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		why = err.Error()
	case have.Options != want.Options:
		why = "the options changed"
	case have.Size != want.Size:
		why = "the file changed size"
	case opt.CacheTrustMtime && have.ModTime == want.ModTime:
		if r, saved, _, err := cache.Load(cpath); err == nil {
			*rep = reportOf(saved)
			rep.Path, rep.Cache, rep.CachePath = path, "loaded (size and modification time trusted, not hashed)", cpath
			return r, nil
		} else {
			why = err.Error()
		}
	default:
		// Hash the whole file while the cache loads.
		hashed := make(chan error, 1)
		go func() { hashed <- in.Drain() }()
		r, saved, got, lerr := cache.Load(cpath)
		if err := <-hashed; err != nil {
			return nil, &ParseError{File: path, Msg: err.Error(), Err: err}
		}
		switch {
		case lerr != nil:
			why = lerr.Error()
		case got.Sum != tc.h.Sum64() || got.Options != want.Options || got.Size != want.Size:
			why = "the file's content changed"
		default:
			*rep = reportOf(saved)
			rep.Path, rep.Cache, rep.CachePath = path, "loaded", cpath
			return r, nil
		}
		if err := in.Rewind(); err != nil {
			return nil, err
		}
		tc.h.Reset()
	}
	r, err := readText(in, format, dup, opt.Graded, lay, rep)
	if err != nil {
		return nil, err
	}
	// The key is of the bytes just parsed: to the end of the file.
	if err := in.Drain(); err != nil {
		return nil, &ParseError{File: path, Msg: err.Error(), Err: err}
	}
	want.Sum = tc.h.Sum64()
	rep.Cache = "written"
	if why != "" {
		rep.Cache = "rebuilt (" + why + ")"
	}
	if err := cache.Write(cpath, want, r, rep.summary()); err != nil {
		rep.Cache = "not written (" + err.Error() + ")"
	}
	return r, nil
}

// summary is what the cache keeps of rep.
func (rep *Report) summary() cache.Summary {
	return cache.Summary{Format: rep.Format, Why: rep.Why, Gzip: rep.Gzip, Rows: rep.Rows, Blank: rep.Blank,
		DuplicateCells: rep.DuplicateCells, DuplicateRows: rep.DuplicateRows, Conflicts: rep.Conflicts, TiesDropped: rep.TiesDropped}
}

// reportOf is the report of a read loaded from the cache, as it was when
// the cache was written.
func reportOf(s cache.Summary) Report {
	return Report{Format: s.Format, Why: s.Why, Gzip: s.Gzip, Rows: s.Rows, Blank: s.Blank,
		DuplicateCells: s.DuplicateCells, DuplicateRows: s.DuplicateRows, Conflicts: s.Conflicts, TiesDropped: s.TiesDropped}
}
