package main

import (
	"go/parser"
	"go/token"
	"slices"
	"testing"
)

func TestDocMismatches(t *testing.T) {
	src := `package p

// Fit fits.
func Fit() {}

// RunJEIRT does what jeirt train does (the old name).
func Run() {}

// A Guard runs fits.
type Guard struct{}

// The Options are settings.
type Options struct{}

// An item's state: an article, then the name.
type item struct{}

// Guard.Fit fits, written with its receiver's type.
func (Guard) Fit() {}

// fit's start, with a possessive.
func (g *Guard) fit() {}

// Result, what Run returns.
type Result struct{}

type (
	// Cell is one answer.
	Cell struct{}
	// Row is not Rows.
	Rows struct{}
)

// RunOptions are the settings of Run.
type Opts struct{}

// helper's comment names another: addItem adds.
func solveItem() {}

//go:noinline
func bare() {}

// init registers the rule; never checked.
func init() {}

// best-single: the model with the best mean (an init's comment).
func init() {}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	bad, checked := docMismatches(fset, f)
	want := []string{
		`p.go:6:1: Run: the comment begins with "RunJEIRT"`,
		`p.go:30:2: Rows: the comment begins with "Row"`,
		`p.go:34:1: Opts: the comment begins with "RunOptions"`,
		`p.go:37:1: solveItem: the comment begins with "helper's"`,
	}
	if !slices.Equal(bad, want) {
		t.Errorf("docMismatches =\n%q\nwant\n%q", bad, want)
	}
	if checked != 12 {
		t.Errorf("checked %d doc comments, want 12", checked)
	}
}
