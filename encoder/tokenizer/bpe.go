package tokenizer

import (
	"fmt"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// byteLevelPreTokenize splits text as the ByteLevel pre-tokenizer of Hugging
// Face tokenizers does with use_regex (GPT-2's pattern, Radford et al. 2019):
//
//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// and maps every UTF-8 byte of each piece to GPT-2's printable stand-in
// (space → Ġ, newline → Ċ). Go's regexp has no look-ahead, so the pattern is
// scanned by hand.
func byteLevelPreTokenize(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		n := gpt2Match(s[i:])
		var b strings.Builder
		for _, c := range []byte(s[i : i+n]) {
			b.WriteRune(byteToRune[c])
		}
		out = append(out, b.String())
		i += n
	}
	return out
}

// gpt2Match is the length in bytes of the pattern's match at the start of s
// (non-empty).
func gpt2Match(s string) int {
	if s[0] == '\'' {
		for _, c := range []string{"'s", "'t", "'re", "'ve", "'m", "'ll", "'d"} {
			if strings.HasPrefix(s, c) {
				return len(c)
			}
		}
	}
	// run is the length of the longest prefix of s whose runes satisfy in.
	run := func(s string, in func(rune) bool) int {
		n := 0
		for n < len(s) {
			r, w := utf8.DecodeRuneInString(s[n:])
			if !in(r) {
				break
			}
			n += w
		}
		return n
	}
	isL := unicode.IsLetter
	isN := unicode.IsNumber
	isOther := func(r rune) bool { return !unicode.IsSpace(r) && !isL(r) && !isN(r) }
	rest, sp := s, 0
	if s[0] == ' ' {
		rest, sp = s[1:], 1
	}
	for _, class := range []func(rune) bool{isL, isN, isOther} {
		if n := run(rest, class); n > 0 {
			return sp + n
		}
	}
	// \s+(?!\S): a whitespace run that is not followed by a non-space, so
	// the last space of a run before a word is left to that word; else \s+.
	n := run(s, unicode.IsSpace)
	if n == len(s) {
		return n
	}
	_, last := utf8.DecodeLastRuneInString(s[:n])
	if n-last > 0 {
		return n - last
	}
	return n
}

// byteToRune is GPT-2's bytes_to_unicode: printable Latin-1 bytes stand for
// themselves, the other 68 bytes for U+0100 onwards, in byte order.
var byteToRune = func() [256]rune {
	var m [256]rune
	next := rune(256)
	for b := 0; b < 256; b++ {
		if (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			m[b] = rune(b)
		} else {
			m[b] = next
			next++
		}
	}
	return m
}()

// bpe is a byte-pair-encoding model (Sennrich et al. 2016) as Hugging Face
// tokenizers' BPE applies it: a word's symbols are merged pair by pair, the
// pair of lowest merge rank first, until no listed pair is left.
type bpe struct {
	vocab map[string]int32
	ranks map[[2]string]int

	mu    sync.Mutex
	cache map[string][]int32
}

func loadBPE(path string, m map[string]interface{}, vocab map[string]int) (*bpe, error) {
	for _, key := range []string{"continuing_subword_prefix", "end_of_word_suffix", "dropout"} {
		if v, ok := m[key]; ok && v != nil && v != "" {
			return nil, fmt.Errorf("%s: BPE %s %v is not supported", path, key, v)
		}
	}
	if v, _ := m["byte_fallback"].(bool); v {
		return nil, fmt.Errorf("%s: BPE byte_fallback is not supported", path)
	}
	b := &bpe{vocab: make(map[string]int32, len(vocab)), ranks: map[[2]string]int{}, cache: map[string][]int32{}}
	for k, v := range vocab {
		b.vocab[k] = int32(v)
	}
	merges, _ := m["merges"].([]interface{})
	for r, mg := range merges {
		var pair [2]string
		switch v := mg.(type) {
		case string: // "a b", the format before tokenizers 0.20
			a, c, ok := strings.Cut(v, " ")
			if !ok {
				return nil, fmt.Errorf("%s: model.merges[%d] %q is not two symbols", path, r, v)
			}
			pair = [2]string{a, c}
		case []interface{}: // ["a", "b"]
			a, ok1 := v[0].(string)
			c, ok2 := v[1].(string)
			if len(v) != 2 || !ok1 || !ok2 {
				return nil, fmt.Errorf("%s: model.merges[%d] is not two symbols", path, r)
			}
			pair = [2]string{a, c}
		default:
			return nil, fmt.Errorf("%s: model.merges[%d] is neither \"a b\" nor [\"a\", \"b\"]", path, r)
		}
		if _, ok := b.vocab[pair[0]+pair[1]]; !ok {
			return nil, fmt.Errorf("%s: model.merges[%d] makes %q, which is not in model.vocab", path, r, pair[0]+pair[1])
		}
		if _, dup := b.ranks[pair]; !dup {
			b.ranks[pair] = r
		}
	}
	return b, nil
}

// encode returns the ids of one pre-tokenised word.
func (b *bpe) encode(word string) ([]int32, error) {
	b.mu.Lock()
	ids, ok := b.cache[word]
	b.mu.Unlock()
	if ok {
		return ids, nil
	}
	var syms []string
	for _, r := range word {
		syms = append(syms, string(r))
	}
	for len(syms) > 1 {
		best, at := -1, -1
		for i := 0; i+1 < len(syms); i++ {
			if r, ok := b.ranks[[2]string{syms[i], syms[i+1]}]; ok && (best < 0 || r < best) {
				best, at = r, i
			}
		}
		if at < 0 {
			break
		}
		// Merge every occurrence of the pair, left to right, as one rank step.
		a, c := syms[at], syms[at+1]
		out := syms[:0:0]
		for i := 0; i < len(syms); i++ {
			if i+1 < len(syms) && syms[i] == a && syms[i+1] == c {
				out = append(out, a+c)
				i++
			} else {
				out = append(out, syms[i])
			}
		}
		syms = out
	}
	ids = make([]int32, len(syms))
	for i, s := range syms {
		id, ok := b.vocab[s]
		if !ok {
			return nil, fmt.Errorf("BPE: symbol %q of %q is not in the vocabulary (and the model has no unk_token)", s, word)
		}
		ids[i] = id
	}
	if len(word) < 256 {
		b.mu.Lock()
		if len(b.cache) > 100000 {
			clear(b.cache)
		}
		b.cache[word] = ids
		b.mu.Unlock()
	}
	return ids, nil
}
