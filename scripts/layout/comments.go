package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
)

// comments checks that the doc comment of every func, method and type of
// the module's non-test files (every build tag's) begins with the name it
// documents, as Go's doc convention asks: "Fit fits ...", "A Guard runs
// ..." (an article "A", "An" or "The" may come first, as golint allowed).
// A comment that names something else is usually one left behind by a
// rename. An init func, which no one calls or documents by name, is not
// checked.
func comments() error {
	ps, err := packages()
	if err != nil {
		return err
	}
	var bad []string
	n := 0
	fset := token.NewFileSet()
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	for _, p := range ps {
		for _, path := range files(p) {
			if rel, err := filepath.Rel(wd, path); err == nil {
				path = rel // for the messages
			}
			f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			m, checked := docMismatches(fset, f)
			n += checked
			bad = append(bad, m...)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%d doc comments do not begin with the name they document (Go's convention: \"Name does ...\", or \"A Name ...\"):\n  %s",
			len(bad), strings.Join(bad, "\n  "))
	}
	fmt.Printf("layout: %d doc comments of funcs, methods and types begin with the name they document\n", n)
	return nil
}

// docMismatches lists the doc comments of f's funcs, methods and types
// that do not begin with their name, as "file:line: name: comment begins
// with word", and how many doc comments it checked.
func docMismatches(fset *token.FileSet, f *ast.File) (bad []string, checked int) {
	check := func(name *ast.Ident, doc *ast.CommentGroup) {
		if doc == nil || name.Name == "_" || name.Name == "init" {
			return
		}
		text := doc.Text() // directives (//go:...) dropped
		if strings.TrimSpace(text) == "" {
			return
		}
		checked++
		if w, ok := docBegins(text, name.Name); !ok {
			bad = append(bad, fmt.Sprintf("%s: %s: the comment begins with %q", fset.Position(doc.Pos()), name.Name, w))
		}
	}
	for _, d := range f.Decls {
		switch x := d.(type) {
		case *ast.FuncDecl:
			check(x.Name, x.Doc)
		case *ast.GenDecl:
			if x.Tok != token.TYPE {
				continue
			}
			for _, s := range x.Specs {
				sp := s.(*ast.TypeSpec)
				doc := sp.Doc
				if doc == nil && len(x.Specs) == 1 {
					doc = x.Doc // type T ...: the comment sits on the declaration
				}
				check(sp.Name, doc)
			}
		}
	}
	return bad, checked
}

// docBegins reports whether the comment text begins with name, after an
// optional article; the word it begins with (the article's next one) is
// returned for the message. "Name's", "Name," and "Name:" begin with
// Name; so does "T.Name" for a method written with its receiver's type.
func docBegins(text, name string) (string, bool) {
	words := strings.Fields(text)
	w := words[0]
	if (w == "A" || w == "An" || w == "The") && len(words) > 1 {
		w = words[1]
	}
	word := strings.TrimRight(w, ".,:;!?")
	word = strings.TrimSuffix(word, "'s")
	if i := strings.LastIndex(word, "."); i >= 0 {
		word = word[i+1:]
	}
	return w, word == name
}
