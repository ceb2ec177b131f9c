package encoder

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/tensorfile"
)

// Cache keeps encoded item vectors on disk so that training and repeated
// `jeirt encode` runs do not encode the same text twice.
//
// Layout: Dir/<first 16 hex digits of sha256(fingerprint)>/ holds a file
// "fingerprint" (the full fingerprint, checked on every read) and parts
// named part-<unix nanoseconds>.safetensors, each with a tensor "embeddings"
// and metadata "ids" and "text_sha256" (JSON lists). Every part is written
// atomically; a later part overrides an earlier one for the same id. When a
// folder holds more than 8 parts they are merged into one.
type Cache struct {
	Dir string
}

// cacheEntry is one cached vector and the hash of the text it encodes.
type cacheEntry struct {
	textHash string
	vec      []float32
}

// TextHash is the hex sha256 of a text, the cache's check that an item's
// text has not changed since it was encoded.
func TextHash(text string) string {
	s := sha256.Sum256([]byte(text))
	return hex.EncodeToString(s[:])
}

func (c *Cache) folder(fingerprint string) string {
	s := sha256.Sum256([]byte(fingerprint))
	return filepath.Join(c.Dir, hex.EncodeToString(s[:8]))
}

func (c *Cache) parts(fingerprint string) (string, []string, error) {
	dir := c.folder(fingerprint)
	b, err := fileio.ReadInputFile(filepath.Join(dir, "fingerprint"), fileio.MaxDocumentBytes, "a cache fingerprint")
	if os.IsNotExist(err) {
		return dir, nil, nil
	}
	if err != nil {
		return dir, nil, err
	}
	if string(b) != fingerprint {
		return dir, nil, fmt.Errorf("cache %s holds fingerprint %q, not %q (hash collision or a damaged cache: remove the folder)", dir, b, fingerprint)
	}
	parts, err := filepath.Glob(filepath.Join(dir, "part-*.safetensors"))
	sort.Strings(parts)
	return dir, parts, err
}

// load returns every cached vector of the encoder, by item id.
func (c *Cache) load(fingerprint string) (map[string]cacheEntry, []string, error) {
	_, parts, err := c.parts(fingerprint)
	if err != nil {
		return nil, nil, err
	}
	m := make(map[string]cacheEntry)
	for _, p := range parts {
		st, err := tensorfile.ReadSafetensors(p)
		if err != nil {
			return nil, nil, fmt.Errorf("cache: %w", err)
		}
		var ids, hashes []string
		if err := json.Unmarshal([]byte(st.Metadata["ids"]), &ids); err != nil {
			return nil, nil, fmt.Errorf("cache %s: metadata ids: %w", p, err)
		}
		if err := json.Unmarshal([]byte(st.Metadata["text_sha256"]), &hashes); err != nil {
			return nil, nil, fmt.Errorf("cache %s: metadata text_sha256: %w", p, err)
		}
		t := st.Tensors["embeddings"]
		if len(t.Shape) != 2 || t.Shape[0] != len(ids) || len(hashes) != len(ids) {
			return nil, nil, fmt.Errorf("cache %s: %d ids, %d hashes for embeddings %v", p, len(ids), len(hashes), t.Shape)
		}
		d := t.Shape[1]
		for i, id := range ids {
			vec := t.Data[i*d : (i+1)*d]
			if k, x, bad := nonFinite(vec); bad {
				return nil, nil, fmt.Errorf("cache %s: item %q: value %d of its vector is %v: the part is damaged; remove it and the items are encoded again", p, id, k, x)
			}
			m[id] = cacheEntry{textHash: hashes[i], vec: vec}
		}
	}
	return m, parts, nil
}

// store writes one new part for ids/hashes/vecs.
func (c *Cache) store(fingerprint string, ids, hashes []string, vecs [][]float32, dim int) error {
	dir := c.folder(fingerprint)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	fp := filepath.Join(dir, "fingerprint")
	if _, err := os.Stat(fp); os.IsNotExist(err) {
		if err := fileio.WriteCacheFile(fp, func(w io.Writer) error {
			_, err := io.WriteString(w, fingerprint)
			return err
		}); err != nil {
			return err
		}
	}
	idsJSON, _ := json.Marshal(ids)
	hashJSON, _ := json.Marshal(hashes)
	data := make([]float32, 0, len(vecs)*dim)
	for _, v := range vecs {
		data = append(data, v...)
	}
	name := filepath.Join(dir, fmt.Sprintf("part-%020d.safetensors", time.Now().UnixNano()))
	return fileio.WriteCacheFile(name, func(w io.Writer) error {
		return tensorfile.WriteSafetensors(w, map[string]tensorfile.Tensor{"embeddings": {Shape: []int{len(vecs), dim}, Data: data}},
			map[string]string{"ids": string(idsJSON), "text_sha256": string(hashJSON), "fingerprint": fingerprint})
	})
}

