package tokenizer

import (
	"reflect"
	"testing"
)

// A single_word added token matches only as a whole word (no word character
// on either side, in the whole text); other added tokens match anywhere.
func TestSplitAddedSingleWord(t *testing.T) {
	added := []addedToken{{content: "cat", id: 1, singleWord: true}, {content: "<x>", id: 2}}
	for _, c := range []struct {
		text string
		want []string // pieces, "#N" for added token N
	}{
		{"cat", []string{"#1"}},
		{"a cat.", []string{"a ", "#1", "."}},
		{"concatenate", []string{"concatenate"}},
		{"cats cat", []string{"cats ", "#1"}},
		{"<x>cat", []string{"#2", "#1"}},
		{"a<x>cats", []string{"a", "#2", "cats"}},
		{"chat_cat", []string{"chat_cat"}},
		{"écat cat", []string{"écat ", "#1"}},
	} {
		var got []string
		splitAdded(c.text, added, func(piece string, tok *addedToken) {
			if tok != nil {
				got = append(got, "#"+string(rune('0'+tok.id)))
			} else {
				got = append(got, piece)
			}
		})
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: %q, want %q", c.text, got, c.want)
		}
	}
}
