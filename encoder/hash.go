package encoder

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/jeirt/jeirt/encoder/tokenizer"
	"github.com/jeirt/jeirt/model/limits"
)

// DefaultHashDim is the width of the hash encoder when the spec gives none.
// It equals all-MiniLM-L6-v2's width, so a config can swap the weightless
// default for a real encoder without changing the adapter's input size.
const DefaultHashDim = 384

// hashVersion names the feature recipe below. Any change to the features, the
// weights or the hash function must bump it, so cached vectors are not reused.
const hashVersion = "v1"

// hashSalt is hashed before every feature: the hash of feature f is FNV-1a 64
// (as in hash/fnv) of the bytes hashSalt + f. Fixed forever for hash/v1.
const hashSalt = "jeirt\x00"

// Hash is a deterministic, weightless text encoder: signed feature hashing
// (Weinberger et al., "Feature Hashing for Large Scale Multitask Learning",
// ICML 2009) of
//
//   - word unigrams, weight 1;
//   - word bigrams, weight 1;
//   - character 3-, 4- and 5-grams of each word wrapped in "<" and ">"
//     (fastText's subwords; Bojanowski et al. 2017), weight 1/sqrt(grams in the
//     word), so a long word counts about as much as a short one.
//
// A feature seen tf times with weights w₁…w_tf contributes
// sign · mean(w) · (1 + ln tf) to its bucket (sublinear term frequency).
//
// Text is first normalised by DefaultBertNormalizer (clean, lowercase, accents
// stripped, CJK ideographs split) and split by BertPreTokenizer; punctuation
// tokens are dropped. Each feature f (a string with a kind prefix "w:", "b:" or
// "c:") is hashed with FNV-1a 64 after the salt "jeirt\x00"; bucket h mod Dim, sign + when
// bit 63 of h is 0. The vector is scaled to unit length; a text with no
// words (empty, or only punctuation) gives the zero vector.
type Hash struct {
	// Width is the vector length. Zero means DefaultHashDim.
	Width int
	// Threads caps the goroutines used for one Encode call. Zero means
	// runtime.GOMAXPROCS(0).
	Threads int
}

// NewHash returns a hash encoder of width dim (DefaultHashDim if dim is 0).
func NewHash(dim int) (*Hash, error) {
	if dim < 0 || dim > limits.MaxDim {
		return nil, fmt.Errorf("hash encoder: dimension %d must be in [1, %d]", dim, limits.MaxDim)
	}
	return &Hash{Width: dim}, nil
}

// Dim implements Encoder.
func (h *Hash) Dim() int {
	if h.Width == 0 {
		return DefaultHashDim
	}
	return h.Width
}

// Fingerprint implements Encoder: kind, recipe version, hash and width.
func (h *Hash) Fingerprint() string {
	return fmt.Sprintf("hash/%s/fnv1a64/dim=%d", hashVersion, h.Dim())
}

