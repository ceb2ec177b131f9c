// Package tokenizer reads Hugging Face tokenizer.json files and gives their
// ids exactly: BertNormalizer and WordPiece (BERT, MPNet), NFC and byte-level
// BPE (ModernBERT), added tokens and the post-processor's template.
package tokenizer

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/jeirt/jeirt/model/limits"
	"github.com/sugarme/tokenizer"
	"github.com/sugarme/tokenizer/model/wordpiece"
	"github.com/sugarme/tokenizer/util"
	"golang.org/x/text/unicode/norm"
)

// Tokenizer gives the ids of Hugging Face tokenizers exactly for the
// tokenizer.json files of the encoders jeirt runs:
//
//   - BERT and MPNet: BertNormalizer, BertPreTokenizer, WordPiece, a
//     "[CLS] $A [SEP]" or "<s> $A </s>" template;
//   - ModernBERT (OLMo's byte-level BPE): NFC or no normalizer, the ByteLevel
//     pre-tokenizer (GPT-2 split regex, bytes mapped to printable characters),
//     BPE merges, added tokens such as whitespace runs, a "[CLS] $A [SEP]"
//     template.
//
// tokenizer.json is parsed and the WordPiece model is built by
// github.com/sugarme/tokenizer; the steps that library gets wrong or lacks are
// ours: added tokens are matched as HF's AddedVocabulary matches them
// (normalized=false ones on the raw text, normalized=true ones on the
// normalised text, leftmost and longest, with lstrip/rstrip taking the
// whitespace beside them), BertNormalizer, the byte-level split and BPE, and
// truncation keeps MaxLen ids counting the template's special tokens.
type Tokenizer struct {
	// MaxLen is the most ids an encoding holds, special tokens included.
	MaxLen int

	normalize   func(string) string
	preTokenize func(string) []string
	model       func(word string) ([]int32, error)
	prefix      []int32 // template ids before $A
	suffix      []int32 // template ids after $A
	pad         int32
	raw         []addedToken // normalized=false: matched on the raw text
	normed      []addedToken // normalized=true: matched after normalisation
}

type addedToken struct {
	content        string
	id             int32
	lstrip, rstrip bool
	singleWord     bool // matches only as a whole word
}

// Encoding is one tokenised text, unpadded.
type Encoding struct {
	IDs           []int32
	AttentionMask []int32
	// Untruncated is the length before truncation.
	Untruncated int
}

