package encoder

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/sugarme/tokenizer"
	"github.com/sugarme/tokenizer/model/wordpiece"
	"github.com/sugarme/tokenizer/util"
)

// Tokenizer is a BERT WordPiece tokenizer that gives the ids of Hugging Face
// tokenizers exactly, for tokenizer.json files with a BertNormalizer, a
// BertPreTokenizer, a WordPiece model and a [CLS] $A [SEP] template.
//
// tokenizer.json is parsed and the WordPiece model is built by
// github.com/sugarme/tokenizer; the steps that library gets wrong are ours:
// literal special tokens are matched on the raw text first (as HF's
// AddedVocabulary does for normalized=false tokens), the rest goes through
// BertNormalizer and bertPreTokenize, and truncation keeps MaxLen ids counting
// [CLS] and [SEP].
type Tokenizer struct {
	// MaxLen is the most ids an encoding holds, [CLS] and [SEP] included.
	MaxLen int

	norm    BertNormalizer
	wp      *wordpiece.WordPiece
	cls     int32
	sep     int32
	pad     int32
	special []addedToken // longest content first
}

type addedToken struct {
	content string
	id      int32
}

// Encoding is one tokenised text, unpadded.
type Encoding struct {
	IDs           []int32
	AttentionMask []int32
	// Untruncated is the length before truncation.
	Untruncated int
}

// LoadTokenizer reads a Hugging Face tokenizer.json. maxLen is the truncation
// length counting [CLS] and [SEP]; 0 takes the file's truncation.max_length,
// or 512 when the file has none.
func LoadTokenizer(path string, maxLen int) (*Tokenizer, error) {
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
	if t.MaxLen < 2 {
		return nil, fmt.Errorf("%s: max length %d leaves no room for [CLS] and [SEP]", path, t.MaxLen)
	}

	// normalizer
	if typ, _ := cfg.Normalizer["type"].(string); typ != "BertNormalizer" {
		return nil, fmt.Errorf("%s: normalizer %q is not supported (want BertNormalizer)", path, typ)
	}
	flag := func(key string, def bool) bool {
		if v, ok := cfg.Normalizer[key].(bool); ok {
			return v
		}
		return def
	}
	t.norm = BertNormalizer{
		CleanText:          flag("clean_text", true),
		HandleChineseChars: flag("handle_chinese_chars", true),
		Lowercase:          flag("lowercase", true),
	}
	if v, ok := cfg.Normalizer["strip_accents"].(bool); ok {
		t.norm.StripAccents = &v
	}

	if typ, _ := cfg.PreTokenizer["type"].(string); typ != "BertPreTokenizer" {
		return nil, fmt.Errorf("%s: pre_tokenizer %q is not supported (want BertPreTokenizer)", path, typ)
	}

	// model: sugarme builds the WordPiece vocabulary and matcher.
	if typ, _ := cfg.Model["type"].(string); typ != "WordPiece" {
		return nil, fmt.Errorf("%s: model %q is not supported (want WordPiece)", path, typ)
	}
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
	unk, _ := cfg.Model["unk_token"].(string)
	if unk == "" {
		unk = "[UNK]"
	}
	if _, ok := vocab[unk]; !ok {
		return nil, fmt.Errorf("%s: unk_token %q is not in model.vocab", path, unk)
	}
	prefix, _ := cfg.Model["continuing_subword_prefix"].(string)
	if prefix == "" {
		prefix = "##"
	}
	maxChars := 100
	if v, ok := cfg.Model["max_input_chars_per_word"].(float64); ok && v > 0 {
		maxChars = int(v)
	}
	opts := util.NewParams(nil)
	opts.Set("unk_token", unk)
	opts.Set("continuing_subword_prefix", prefix)
	opts.Set("max_input_chars_per_word", maxChars)
	m, err := wordpiece.New(vocab, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: model: %w", path, err)
	}
	t.wp = m

	id := func(tok string) (int32, error) {
		v, ok := vocab[tok]
		if !ok {
			return 0, fmt.Errorf("%s: special token %q is not in model.vocab", path, tok)
		}
		return int32(v), nil
	}
	if t.cls, err = id("[CLS]"); err != nil {
		return nil, err
	}
	if t.sep, err = id("[SEP]"); err != nil {
		return nil, err
	}
	if t.pad, err = id("[PAD]"); err != nil {
		return nil, err
	}
	if err := checkTemplate(path, cfg.PostProcessor); err != nil {
		return nil, err
	}
	for _, a := range cfg.AddedTokens {
		if a.Normalized || a.SingleWord || a.Lstrip || a.Rstrip {
			return nil, fmt.Errorf("%s: added token %q: normalized/single_word/lstrip/rstrip are not supported", path, a.Content)
		}
		t.special = append(t.special, addedToken{a.Content, int32(a.Id)})
	}
	sort.SliceStable(t.special, func(i, j int) bool { return len(t.special[i].content) > len(t.special[j].content) })
	return t, nil
}