// compact merges all parts into one when there are more than 8.
func (c *Cache) compact(fingerprint string, dim int) error {
	m, parts, err := c.load(fingerprint)
	if err != nil || len(parts) <= 8 {
		return err
	}
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	hashes := make([]string, len(ids))
	vecs := make([][]float32, len(ids))
	for i, id := range ids {
		hashes[i], vecs[i] = m[id].textHash, m[id].vec
	}
	if err := c.store(fingerprint, ids, hashes, vecs, dim); err != nil {
		return err
	}
	for _, p := range parts {
		os.Remove(p)
	}
	return nil
}

// ItemOptions are the settings of EncodeItems.
type ItemOptions struct {
	// Cache, when not nil, is read first and receives what is encoded.
	Cache *Cache
	// Chunk is the number of texts per Encode call between progress reports
	// and cache writes. Zero means 1024.
	Chunk int
	// Progress, when not nil, is called after each chunk with the items done
	// (cached ones included) and the total.
	Progress func(done, total int)
}

// EncodeItems returns one vector per item. An ItemEncoder (precomputed
// vectors) looks the ids up; any other encoder encodes the texts, skipping
// items whose id and text hash are in the cache, and adds the new vectors
// to the cache chunk by chunk, so an interrupted run keeps what it finished.
// This is how training gets its question features.
func EncodeItems(ctx context.Context, enc Encoder, ids, texts []string, opt ItemOptions) ([][]float32, error) {
	if ie, ok := enc.(ItemEncoder); ok {
		return ie.EncodeItems(ctx, ids)
	}
	if len(ids) != len(texts) {
		return nil, fmt.Errorf("EncodeItems: %d ids for %d texts", len(ids), len(texts))
	}
	out := make([][]float32, len(ids))
	hashes := make([]string, len(ids))
	var todo []int
	var cached map[string]cacheEntry
	if opt.Cache != nil {
		var err error
		if cached, _, err = opt.Cache.load(enc.Fingerprint()); err != nil {
			return nil, err
		}
	}
	for i, t := range texts {
		hashes[i] = TextHash(t)
		if e, ok := cached[ids[i]]; ok && e.textHash == hashes[i] && len(e.vec) == enc.Dim() {
			out[i] = e.vec
			continue
		}
		todo = append(todo, i)
	}
	chunk := opt.Chunk
	if chunk <= 0 {
		chunk = 1024
	}
	done := len(ids) - len(todo)
	if opt.Progress != nil {
		opt.Progress(done, len(ids))
	}
	for lo := 0; lo < len(todo); lo += chunk {
		idx := todo[lo:min(lo+chunk, len(todo))]
		batch := make([]string, len(idx))
		for k, i := range idx {
			batch[k] = texts[i]
		}
		vecs, err := enc.Encode(ctx, batch)
		if err != nil {
			return nil, err
		}
		if len(vecs) != len(idx) {
			return nil, fmt.Errorf("the encoder %s gave %d vectors for %d texts", enc.Fingerprint(), len(vecs), len(idx))
		}
		for k, v := range vecs {
			if at, x, bad := nonFinite(v); bad {
				return nil, fmt.Errorf("the encoder %s gave item %q a vector whose value %d is %v (its weights, or this text, give a %w); nothing of it was cached", enc.Fingerprint(), ids[idx[k]], at, x, ErrNonFinite)
			}
		}
		cids := make([]string, len(idx))
		chashes := make([]string, len(idx))
		for k, i := range idx {
			out[i] = vecs[k]
			cids[k], chashes[k] = ids[i], hashes[i]
		}
		if opt.Cache != nil {
			if err := opt.Cache.store(enc.Fingerprint(), cids, chashes, vecs, enc.Dim()); err != nil {
				return nil, fmt.Errorf("writing the embedding cache: %w", err)
			}
		}
		done += len(idx)
		if opt.Progress != nil {
			opt.Progress(done, len(ids))
		}
	}
	if opt.Cache != nil && len(todo) > 0 {
		if err := opt.Cache.compact(enc.Fingerprint(), enc.Dim()); err != nil {
			return nil, fmt.Errorf("compacting the embedding cache: %w", err)
		}
	}
	return out, nil
}

// ErrNonFinite is wrapped by EncodeItems' error for an encoder's NaN or
// infinite output.
var ErrNonFinite = errors.New("non-finite vector")

// nonFinite reports the first NaN or infinite value of v and its index.
func nonFinite(v []float32) (int, float32, bool) {
	for k, x := range v {
		if x-x != 0 {
			return k, x, true
		}
	}
	return 0, 0, false
}