// Load reads a Hugging Face tokenizer.json. maxLen is the truncation
// length counting the template's special tokens; 0 takes the file's
// truncation.max_length, or 512 when the file has none.
func Load(path string, maxLen int) (*Tokenizer, error) {
	cfg, err := tokenizer.ConfigFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	t := &Tokenizer{MaxLen: maxLen}
	if t.MaxLen == 0 {
		t.MaxLen = 512
		if v, ok := cfg.Truncation["max_length"].(float64); ok && v > 0 {
			t.MaxLen = int(v)
		}
	}

	// normalizer
	switch typ, _ := cfg.Normalizer["type"].(string); typ {
	case "BertNormalizer":
		flag := func(key string, def bool) bool {
			if v, ok := cfg.Normalizer[key].(bool); ok {
				return v
			}
			return def
		}
		n := BertNormalizer{
			CleanText:          flag("clean_text", true),
			HandleChineseChars: flag("handle_chinese_chars", true),
			Lowercase:          flag("lowercase", true),
		}
		if v, ok := cfg.Normalizer["strip_accents"].(bool); ok {
			n.StripAccents = &v
		}
		t.normalize = n.Normalize
	case "NFC":
		t.normalize = norm.NFC.String
	case "":
		if cfg.Normalizer != nil {
			return nil, fmt.Errorf("%s: normalizer has no type", path)
		}
		t.normalize = func(s string) string { return s }
	default:
		return nil, fmt.Errorf("%s: normalizer %q is not supported (want BertNormalizer, NFC or none)", path, typ)
	}

	// pre_tokenizer
	switch typ, _ := cfg.PreTokenizer["type"].(string); typ {
	case "BertPreTokenizer":
		t.preTokenize = BertPreTokenize
	case "ByteLevel":
		if v, _ := cfg.PreTokenizer["add_prefix_space"].(bool); v {
			return nil, fmt.Errorf("%s: ByteLevel add_prefix_space true is not supported", path)
		}
		if v, ok := cfg.PreTokenizer["use_regex"].(bool); ok && !v {
			return nil, fmt.Errorf("%s: ByteLevel use_regex false is not supported", path)
		}
		t.preTokenize = byteLevelPreTokenize
	default:
		return nil, fmt.Errorf("%s: pre_tokenizer %q is not supported (want BertPreTokenizer or ByteLevel)", path, typ)
	}

	// model
	rawVocab, ok := cfg.Model["vocab"].(map[string]interface{})
	if !ok || len(rawVocab) == 0 {
		return nil, fmt.Errorf("%s: model.vocab is missing or empty", path)
	}
	vocab := make(map[string]int, len(rawVocab))
	for k, v := range rawVocab {
		f, ok := v.(float64)
		if !ok {
			return nil, fmt.Errorf("%s: model.vocab[%q] is not a number", path, k)
		}
		vocab[k] = int(f)
	}
	switch typ, _ := cfg.Model["type"].(string); typ {
	case "WordPiece":
		if t.model, err = loadWordPiece(path, cfg.Model, vocab); err != nil {
			return nil, err
		}
	case "BPE":
		if typ, _ := cfg.PreTokenizer["type"].(string); typ != "ByteLevel" {
			return nil, fmt.Errorf("%s: a BPE model is supported with the ByteLevel pre-tokenizer only", path)
		}
		b, err := loadBPE(path, cfg.Model, vocab)
		if err != nil {
			return nil, err
		}
		t.model = b.encode
	default:
		return nil, fmt.Errorf("%s: model %q is not supported (want WordPiece or BPE)", path, typ)
	}

	if t.prefix, t.suffix, err = readTemplate(path, cfg.PostProcessor, vocab); err != nil {
		return nil, err
	}
	if t.MaxLen < len(t.prefix)+len(t.suffix) {
		return nil, fmt.Errorf("%s: max length %d leaves no room for the template's %d special tokens", path, t.MaxLen, len(t.prefix)+len(t.suffix))
	}
	t.pad = -1
	for _, p := range []string{"[PAD]", "<pad>", "<|padding|>"} {
		if v, ok := vocab[p]; ok {
			t.pad = int32(v)
			break
		}
	}
	for _, a := range cfg.AddedTokens {
		if a.Content == "" {
			return nil, fmt.Errorf("%s: added token %d has no content", path, a.Id)
		}
		if a.Id < 0 || a.Id > math.MaxInt32 {
			return nil, fmt.Errorf("%s: added token %q: id %d is out of range", path, limits.Clip(a.Content), a.Id)
		}
		tok := addedToken{content: a.Content, id: int32(a.Id), lstrip: a.Lstrip, rstrip: a.Rstrip, singleWord: a.SingleWord}
		if t.pad < 0 && (a.Content == "[PAD]" || a.Content == "<pad>") {
			t.pad = tok.id
		}
		if a.Normalized {
			t.normed = append(t.normed, tok)
		} else {
			t.raw = append(t.raw, tok)
		}
	}
	if t.pad < 0 {
		t.pad = 0
	}
	for _, s := range [][]addedToken{t.raw, t.normed} {
		sort.SliceStable(s, func(i, j int) bool { return len(s[i].content) > len(s[j].content) })
	}
	return t, nil
}

func loadWordPiece(path string, m map[string]interface{}, vocab map[string]int) (func(string) ([]int32, error), error) {
	unk, _ := m["unk_token"].(string)
	if unk == "" {
		unk = "[UNK]"
	}
	if _, ok := vocab[unk]; !ok {
		return nil, fmt.Errorf("%s: unk_token %q is not in model.vocab", path, unk)
	}
	prefix, _ := m["continuing_subword_prefix"].(string)
	if prefix == "" {
		prefix = "##"
	}
	maxChars := 100
	if v, ok := m["max_input_chars_per_word"].(float64); ok && v > 0 {
		maxChars = int(v)
	}
	opts := util.NewParams(nil)
	opts.Set("unk_token", unk)
	opts.Set("continuing_subword_prefix", prefix)
	opts.Set("max_input_chars_per_word", maxChars)
	wp, err := wordpiece.New(vocab, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: model: %w", path, err)
	}
	return func(w string) ([]int32, error) {
		toks, err := wp.Tokenize(w)
		if err != nil {
			return nil, err
		}
		ids := make([]int32, len(toks))
		for i, tk := range toks {
			ids[i] = int32(tk.Id)
		}
		return ids, nil
	}, nil
}

