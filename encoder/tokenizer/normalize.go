package tokenizer

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// BertNormalizer reproduces the Hugging Face tokenizers BertNormalizer
// (tokenizers/src/normalizers/bert.rs), step for step and in the same order:
//
//  1. clean_text: drop U+0000, U+FFFD and every "other" code point (Cc, Cf,
//     Co, Cs and unassigned) except tab, newline and carriage return; map every
//     White_Space code point (NBSP included) to a plain space;
//  2. handle_chinese_chars: put a space on each side of every CJK ideograph;
//  3. strip_accents (which follows Lowercase when unset): NFD, then drop Mn;
//  4. lowercase: per code point, as Rust's char::to_lowercase does.
//
// sugarme/tokenizer v0.3.0 gets steps 1 and 3 wrong (NBSP kept, accents kept,
// Hangul and kana not decomposed), which is why jeirt carries its own.
type BertNormalizer struct {
	CleanText          bool
	HandleChineseChars bool
	// StripAccents nil means "same as Lowercase", as in tokenizer.json's null.
	StripAccents *bool
	Lowercase    bool
}

// DefaultBertNormalizer is the bert-base-uncased setting: every step on.
var DefaultBertNormalizer = BertNormalizer{CleanText: true, HandleChineseChars: true, Lowercase: true}

// Normalize returns s after the steps that are switched on.
func (n BertNormalizer) Normalize(s string) string {
	if n.CleanText {
		s = cleanText(s)
	}
	if n.HandleChineseChars {
		s = padChineseChars(s)
	}
	strip := n.Lowercase
	if n.StripAccents != nil {
		strip = *n.StripAccents
	}
	if strip {
		s = stripAccents(s)
	}
	if n.Lowercase {
		s = lowercase(s)
	}
	return s
}

func cleanText(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == 0 || r == unicode.ReplacementChar || isControl(r):
		case isWhitespace(r):
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isWhitespace is Rust's char::is_whitespace (the White_Space property).
func isWhitespace(r rune) bool {
	if r < utf8.RuneSelf {
		return r == ' ' || r >= '\t' && r <= '\r'
	}
	return unicode.Is(unicode.White_Space, r)
}

// isControl is tokenizers' is_control: any "other" category (Cc, Cf, Co, Cs
// or unassigned) except \t, \n and \r. Unassigned means in no general category.
func isControl(r rune) bool {
	switch r {
	case '\t', '\n', '\r':
		return false
	}
	if r < utf8.RuneSelf {
		// ASCII: the C0 controls and DEL are Cc; every other code is assigned.
		return r < 0x20 || r == 0x7f
	}
	if unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs) {
		return true
	}
	return !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z)
}

// isChineseChar is the CJK Unified Ideographs block list of BERT's original
// tokenization.py, which tokenizers copies.
func isChineseChar(r rune) bool {
	return (r >= 0x4E00 && r <= 0x9FFF) ||
		(r >= 0x3400 && r <= 0x4DBF) ||
		(r >= 0x20000 && r <= 0x2A6DF) ||
		(r >= 0x2A700 && r <= 0x2B73F) ||
		(r >= 0x2B740 && r <= 0x2B81F) ||
		(r >= 0x2B920 && r <= 0x2CEAF) ||
		(r >= 0xF900 && r <= 0xFAFF) ||
		(r >= 0x2F800 && r <= 0x2FA1F)
}

func padChineseChars(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		if isChineseChar(r) {
			b.WriteByte(' ')
			b.WriteRune(r)
			b.WriteByte(' ')
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func stripAccents(s string) string {
	d := norm.NFD.String(s)
	var b strings.Builder
	b.Grow(len(d))
	for _, r := range d {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// lowercase maps each code point on its own, like Rust's char::to_lowercase:
// no final-sigma context, and U+0130 becomes "i" plus a combining dot, the one
// unconditional multi-rune lowercase mapping in SpecialCasing.txt.
func lowercase(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r == 'İ' {
			b.WriteString("i\u0307")
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// isBertPunctuation is BertPreTokenizer's test: ASCII punctuation (which
// includes symbols such as $ + < = > ^ ` | ~) or any Unicode P category.
func isBertPunctuation(r rune) bool {
	if r < 128 {
		return (r >= 33 && r <= 47) || (r >= 58 && r <= 64) || (r >= 91 && r <= 96) || (r >= 123 && r <= 126)
	}
	return unicode.IsPunct(r)
}

// BertPreTokenize splits normalised text as BertPreTokenizer does: whitespace
// separates words and is dropped, every punctuation code point is a word of
// its own.
func BertPreTokenize(s string) []string {
	var words []string
	EachBertPiece(s, func(w string) { words = append(words, w) })
	return words
}

// EachBertPiece calls fn with each piece BertPreTokenize returns, in order,
// without collecting them.
func EachBertPiece(s string, fn func(string)) {
	start := -1
	for i, r := range s {
		switch {
		case isWhitespace(r):
			if start >= 0 {
				fn(s[start:i])
				start = -1
			}
		case isBertPunctuation(r):
			if start >= 0 {
				fn(s[start:i])
				start = -1
			}
			fn(s[i : i+utf8.RuneLen(r)])
		default:
			if start < 0 {
				start = i
			}
		}
	}
	if start >= 0 {
		fn(s[start:])
	}
}
