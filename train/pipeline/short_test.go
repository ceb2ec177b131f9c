package pipeline

import (
	"context"
	"testing"

	"github.com/jeirt/jeirt/encoder"
	"github.com/jeirt/jeirt/model"
)

func TestShortForms(t *testing.T) {
	for _, c := range []struct{ text, title, sentence string }{
		{"\n  Fix the off-by-one. In pagination.\nDetails follow.", "Fix the off-by-one. In pagination.", "Fix the off-by-one."},
		{"Why does x.y fail? It worked in 1.2.", "Why does x.y fail? It worked in 1.2.", "Why does x.y fail?"},
		{"no end mark here\nsecond line", "no end mark here", "no end mark here"},
		{"Version 3.1 broke it", "Version 3.1 broke it", "Version 3.1 broke it"},
		{"  ", "", ""},
	} {
		if got := Title(c.text); got != c.title {
			t.Errorf("Title(%q) = %q, want %q", c.text, got, c.title)
		}
		if got := FirstSentence(c.text); got != c.sentence {
			t.Errorf("FirstSentence(%q) = %q, want %q", c.text, got, c.sentence)
		}
	}
	// EncodeShort encodes each form: the title's vector is the title's.
	enc, _ := encoder.NewHash(16)
	r := &model.Responses{Items: []string{"a", "b"}, ItemText: []string{"Title one\nbody of a", "Only. Two"}}
	short, err := EncodeShort(context.Background(), enc, r)
	if err != nil || len(short) != len(ShortForms) {
		t.Fatal(short, err)
	}
	want, _ := enc.Encode(context.Background(), []string{"Title one", "Only. Two", "Title one", "Only."})
	for f := range ShortForms {
		for j := 0; j < 2; j++ {
			for k, v := range want[2*f+j] {
				if short[f][j*16+k] != v {
					t.Fatalf("form %s item %d differs at %d", ShortForms[f].Name, j, k)
				}
			}
		}
	}
}