// readTemplate reads the single-sequence template of a TemplateProcessing
// post-processor (special tokens, then $A, then special tokens), or
// BertProcessing's [CLS] $A [SEP] or RobertaProcessing's <s> $A </s> (older
// MPNet files), as the ids before and after the text.
func readTemplate(path string, pp map[string]interface{}, vocab map[string]int) (prefix, suffix []int32, err error) {
	id := func(tok string) (int32, error) {
		if st, ok := pp["special_tokens"].(map[string]interface{}); ok {
			if e, ok := st[tok].(map[string]interface{}); ok {
				if ids, ok := e["ids"].([]interface{}); ok && len(ids) == 1 {
					if f, ok := ids[0].(float64); ok {
						return int32(f), nil
					}
				}
			}
		}
		v, ok := vocab[tok]
		if !ok {
			return 0, fmt.Errorf("%s: template token %q is not in post_processor.special_tokens or model.vocab", path, tok)
		}
		return int32(v), nil
	}
	// pairID reads BertProcessing's and RobertaProcessing's ["token", id].
	pairID := func(key, def string) (int32, error) {
		if p, ok := pp[key].([]interface{}); ok && len(p) == 2 {
			if f, ok := p[1].(float64); ok {
				return int32(f), nil
			}
		}
		return id(def)
	}
	switch typ, _ := pp["type"].(string); typ {
	case "BertProcessing", "RobertaProcessing":
		defCLS, defSEP := "[CLS]", "[SEP]"
		if typ == "RobertaProcessing" {
			defCLS, defSEP = "<s>", "</s>"
		}
		cls, err := pairID("cls", defCLS)
		if err != nil {
			return nil, nil, err
		}
		sep, err := pairID("sep", defSEP)
		if err != nil {
			return nil, nil, err
		}
		return []int32{cls}, []int32{sep}, nil
	case "TemplateProcessing":
		var single []struct {
			SpecialToken *struct{ ID string } `json:"SpecialToken"`
			Sequence     *struct{ ID string } `json:"Sequence"`
		}
		b, _ := json.Marshal(pp["single"])
		if err := json.Unmarshal(b, &single); err != nil {
			return nil, nil, fmt.Errorf("%s: post_processor.single: %w", path, err)
		}
		seenA := false
		for _, p := range single {
			switch {
			case p.Sequence != nil && p.Sequence.ID == "A" && !seenA:
				seenA = true
			case p.SpecialToken != nil:
				v, err := id(p.SpecialToken.ID)
				if err != nil {
					return nil, nil, err
				}
				if seenA {
					suffix = append(suffix, v)
				} else {
					prefix = append(prefix, v)
				}
			default:
				return nil, nil, fmt.Errorf("%s: post_processor template %s is not supported (want special tokens around $A)", path, b)
			}
		}
		if !seenA {
			return nil, nil, fmt.Errorf("%s: post_processor template %s has no $A", path, b)
		}
		return prefix, suffix, nil
	}
	typ, _ := pp["type"].(string)
	return nil, nil, fmt.Errorf("%s: post_processor %q is not supported (want TemplateProcessing, BertProcessing or RobertaProcessing)", path, typ)
}

// PadID is the id of the padding token ([PAD], <pad> or <|padding|>).
func (t *Tokenizer) PadID() int32 { return t.pad }

