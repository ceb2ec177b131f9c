package encoder

import (
	"context"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/encoder/tokenizer"
)

// referenceHash is the hash encoder as first written: the whole text
// normalised at once, every word kept as a string, features hashed from
// strings. The streaming encoder must give the same vectors, bit for bit.
func referenceHash(dim int, text string) []float32 {
	var words []string
	for _, w := range tokenizer.BertPreTokenize(tokenizer.DefaultBertNormalizer.Normalize(text)) {
		if hasWordRune(w) {
			words = append(words, w)
		}
	}
	type feat struct {
		key  uint64
		tf   int
		sumW float64
	}
	var feats []feat
	index := map[uint64]int{}
	add := func(key uint64, w float64) {
		i, ok := index[key]
		if !ok {
			i = len(feats)
			index[key] = i
			feats = append(feats, feat{key: key})
		}
		feats[i].tf++
		feats[i].sumW += w
	}
	for i, w := range words {
		add(hashFeature('w', w), 1)
		if i > 0 {
			add(hashFeature('b', words[i-1], w), 1)
		}
		bw := "<" + w + ">"
		var bounds []int
		for j := range bw {
			bounds = append(bounds, j)
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
				add(hashFeature('c', bw[bounds[s]:bounds[s+n]]), cw)
			}
		}
	}
	v := make([]float64, dim)
	for _, f := range feats {
		val := f.sumW / float64(f.tf) * (1 + math.Log(float64(f.tf)))
		if f.key>>63 != 0 {
			val = -val
		}
		v[f.key%uint64(dim)] += val
	}
	var ss float64
	for _, x := range v {
		ss += x * x
	}
	out := make([]float32, dim)
	if ss == 0 {
		return out
	}
	for i, x := range v {
		out[i] = float32(x * (1 / math.Sqrt(ss)))
	}
	return out
}

// mixedText is n bytes or more of words with accents, combining marks, CJK,
// a dotted capital I, punctuation, control characters, invalid UTF-8 and
// every kind of whitespace, in random order.
func mixedText(rng *rand.Rand, n int) string {
	pieces := []string{"Café", "naïve", "İstanbul", "中文字", "x\u0301y", "e\u0301\u0323", "ÅNGSTRÖM", "don't", "C++",
		"3.14", "α-β", "\x00", "\x07", "\xff", "\u200b", "—", "Ⅻ", "١٢٣", "a", "the", "of", "word", "\u0301", "日本語テキスト"}
	seps := []string{" ", "  ", "\t", "\n", "\r\n", "\v", "\f", "\u00a0", "\u3000", "", ",", ". "}
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(pieces[rng.IntN(len(pieces))])
		b.WriteString(seps[rng.IntN(len(seps))])
	}
	return b.String()
}

// The streaming hash encoder gives the vectors of the whole-text one, bit
// for bit, on texts short and long (cut into several normalisation chunks).
func TestHashStreamingSameVectors(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	texts := []string{"", "   ", "Hello, world!", "a b", strings.Repeat("x", 3*hashChunk+5)}
	for _, n := range []int{10, 1000, hashChunk - 3, hashChunk + 1, 3*hashChunk + 17} {
		texts = append(texts, mixedText(rng, n))
	}
	for _, dim := range []int{7, 384} {
		h := &Hash{Width: dim}
		got, err := h.Encode(context.Background(), texts)
		if err != nil {
			t.Fatal(err)
		}
		for i, text := range texts {
			want := referenceHash(dim, text)
			for k := range want {
				if math.Float32bits(got[i][k]) != math.Float32bits(want[k]) {
					t.Fatalf("dim %d, text %d (%d bytes): component %d is %v, want %v", dim, i, len(text), k, got[i][k], want[k])
				}
			}
		}
	}
}

// The hash encoder allocates a few bytes per byte of text (the normalised
// copy of one chunk at a time), plus its distinct features; it once took
// about 140 bytes per byte.
func TestHashAllocsPerByte(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	words := strings.Fields("the model answers each question of the benchmark and the item response theory fit " +
		"estimates its ability while every item gets a difficulty and a discrimination from the responses")
	var b strings.Builder
	for b.Len() < 4<<20 {
		b.WriteString(words[rng.IntN(len(words))])
		b.WriteByte(" \n"[rng.IntN(2)])
	}
	text := b.String()
	h := &Hash{Width: 384}
	h.encodeOne("warm up")
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	h.encodeOne(text)
	runtime.ReadMemStats(&m1)
	perByte := float64(m1.TotalAlloc-m0.TotalAlloc) / float64(len(text))
	t.Logf("%d bytes of text: %.2f bytes allocated per byte", len(text), perByte)
	if perByte > maxHashAllocPerByte {
		t.Errorf("%.2f bytes allocated per byte of text, want at most %d", perByte, maxHashAllocPerByte)
	}
}

// maxHashAllocPerByte bounds the test; docs/limits.md states the 4.5 measured.
const maxHashAllocPerByte = 8