// Encode implements Encoder. Batches of 256 texts or more are split across
// Threads goroutines; ctx is checked every 64 texts.
func (h *Hash) Encode(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	threads := h.Threads
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	if len(texts) < 256 {
		threads = 1
	}
	chunk := (len(texts) + threads - 1) / max(threads, 1)
	var wg sync.WaitGroup
	errs := make([]error, threads)
	for t := 0; t < threads; t++ {
		lo, hi := t*chunk, min((t+1)*chunk, len(texts))
		if lo >= hi {
			continue
		}
		wg.Add(1)
		go func(t, lo, hi int) {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				if (i-lo)%64 == 0 {
					if err := ctx.Err(); err != nil {
						errs[t] = err
						return
					}
				}
				out[i] = h.encodeOne(texts[i])
			}
		}(t, lo, hi)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// FNV-1a 64 (as in hash/fnv).
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// fnvString continues FNV-1a hash x with the bytes of p.
func fnvString(x uint64, p string) uint64 {
	for j := 0; j < len(p); j++ {
		x ^= uint64(p[j])
		x *= fnvPrime
	}
	return x
}

// fnvBytes continues FNV-1a hash x with the bytes of p.
func fnvBytes(x uint64, p []byte) uint64 {
	for _, c := range p {
		x ^= uint64(c)
		x *= fnvPrime
	}
	return x
}

// featureSeed is FNV-1a 64 of hashSalt, kind and ':', where every feature of
// that kind starts.
func featureSeed(kind byte) uint64 {
	x := fnvString(fnvOffset, hashSalt)
	x ^= uint64(kind)
	x *= fnvPrime
	x ^= ':'
	x *= fnvPrime
	return x
}

var (
	seedWord   = featureSeed('w')
	seedBigram = featureSeed('b')
	seedChar   = featureSeed('c')
)

// hashFeature is FNV-1a 64 of hashSalt, kind, ':', then parts separated by a
// 0xff byte (never found in UTF-8).
func hashFeature(kind byte, parts ...string) uint64 {
	x := featureSeed(kind)
	for i, p := range parts {
		if i > 0 {
			x ^= 0xff
			x *= fnvPrime
		}
		x = fnvString(x, p)
	}
	return x
}

// hashChunk is about how much text is normalised at a time: the text is cut
// at ASCII whitespace, where cutting changes no word (every step of the
// normaliser maps a code point on its own, and NFD's reordering never
// crosses a space), so a long text never has its normalised copy or its word
// list held whole.
const hashChunk = 64 << 10

// eachHashWord calls fn with the normalised words of text that the hash
// encoder uses, in order: BERT-normalised, pre-tokenised, punctuation
// dropped. A word is valid only during the call.
func eachHashWord(text string, fn func(w string)) {
	for lo := 0; lo < len(text); {
		hi := len(text)
		if lo+hashChunk < len(text) {
			if k := strings.IndexAny(text[lo+hashChunk:], " \t\n\v\f\r"); k >= 0 {
				hi = lo + hashChunk + k
			}
		}
		tokenizer.EachBertPiece(tokenizer.DefaultBertNormalizer.Normalize(text[lo:hi]), func(w string) {
			if hasWordRune(w) {
				fn(w)
			}
		})
		lo = hi
	}
}

func hasWordRune(w string) bool {
	for _, r := range w {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsNumber(r) {
			return true
		}
	}
	return false
}

// hashFeat is one distinct feature of a text: its key, term frequency and
// summed weight.
type hashFeat struct {
	key  uint64
	tf   int
	sumW float64
}

// hashScratch is encodeOne's working memory, reused across calls (a pool,
// so concurrent encodes each get their own).
type hashScratch struct {
	feats  []hashFeat
	index  map[uint64]int32
	bounds []int
	prev   []byte
	bw     []byte
	v      []float64
}

var hashScratchPool = sync.Pool{New: func() any { return &hashScratch{index: map[uint64]int32{}} }}

func (h *Hash) encodeOne(text string) []float32 {
	sc := hashScratchPool.Get().(*hashScratch)
	defer func() {
		// A huge text's scratch is dropped rather than kept for short ones.
		if cap(sc.feats) <= 1<<16 {
			clear(sc.index)
			hashScratchPool.Put(sc)
		}
	}()
	feats := sc.feats[:0] // in first-seen order
	index := sc.index
	add := func(key uint64, w float64) {
		i, ok := index[key]
		if !ok {
			i = int32(len(feats))
			index[key] = i
			feats = append(feats, hashFeat{key: key})
		}
		feats[i].tf++
		feats[i].sumW += w
	}
	// The previous word (for bigrams) and "<word>" (for character n-grams)
	// are kept in reused buffers: no string per word.
	bounds, prev, bw := sc.bounds[:0], sc.prev[:0], sc.bw[:0]
	first := true
	eachHashWord(text, func(w string) {
		add(fnvString(seedWord, w), 1)
		if !first {
			x := fnvBytes(seedBigram, prev)
			x ^= 0xff
			x *= fnvPrime
			add(fnvString(x, w), 1)
		}
		first = false
		prev = append(prev[:0], w...)
		// Character n-grams are substrings of "<w>" between rune boundaries.
		bw = append(append(append(bw[:0], '<'), w...), '>')
		bounds = bounds[:0]
		for j := 0; j < len(bw); {
			bounds = append(bounds, j)
			_, size := utf8.DecodeRune(bw[j:])
			j += size
		}
		bounds = append(bounds, len(bw))
		runes := len(bounds) - 1
		grams := 0
		for n := 3; n <= 5; n++ {
			grams += max(runes-n+1, 0)
		}
		cw := 1 / math.Sqrt(float64(max(grams, 1)))
		for n := 3; n <= 5; n++ {
			for s := 0; s+n <= runes; s++ {
				add(fnvBytes(seedChar, bw[bounds[s]:bounds[s+n]]), cw)
			}
		}
	})
	sc.prev, sc.bw = prev, bw
	sc.feats, sc.bounds = feats, bounds
	dim := uint64(h.Dim())
	if cap(sc.v) < int(dim) {
		sc.v = make([]float64, dim)
	}
	v := sc.v[:dim]
	clear(v)
	// Summing in first-seen order keeps the float64 sums, and so the
	// float32 vector, identical from run to run.
	for _, f := range feats {
		val := f.sumW / float64(f.tf) * (1 + math.Log(float64(f.tf)))
		if f.key>>63 != 0 {
			val = -val
		}
		v[f.key%dim] += val
	}
	var ss float64
	for _, x := range v {
		ss += x * x
	}
	out := make([]float32, dim)
	if ss == 0 {
		return out
	}
	inv := 1 / math.Sqrt(ss)
	for i, x := range v {
		out[i] = float32(x * inv)
	}
	return out
}