// Encode tokenises one text: the template's leading special tokens, the
// pieces truncated on the right to leave room for the template, the trailing
// special tokens. The attention mask is all ones (no padding).
func (t *Tokenizer) Encode(text string) (Encoding, error) {
	var ids []int32
	var err error
	splitAdded(text, t.raw, func(piece string, tok *addedToken) {
		if err != nil {
			return
		}
		if tok != nil {
			ids = append(ids, tok.id)
			return
		}
		if piece == "" {
			return
		}
		splitAdded(t.normalize(piece), t.normed, func(piece string, tok *addedToken) {
			if err != nil {
				return
			}
			if tok != nil {
				ids = append(ids, tok.id)
				return
			}
			ids, err = t.appendPieces(ids, piece)
		})
	})
	if err != nil {
		return Encoding{}, err
	}
	special := len(t.prefix) + len(t.suffix)
	e := Encoding{Untruncated: len(ids) + special}
	if len(ids) > t.MaxLen-special {
		ids = ids[:t.MaxLen-special]
	}
	e.IDs = make([]int32, 0, len(ids)+special)
	e.IDs = append(e.IDs, t.prefix...)
	e.IDs = append(e.IDs, ids...)
	e.IDs = append(e.IDs, t.suffix...)
	e.AttentionMask = make([]int32, len(e.IDs))
	for i := range e.AttentionMask {
		e.AttentionMask[i] = 1
	}
	return e, nil
}

// splitAdded calls f, in order, for the text between added tokens (tok nil)
// and for each added token found. Tokens are matched leftmost first, longest
// at a position; an lstrip (rstrip) token also takes the whitespace on its
// left (right), as HF's AddedVocabulary does.
//
// A single_word token matches only where it is not part of a longer word:
// the characters on either side of it in the whole text are not word
// characters (Rust regex's \w, as HF's AddedVocabulary tests them).
func splitAdded(text string, added []addedToken, f func(piece string, tok *addedToken)) {
	full, base := text, 0
	// next[i] is where added[i] next matches in full (-1: nowhere after
	// base). A match at or after base stays the first one there, so each
	// token's text is searched once from left to right over the whole call:
	// linear in the text for any number of added tokens and matches.
	var buf [16]int
	next := buf[:0]
	if len(added) > len(buf) {
		next = make([]int, 0, len(added))
	}
	for i := range added {
		j := indexAdded(full, 0, full, &added[i])
		next = append(next, j)
	}
	for len(text) > 0 {
		at, k := len(text), -1
		for i := range added {
			if next[i] >= 0 && next[i] < base {
				if j := indexAdded(full, base, text, &added[i]); j >= 0 {
					next[i] = base + j
				} else {
					next[i] = -1
				}
			}
			if j := next[i] - base; next[i] >= 0 && j < at {
				at, k = j, i
			}
		}
		if k < 0 {
			f(text, nil)
			return
		}
		a := &added[k]
		start, end := at, at+len(a.content)
		if a.lstrip {
			start = len(strings.TrimRightFunc(text[:start], unicode.IsSpace))
		}
		if a.rstrip {
			end = len(text) - len(strings.TrimLeftFunc(text[end:], unicode.IsSpace))
		}
		if start > 0 {
			f(text[:start], nil)
		}
		f("", a)
		text = text[end:]
		base += end
	}
}

// indexAdded is the first position in text (which starts at byte base of
// full) where a matches, or -1.
func indexAdded(full string, base int, text string, a *addedToken) int {
	from := 0
	for {
		j := strings.Index(text[from:], a.content)
		if j < 0 {
			return -1
		}
		j += from
		if !a.singleWord {
			return j
		}
		lo, hi := base+j, base+j+len(a.content)
		before, _ := utf8.DecodeLastRuneInString(full[:lo])
		after, _ := utf8.DecodeRuneInString(full[hi:])
		if (lo == 0 || !isWordChar(before)) && (hi == len(full) || !isWordChar(after)) {
			return j
		}
		_, size := utf8.DecodeRuneInString(text[j:])
		from = j + size
	}
}

// isWordChar is Rust regex's \w: alphabetic, a mark, a decimal digit, a
// connector punctuation or a join control.
func isWordChar(r rune) bool {
	return unicode.IsLetter(r) || unicode.Is(unicode.Nl, r) || unicode.IsMark(r) || unicode.Is(unicode.Nd, r) ||
		unicode.Is(unicode.Pc, r) || r == 0x200c || r == 0x200d
}

func (t *Tokenizer) appendPieces(ids []int32, text string) ([]int32, error) {
	if text == "" {
		return ids, nil
	}
	for _, w := range t.preTokenize(text) {
		p, err := t.model(w)
		if err != nil {
			return nil, err
		}
		ids = append(ids, p...)
	}
	return ids, nil
}
