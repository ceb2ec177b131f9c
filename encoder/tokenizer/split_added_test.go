package tokenizer

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unicode"
)

// splitAddedNaive is the direct reading of HF's rule that splitAdded must
// equal: at each step, search every added token from the current position
// and take the earliest match (the first listed on a tie).
func splitAddedNaive(text string, added []addedToken, f func(piece string, tok *addedToken)) {
	full, base := text, 0
	for len(text) > 0 {
		at, k := len(text), -1
		for i := range added {
			if j := indexAdded(full, base, text, &added[i]); j >= 0 && j < at {
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

func splitPieces(split func(string, []addedToken, func(string, *addedToken)), text string, added []addedToken) []string {
	var got []string
	split(text, added, func(piece string, tok *addedToken) {
		if tok != nil {
			got = append(got, fmt.Sprintf("#%d", tok.id))
		} else {
			got = append(got, piece)
		}
	})
	return got
}

// splitAdded remembers each token's next match instead of searching every
// token again after each match; on random texts full of overlapping,
// prefix-sharing, whole-word and stripping tokens it splits exactly as the
// direct rule does.
func TestSplitAddedEqualsNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "b", "ab", " ", "  ", "<", ">", "é", "_", ".", "x"}
	for trial := range 3000 {
		var added []addedToken
		for i := range 1 + rng.IntN(20) {
			var b strings.Builder
			for range 1 + rng.IntN(3) {
				b.WriteString(alphabet[rng.IntN(len(alphabet))])
			}
			if strings.TrimSpace(b.String()) == "" {
				continue
			}
			added = append(added, addedToken{content: b.String(), id: int32(i),
				lstrip: rng.IntN(4) == 0, rstrip: rng.IntN(4) == 0, singleWord: rng.IntN(3) == 0})
		}
		var b strings.Builder
		for range rng.IntN(60) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		text := b.String()
		got, want := splitPieces(splitAdded, text, added), splitPieces(splitAddedNaive, text, added)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("trial %d: text %q, tokens %+v:\n got %q\nwant %q", trial, text, added, got, want)
		}
	}
}

// BenchmarkSplitAddedMany: 300 added tokens and a text holding 20,000 of
// them (the direct rule searches every token again after each match, so its
// work grows with matches x tokens x text length).
func BenchmarkSplitAddedMany(b *testing.B) {
	var added []addedToken
	for i := range 300 {
		added = append(added, addedToken{content: fmt.Sprintf("<tok%d>", i), id: int32(i)})
	}
	var sb strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&sb, "word %s ", added[i%len(added)].content)
	}
	text := sb.String()
	for _, c := range []struct {
		name  string
		split func(string, []addedToken, func(string, *addedToken))
	}{{"remembered", splitAdded}, {"direct", splitAddedNaive}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				c.split(text, added, func(string, *addedToken) {})
			}
		})
	}
}