// checkTemplate accepts the post-processors that mean "[CLS] $A [SEP]" for a
// single sequence: BertProcessing, or TemplateProcessing with exactly that.
func checkTemplate(path string, pp map[string]interface{}) error {
	typ, _ := pp["type"].(string)
	switch typ {
	case "BertProcessing":
		return nil
	case "TemplateProcessing":
		b, _ := json.Marshal(pp["single"])
		want := `[{"SpecialToken":{"id":"[CLS]","type_id":0}},{"Sequence":{"id":"A","type_id":0}},{"SpecialToken":{"id":"[SEP]","type_id":0}}]`
		if string(b) != want {
			return fmt.Errorf("%s: post_processor template %s is not supported (want [CLS] $A [SEP])", path, b)
		}
		return nil
	}
	return fmt.Errorf("%s: post_processor %q is not supported (want TemplateProcessing or BertProcessing)", path, typ)
}

// PadID is the id of [PAD].
func (t *Tokenizer) PadID() int32 { return t.pad }

// Encode tokenises one text: [CLS], the word pieces truncated on the right to
// MaxLen-2, [SEP]. The attention mask is all ones (no padding).
func (t *Tokenizer) Encode(text string) (Encoding, error) {
	var ids []int32
	for len(text) > 0 {
		// Literal special tokens are found on the raw text, leftmost first,
		// longest at a position.
		at, tok := len(text), addedToken{}
		for _, a := range t.special {
			if i := strings.Index(text, a.content); i >= 0 && i < at {
				at, tok = i, a
			}
		}
		var err error
		if ids, err = t.appendPieces(ids, text[:at]); err != nil {
			return Encoding{}, err
		}
		if at == len(text) {
			break
		}
		ids = append(ids, tok.id)
		text = text[at+len(tok.content):]
	}
	e := Encoding{Untruncated: len(ids) + 2}
	if len(ids) > t.MaxLen-2 {
		ids = ids[:t.MaxLen-2]
	}
	e.IDs = make([]int32, 0, len(ids)+2)
	e.IDs = append(e.IDs, t.cls)
	e.IDs = append(e.IDs, ids...)
	e.IDs = append(e.IDs, t.sep)
	e.AttentionMask = make([]int32, len(e.IDs))
	for i := range e.AttentionMask {
		e.AttentionMask[i] = 1
	}
	return e, nil
}

func (t *Tokenizer) appendPieces(ids []int32, text string) ([]int32, error) {
	if text == "" {
		return ids, nil
	}
	for _, w := range bertPreTokenize(t.norm.Normalize(text)) {
		toks, err := t.wp.Tokenize(w)
		if err != nil {
			return nil, err
		}
		for _, tk := range toks {
			ids = append(ids, int32(tk.Id))
		}
	}
	return ids, nil
}
