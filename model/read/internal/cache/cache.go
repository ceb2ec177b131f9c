// Package cache writes and loads the binary response cache of package
// model/read: the cells read from a text file, so that a later read of the
// same content loads them instead of parsing the text. One file per (text
// file, reader options) under the cache folder (Path):
//
//	magic "JEIRTRC2" | key: options (32 bytes), size, modification time and
//	xxHash64 of the text file (8 bytes each) | counts and the read report |
//	names | cells per model (uint32 each) | item of each cell (int32) |
//	labels, one bit per cell | with trials: trials of each cell (int32) |
//	with successes: successes of each cell (float64) | CRC-32C of everything
//	before (4 bytes)
//
// all little-endian. The options part is a SHA-256 of the reader's options;
// the hash covers every byte of the text file, so a cache is used only for
// the content it was written from, whatever the file's size or time say
// (unless the reader is told to trust the time). Cells are stored sorted by
// (model, item), as the readers leave them, so the model of each cell is a
// run length and a 90-million-cell file caches in about 4.1 bytes per cell.
package cache

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
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
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/machine"
)

const cacheMagic = "JEIRTRC2"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// LittleEndian is true on the hosts whose memory order matches the cache's,
// where int32 slices are written and read without conversion: the only hosts
// that cache.
var LittleEndian = func() bool { x := uint16(1); return *(*byte)(unsafe.Pointer(&x)) == 1 }()

// Path returns the cache file under dir ("" means jeirt/responses under the
// user cache folder) for the text file path read with format and dup.
func Path(dir, path, format, dup string) (string, error) {
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

// Key is what a cache was written for: the reader's options (OptionsKey)
// and the text file's size, modification time (Unix nanoseconds) and
// content hash (xxHash64).
type Key struct {
	Options [32]byte
	Size    int64
	ModTime int64
	Sum     uint64
}

const keyBytes = 32 + 3*8

// OptionsKey is the key of the reader's options format and dup.
func OptionsKey(format, dup string) [32]byte {
	return sha256.Sum256([]byte(cacheMagic + "\x00" + format + "\x00" + dup))
}

// ReadKey reads the key at the start of the cache file path.
func ReadKey(path string) (Key, error) {
	var k Key
	if err := regularCache(path); err != nil {
		return k, err
	}
	in, err := fileio.OpenInput(path)
	if err != nil {
		return k, err
	}
	defer in.Close()
	var head [len(cacheMagic) + keyBytes]byte
	if _, err := io.ReadFull(in, head[:]); err != nil {
		return k, errDamaged
	}
	if string(head[:len(cacheMagic)]) != cacheMagic {
		if string(head[:len(cacheMagic)-1]) == cacheMagic[:len(cacheMagic)-1] {
			return k, errors.New("written by an older jeirt")
		}
		return k, errDamaged
	}
	return decodeKey(head[len(cacheMagic):]), nil
}

// regularCache refuses a cache path that is not a regular file (a FIFO
// there would block the read): it is rebuilt in its place.
func regularCache(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return errors.New("not a regular file")
	}
	return nil
}

func decodeKey(b []byte) Key {
	var k Key
	copy(k.Options[:], b[:32])
	k.Size = int64(binary.LittleEndian.Uint64(b[32:]))
	k.ModTime = int64(binary.LittleEndian.Uint64(b[40:]))
	k.Sum = binary.LittleEndian.Uint64(b[48:])
	return k
}

func (k Key) encode() []byte {
	b := make([]byte, keyBytes)
	copy(b, k.Options[:])
	binary.LittleEndian.PutUint64(b[32:], uint64(k.Size))
	binary.LittleEndian.PutUint64(b[40:], uint64(k.ModTime))
	binary.LittleEndian.PutUint64(b[48:], k.Sum)
	return b
}

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

// Summary is what a cache keeps of the read report besides the cells: the
// layout read and why, whether the text was gzip-compressed, the rows read,
// and the counts of blank and duplicate cells (read.Report's fields of the
// same names).
type Summary struct {
	Format, Why string
	Gzip        bool
	Rows, Blank int

	DuplicateCells, DuplicateRows, Conflicts, TiesDropped int
}

