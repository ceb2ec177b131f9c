package pipeline

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	"github.com/jeirt/jeirt/encoder"
	"github.com/jeirt/jeirt/model"
)

// The short forms of a question that the out-of-domain check is calibrated
// on besides the full text: users ask with a title or a sentence, the
// training questions are whole issues, prompts or exams.
var ShortForms = []struct {
	Name string
	Cut  func(string) string
}{{"title", Title}, {"sentence", FirstSentence}}

// Title is a question's first non-empty line, trimmed.
func Title(text string) string {
	for _, line := range strings.Split(text, "\n") {
		if t := strings.TrimSpace(line); t != "" {
			return t
		}
	}
	return strings.TrimSpace(text)
}

// FirstSentence is a question's first sentence: its text up to the first
// '.', '?' or '!' followed by a space or the end, within its first
// non-empty line (Title when none ends there).
func FirstSentence(text string) string {
	t := Title(text)
	for i, r := range t {
		if (r == '.' || r == '?' || r == '!') && (i+1 == len(t) || unicode.IsSpace(rune(t[i+1]))) {
			return t[:i+1]
		}
	}
	return t
}

// EncodeShort is the encoder vectors of every ShortForms form of every
// item of all (one NumItems x enc.Dim() slice per form), or nil for an
// encoder that looks vectors up by item id (its vectors are the items',
// whatever the text).
func EncodeShort(ctx context.Context, enc encoder.Encoder, all *model.Responses) ([][]float32, error) {
	if _, byID := enc.(encoder.ItemEncoder); byID || all.ItemText == nil {
		return nil, nil
	}
	D := enc.Dim()
	var out [][]float32
	for _, f := range ShortForms {
		texts := make([]string, all.NumItems())
		for j := range texts {
			texts[j] = all.Items[j]
			if t := all.ItemText[j]; t != "" {
				texts[j] = f.Cut(t)
			}
		}
		vecs, err := enc.Encode(ctx, texts)
		if err != nil {
			return nil, fmt.Errorf("encoding the questions' %ss: %w", f.Name, err)
		}
		flat := make([]float32, 0, len(vecs)*D)
		for j, v := range vecs {
			if len(v) != D {
				return nil, fmt.Errorf("encoder %s: the %s of item %s has a vector of length %d, want %d", enc.Fingerprint(), f.Name, all.Items[j], len(v), D)
			}
			flat = append(flat, v...)
		}
		out = append(out, flat)
	}
	return out, nil
}
