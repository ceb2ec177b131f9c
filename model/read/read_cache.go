package read

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/jeirt/jeirt/model"
)

// The binary response cache. One file per (text file, reader options) under
// the cache folder:
//
//	magic "JEIRTRC1" | key (32 bytes) | counts and the read report |
//	names | cells per model (uint32 each) | item of each cell (int32) |
//	labels, one bit per cell | CRC-32C of everything before (4 bytes)
//
// all little-endian. The key is a SHA-256 of the text file's size,
// modification time, first and last megabyte and the reader's options: a
// cache whose key differs is stale. Cells are stored sorted by (model, item),
// as the readers leave them, so the model of each cell is a run length and a
// 90-million-cell file caches in about 4.1 bytes per cell.

const (
	cacheMagic      = "JEIRTRC1"
	defaultCacheMin = 64 << 20
	cacheProbe      = 1 << 20 // bytes hashed at each end of the text file
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// littleEndian is true on the hosts whose memory order matches the cache's,
// where int32 slices are written and read without conversion.
var littleEndian = func() bool { x := uint16(1); return *(*byte)(unsafe.Pointer(&x)) == 1 }()

// cacheFile returns the cache path for path read with format and dup.
func cacheFile(dir, path, format, dup string) (string, error) {
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(base, "jeirt", "responses")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	h := sha256.Sum256([]byte(abs + "\x00" + format + "\x00" + dup))
	return filepath.Join(dir, hex.EncodeToString(h[:16])+".cells"), nil
}

// cacheKey identifies the content of the text file at path and the options
// it is read with.
func cacheKey(path, format, dup string) ([32]byte, error) {
	var key [32]byte
	f, err := os.Open(path)
	if err != nil {
		return key, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return key, err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d\x00%d\x00%s\x00%s\x00", cacheMagic, st.Size(), st.ModTime().UnixNano(), format, dup)
	buf := make([]byte, cacheProbe)
	n, err := io.ReadFull(f, buf)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return key, err
	}
	h.Write(buf[:n])
	if st.Size() > cacheProbe {
		n, err = f.ReadAt(buf, max(st.Size()-cacheProbe, cacheProbe))
		if err != nil && err != io.EOF {
			return key, err
		}
		h.Write(buf[:n])
	}
	h.Sum(key[:0])
	return key, nil
}

// readTextCached reads a text file through the cache when it is large enough.
func readTextCached(path, format, dup string, opt Options, rep *Report) (*model.Responses, error) {
	threshold := opt.CacheMin
	if threshold == 0 {
		threshold = defaultCacheMin
	}
	st, err := os.Stat(path)
	if err != nil || st.Size() < threshold || !littleEndian || !st.Mode().IsRegular() {
		return readText(path, format, dup, rep)
	}
	cpath, err := cacheFile(opt.CacheDir, path, format, dup)
	if err != nil {
		return readText(path, format, dup, rep)
	}
	key, err := cacheKey(path, format, dup)
	if err != nil {
		return nil, err
	}
	rep.CachePath = cpath
	why := ""
	if r, saved, err := loadCache(cpath, key); err == nil {
		*rep = *saved
		rep.Path, rep.Cache, rep.CachePath = path, "loaded", cpath
		return r, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		why = err.Error()
	}
	r, err := readText(path, format, dup, rep)
	if err != nil {
		return nil, err
	}
	rep.Cache = "written"
	if why != "" {
		rep.Cache = "rebuilt (" + why + ")"
	}
	if err := writeCache(cpath, key, r, rep); err != nil {
		rep.Cache = "not written (" + err.Error() + ")"
	}
	return r, nil
}

// errStale says that a cache was written for other content or options.
var errStale = errors.New("the file or the options changed")

// cacheWriter writes little-endian fields and keeps the running checksum.
type cacheWriter struct {
	w   io.Writer
	crc hash.Hash32
	err error
	b   [8]byte
}

func (c *cacheWriter) bytes(p []byte) {
	if c.err == nil {
		c.crc.Write(p)
		_, c.err = c.w.Write(p)
	}
}

func (c *cacheWriter) u64(v uint64) {
	binary.LittleEndian.PutUint64(c.b[:], v)
	c.bytes(c.b[:8])
}

func (c *cacheWriter) str(s string) {
	c.u64(uint64(len(s)))
	c.bytes([]byte(s))
}

func (c *cacheWriter) strs(list []string) {
	c.u64(uint64(len(list)))
	for _, s := range list {
		c.str(s)
	}
}

func writeCache(path string, key [32]byte, r *model.Responses, rep *Report) error {
	n := r.Len()
	counts := make([]uint32, r.NumModels())
	for c, m := range r.Model {
		if c > 0 && (m < r.Model[c-1] || m == r.Model[c-1] && r.Item[c] <= r.Item[c-1]) {
			return errors.New("cells are not sorted by model and item")
		}
		counts[m]++
	}
	return model.WriteFileAtomic(path, func(w io.Writer) error {
		c := &cacheWriter{w: w, crc: crc32.New(castagnoli)}
		c.bytes([]byte(cacheMagic))
		c.bytes(key[:])
		c.str(rep.Format)
		c.str(rep.Why)
		gz := uint64(0)
		if rep.Gzip {
			gz = 1
		}
		for _, v := range []uint64{gz, uint64(rep.Rows), uint64(rep.Blank), uint64(rep.DuplicateCells),
			uint64(rep.DuplicateRows), uint64(rep.Conflicts), uint64(rep.TiesDropped)} {
			c.u64(v)
		}
		c.strs(r.Models)
		c.strs(r.Items)
		flags := uint64(0)
		if r.ItemText != nil {
			flags |= 1
		}
		if r.ItemGroup != nil {
			flags |= 2
		}
		c.u64(flags)
		if r.ItemText != nil {
			c.strs(r.ItemText)
		}
		if r.ItemGroup != nil {
			c.strs(r.ItemGroup)
		}
		c.u64(uint64(n))
		if len(counts) > 0 {
			c.bytes(unsafe.Slice((*byte)(unsafe.Pointer(&counts[0])), 4*len(counts)))
		}
		if n > 0 {
			c.bytes(unsafe.Slice((*byte)(unsafe.Pointer(&r.Item[0])), 4*n))
		}
		bits := make([]byte, (n+7)/8)
		for k, y := range r.Label {
			bits[k>>3] |= (y & 1) << (k & 7)
		}
		c.bytes(bits)
		if c.err != nil {
			return c.err
		}
		var sum [4]byte
		binary.LittleEndian.PutUint32(sum[:], c.crc.Sum32())
		_, err := w.Write(sum[:])
		return err
	})
}

// cacheReader reads what cacheWriter wrote, checking lengths against what is
// left of the file before allocating.
type cacheReader struct {
	r    io.Reader
	crc  hash.Hash32
	left int64
	err  error
	b    [8]byte
}

var errDamaged = errors.New("damaged (truncated or corrupt)")

func (c *cacheReader) bytes(p []byte) {
	if c.err != nil {
		return
	}
	if int64(len(p)) > c.left {
		c.err = errDamaged
		return
	}
	if _, err := io.ReadFull(c.r, p); err != nil {
		c.err = errDamaged
		return
	}
	c.left -= int64(len(p))
	c.crc.Write(p)
}

func (c *cacheReader) u64() uint64 {
	c.bytes(c.b[:8])
	if c.err != nil {
		return 0
	}
	return binary.LittleEndian.Uint64(c.b[:8])
}

// size reads a count of things of at least unit bytes each.
func (c *cacheReader) size(unit int64) int {
	v := c.u64()
	if c.err == nil && v > uint64(c.left/unit) {
		c.err = errDamaged
		return 0
	}
	return int(v)
}

func (c *cacheReader) str() string {
	n := c.size(1)
	if c.err != nil {
		return ""
	}
	b := make([]byte, n)
	c.bytes(b)
	return string(b)
}

func (c *cacheReader) strs() []string {
	n := c.size(8)
	if c.err != nil {
		return nil
	}
	out := make([]string, n)
	for k := range out {
		out[k] = c.str()
	}
	return out
}

// loadCache reads a cache written for key, verifying its checksum; it
// returns an error wrapping os.ErrNotExist when there is none.
func loadCache(path string, key [32]byte) (*model.Responses, *Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	c := &cacheReader{r: bufio.NewReaderSize(f, 1<<20), crc: crc32.New(castagnoli), left: st.Size() - 4}
	var head [len(cacheMagic) + 32]byte
	c.bytes(head[:])
	if c.err != nil || string(head[:len(cacheMagic)]) != cacheMagic {
		return nil, nil, errDamaged
	}
	if [32]byte(head[len(cacheMagic):]) != key {
		return nil, nil, errStale
	}
	rep := &Report{Format: c.str(), Why: c.str()}
	var v [7]uint64
	for k := range v {
		v[k] = c.u64()
	}
	rep.Gzip = v[0] == 1
	rep.Rows, rep.Blank, rep.DuplicateCells, rep.DuplicateRows, rep.Conflicts, rep.TiesDropped =
		int(v[1]), int(v[2]), int(v[3]), int(v[4]), int(v[5]), int(v[6])
	r := &model.Responses{Models: c.strs(), Items: c.strs()}
	flags := c.u64()
	if flags&1 != 0 {
		r.ItemText = c.strs()
	}
	if flags&2 != 0 {
		r.ItemGroup = c.strs()
	}
	n := c.size(4)
	if c.err != nil {
		return nil, nil, c.err
	}
	// The cells are read straight into their slices; their checksum runs on
	// one goroutine while the others check and unpack them.
	counts := make([]uint32, len(r.Models))
	r.Item = model.MakeLarge[int32](n)
	bits := make([]byte, (n+7)/8)
	var countBytes, itemBytes []byte
	if len(counts) > 0 {
		countBytes = unsafe.Slice((*byte)(unsafe.Pointer(&counts[0])), 4*len(counts))
	}
	if n > 0 {
		itemBytes = unsafe.Slice((*byte)(unsafe.Pointer(&r.Item[0])), 4*n)
	}
	sum := c.crc.Sum32()
	for _, b := range [][]byte{countBytes, itemBytes, bits} {
		if int64(len(b)) > c.left {
			return nil, nil, errDamaged
		}
		if _, err := io.ReadFull(c.r, b); err != nil {
			return nil, nil, errDamaged
		}
		c.left -= int64(len(b))
	}
	var tail [4]byte
	if _, err := io.ReadFull(c.r, tail[:]); err != nil || c.left != 0 {
		return nil, nil, errDamaged
	}
	crcDone := make(chan uint32, 1)
	go func() {
		s := sum
		for _, b := range [][]byte{countBytes, itemBytes, bits} {
			s = crc32.Update(s, castagnoli, b)
		}
		crcDone <- s
	}()
	// Meanwhile: item ids in range, the model of each cell from the run
	// lengths, the labels from their bits, on the remaining threads.
	ok := (r.ItemText == nil || len(r.ItemText) == len(r.Items)) && (r.ItemGroup == nil || len(r.ItemGroup) == len(r.Items))
	total := 0
	for _, k := range counts {
		total += int(k)
	}
	ok = ok && total == n
	if ok {
		r.Model = model.MakeLarge[int32](n)
		r.Label = model.MakeLarge[uint8](n)
		ok = unpackCells(r, counts, bits)
	}
	if binary.LittleEndian.Uint32(tail[:]) != <-crcDone || !ok {
		// The checksum is checked first: ids out of range are refused even
		// when it matches, rather than trusted.
		return nil, nil, errDamaged
	}
	return r, rep, nil
}

// unpackCells fills r.Model from the per-model counts and r.Label from the
// label bits, and checks every item id, over blocks of 64 cells shared out
// among the threads (each writes its own part). It reports whether all ids
// were in range.
func unpackCells(r *model.Responses, counts []uint32, bits []byte) bool {
	n := len(r.Item)
	if n == 0 {
		return true
	}
	threads := max(1, min(runtime.GOMAXPROCS(0)-1, 8))
	J := uint32(len(r.Items))
	var bad atomic.Bool
	var wg sync.WaitGroup
	for t := 0; t < threads; t++ {
		lo, hi := n*t/threads&^63, n*(t+1)/threads&^63
		if t == threads-1 {
			hi = n
		}
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			// The model of cell lo: the run that holds it.
			m, end := 0, int(counts[0])
			for end <= lo && m+1 < len(counts) {
				m++
				end += int(counts[m])
			}
			for at := lo; at < hi; {
				for end <= at {
					m++
					end += int(counts[m])
				}
				stop := min(end, hi)
				fillInt32(r.Model[at:stop], int32(m))
				at = stop
			}
			for _, j := range r.Item[lo:hi] {
				if uint32(j) >= J {
					bad.Store(true)
					return
				}
			}
			lab := r.Label[lo:hi]
			for k := range lab {
				lab[k] = bits[(lo+k)>>3] >> ((lo + k) & 7) & 1
			}
		}(lo, hi)
	}
	wg.Wait()
	return !bad.Load()
}

func fillInt32(s []int32, v int32) {
	for k := range s {
		s[k] = v
	}
}