// Write writes the cache file path for r, read with the report rep from the
// text file of key, atomically. The cells must be sorted by (model, item).
func Write(path string, key Key, r *model.Responses, rep Summary) error {
	n := r.Len()
	counts := make([]uint32, r.NumModels())
	for c, m := range r.Model {
		if c > 0 && (m < r.Model[c-1] || m == r.Model[c-1] && r.Item[c] <= r.Item[c-1]) {
			return errors.New("cells are not sorted by model and item")
		}
		counts[m]++
	}
	// Never through a link: a cache file replaced by a symlink to a file of
	// the user's is replaced, not written through.
	return fileio.WriteCacheFile(path, func(w io.Writer) error {
		c := &cacheWriter{w: w, crc: crc32.New(castagnoli)}
		c.bytes([]byte(cacheMagic))
		c.bytes(key.encode())
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
		if r.Trials != nil {
			flags |= 4
		}
		if r.Successes != nil {
			flags |= 8
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
		if r.Trials != nil && n > 0 {
			c.bytes(unsafe.Slice((*byte)(unsafe.Pointer(&r.Trials[0])), 4*n))
		}
		if r.Successes != nil && n > 0 {
			c.bytes(unsafe.Slice((*byte)(unsafe.Pointer(&r.Successes[0])), 8*n))
		}
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

// Load reads the cache file path, verifying its checksum and that its
// contents are possible (names unique, cells in range and each (model,
// item) once), and returns its key; it returns an error wrapping
// os.ErrNotExist when there is none.
func Load(path string) (*model.Responses, Summary, Key, error) {
	var none Summary
	var key Key
	if err := regularCache(path); err != nil {
		return nil, none, key, err
	}
	in, err := fileio.OpenInput(path)
	if err != nil {
		return nil, none, key, err
	}
	defer in.Close()
	if !in.Regular {
		return nil, none, key, errDamaged
	}
	c := &cacheReader{r: in, crc: crc32.New(castagnoli), left: in.Size - 4}
	var head [len(cacheMagic) + keyBytes]byte
	c.bytes(head[:])
	if c.err != nil || string(head[:len(cacheMagic)]) != cacheMagic {
		return nil, none, key, errDamaged
	}
	key = decodeKey(head[len(cacheMagic):])
	rep := Summary{Format: c.str(), Why: c.str()}
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
		return nil, none, key, c.err
	}
	// The cells are read straight into their slices; their checksum runs on
	// one goroutine while the others check and unpack them.
	counts := make([]uint32, len(r.Models))
	r.Item = machine.MakeLarge[int32](n)
	bits := make([]byte, (n+7)/8)
	var countBytes, itemBytes, trialBytes, succBytes []byte
	if len(counts) > 0 {
		countBytes = unsafe.Slice((*byte)(unsafe.Pointer(&counts[0])), 4*len(counts))
	}
	if flags&4 != 0 {
		if int64(n)*4 > c.left {
			return nil, none, key, errDamaged
		}
		r.Trials = machine.MakeLarge[int32](n)
	}
	if flags&8 != 0 {
		if int64(n)*8 > c.left {
			return nil, none, key, errDamaged
		}
		r.Successes = machine.MakeLarge[float64](n)
	}
	if n > 0 {
		itemBytes = unsafe.Slice((*byte)(unsafe.Pointer(&r.Item[0])), 4*n)
		if r.Trials != nil {
			trialBytes = unsafe.Slice((*byte)(unsafe.Pointer(&r.Trials[0])), 4*n)
		}
		if r.Successes != nil {
			succBytes = unsafe.Slice((*byte)(unsafe.Pointer(&r.Successes[0])), 8*n)
		}
	}
	sum := c.crc.Sum32()
	parts := [][]byte{countBytes, itemBytes, bits, trialBytes, succBytes}
	for _, b := range parts {
		if int64(len(b)) > c.left {
			return nil, none, key, errDamaged
		}
		if _, err := io.ReadFull(c.r, b); err != nil {
			return nil, none, key, errDamaged
		}
		c.left -= int64(len(b))
	}
	var tail [4]byte
	if _, err := io.ReadFull(c.r, tail[:]); err != nil || c.left != 0 {
		return nil, none, key, errDamaged
	}
	crcDone := make(chan uint32, 1)
	go func() {
		s := sum
		for _, b := range parts {
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
		r.Model = machine.MakeLarge[int32](n)
		r.Label = machine.MakeLarge[uint8](n)
		ok = unpackCells(r, counts, bits)
	}
	ok = ok && uniqueNames(r.Models) && uniqueNames(r.Items)
	// Trials and successes must be possible and agree with the labels.
	ok = ok && flags < 16 && (!r.Weighted() || r.Validate() == nil)
	if binary.LittleEndian.Uint32(tail[:]) != <-crcDone || !ok {
		// The checksum is checked first: impossible contents (ids out of
		// range, a name or a cell twice) are refused even when it matches,
		// rather than trusted.
		return nil, none, key, errDamaged
	}
	return r, rep, key, nil
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
			// Each item in range, and within a model's run strictly
			// increasing: no cell twice.
			for k := lo; k < hi; k++ {
				if uint32(r.Item[k]) >= J || k > lo && r.Model[k] == r.Model[k-1] && r.Item[k] <= r.Item[k-1] {
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
	if bad.Load() {
		return false
	}
	// The pairs across the threads' parts.
	for t := 1; t < threads; t++ {
		k := n * t / threads &^ 63
		if k > 0 && k < n && r.Model[k] == r.Model[k-1] && r.Item[k] <= r.Item[k-1] {
			return false
		}
	}
	return true
}

// uniqueNames reports whether no name appears twice in names.
func uniqueNames(names []string) bool {
	seen := make(map[string]struct{}, len(names))
	for _, s := range names {
		if _, ok := seen[s]; ok {
			return false
		}
		seen[s] = struct{}{}
	}
	return true
}

func fillInt32(s []int32, v int32) {
	for k := range s {
		s[k] = v
	}
}
