// Command layout derives the parts of docs/development.md that must not
// drift from the code, from the packages themselves (go list and the Go
// parser), and checks the code's size limits. scripts/check-docs.sh runs it.
//
//	go run ./scripts/layout table            the layout table (package, doc, imports)
//	go run ./scripts/layout limits           lines and exported names per package; exit 1 over a limit
//	go run ./scripts/layout imports          exit 1 on an import that points up a floor (every build tag)
//	go run ./scripts/layout exports DIR      the exported names of the package in DIR
//	go run ./scripts/layout apinames FILE... check every backticked pkg.Name the files cite
//	go run ./scripts/layout comments         exit 1 on a doc comment that does not begin with its name
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
)

const module = "github.com/jeirt/jeirt"

// The limits (docs/development.md, "Limits").
const (
	maxLines      = 2500
	maxExported   = 60
	maxCommandPkg = 1500 // cmd/jeirt
)

// exceptions are packages allowed over the line limit, with the reason
// docs/development.md gives ("Limits").
var exceptions = map[string]string{}

type pkg struct {
	ImportPath string
	Dir        string
	Doc        string
	Name       string
	GoFiles    []string
	CgoFiles   []string
	Imports    []string
	// IgnoredGoFiles are the files of other build tags (the CUDA build's),
	// which count towards the package's size.
	IgnoredGoFiles []string
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: layout table|limits|imports|exports DIR|apinames FILE...|comments")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "table":
		err = table()
	case "limits":
		err = limits()
	case "imports":
		err = imports()
	case "exports":
		var names []string
		names, err = exported(os.Args[2], nil)
		fmt.Println(strings.Join(names, "\n"))
	case "apinames":
		err = apinames(os.Args[2:])
	case "comments":
		err = comments()
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "layout:", err)
		os.Exit(1)
	}
}

func packages(flags ...string) ([]pkg, error) {
	out, err := exec.Command("go", append(append([]string{"list", "-json"}, flags...), "./...")...).Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s: %w", strings.Join(flags, " "), err)
	}
	var ps []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			return nil, err
		}
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].ImportPath < ps[j].ImportPath })
	return ps, nil
}

func short(path string) string {
	s := strings.TrimPrefix(strings.TrimPrefix(path, module), "/")
	if s == "" {
		return "."
	}
	return s
}

// firstSentence is a package comment's first sentence, without "Package x".
func firstSentence(doc, name string) string {
	doc = strings.Join(strings.Fields(doc), " ")
	// The first ". " that ends a sentence (not "et al. " or "e.g. ").
	for at := 0; ; {
		i := strings.Index(doc[at:], ". ")
		if i < 0 {
			break
		}
		i += at
		if w := doc[strings.LastIndex(doc[:i], " ")+1 : i]; w != "al" && w != "e.g" && w != "i.e" && w != "ed" {
			doc = doc[:i+1]
			break
		}
		at = i + 2
	}
	for _, p := range []string{"Package " + name + " ", "Command " + name + " ", "Package main "} {
		doc = strings.TrimPrefix(doc, p)
	}
	return strings.ReplaceAll(doc, "|", "\\|")
}

func table() error {
	ps, err := packages()
	if err != nil {
		return err
	}
	fmt.Println("| package | holds | imports (of this module) |")
	fmt.Println("|---|---|---|")
	for _, p := range ps {
		var im []string
		for _, i := range p.Imports {
			if strings.HasPrefix(i, module+"/") {
				im = append(im, "`"+short(i)+"`")
			}
		}
		imports := strings.Join(im, ", ")
		if imports == "" {
			imports = "—"
		}
		fmt.Printf("| `%s` | %s | %s |\n", short(p.ImportPath), firstSentence(p.Doc, p.Name), imports)
	}
	return nil
}

// files are a package's non-test Go files of every build (tagged ones too).
func files(p pkg) []string {
	var fs []string
	for _, list := range [][]string{p.GoFiles, p.CgoFiles, p.IgnoredGoFiles} {
		for _, f := range list {
			if !strings.HasSuffix(f, "_test.go") {
				fs = append(fs, filepath.Join(p.Dir, f))
			}
		}
	}
	return fs
}

func countLines(paths []string) (int, error) {
	n := 0
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return 0, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			n++
		}
		f.Close()
	}
	return n, nil
}

// exported lists the exported top-level names (methods excluded) of the
// package in dir, or of the given files.
func exported(dir string, paths []string) ([]string, error) {
	if paths == nil {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".go") && !strings.HasSuffix(e.Name(), "_test.go") {
				paths = append(paths, filepath.Join(dir, e.Name()))
			}
		}
	}
	seen := map[string]bool{}
	fset := token.NewFileSet()
	for _, p := range paths {
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			switch x := d.(type) {
			case *ast.FuncDecl:
				if x.Recv == nil && x.Name.IsExported() {
					seen[x.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range x.Specs {
					switch sp := s.(type) {
					case *ast.TypeSpec:
						if sp.Name.IsExported() {
							seen[sp.Name.Name] = true
						}
					case *ast.ValueSpec:
						for _, n := range sp.Names {
							if n.IsExported() {
								seen[n.Name] = true
							}
						}
					}
				}
			}
		}
	}
	var names []string
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

func limits() error {
	ps, err := packages()
	if err != nil {
		return err
	}
	var over []string
	fmt.Printf("%-36s %6s %8s\n", "package", "lines", "exported")
	for _, p := range ps {
		fs := files(p)
		n, err := countLines(fs)
		if err != nil {
			return err
		}
		names, err := exported("", fs)
		if err != nil {
			return err
		}
		fmt.Printf("%-36s %6d %8d\n", short(p.ImportPath), n, len(names))
		lim := maxLines
		if _, ok := exceptions[short(p.ImportPath)]; ok {
			lim = 4000 // still bounded
		}
		if short(p.ImportPath) == "cmd/jeirt" {
			lim = maxCommandPkg
		}
		if n > lim {
			over = append(over, fmt.Sprintf("%s: %d non-test lines, more than %d", short(p.ImportPath), n, lim))
		}
		if len(names) > maxExported {
			over = append(over, fmt.Sprintf("%s: %d exported names, more than %d", short(p.ImportPath), len(names), maxExported))
		}
	}
	if len(over) > 0 {
		return fmt.Errorf("over the limits:\n  %s", strings.Join(over, "\n  "))
	}
	return nil
}

// floors are the import rules of docs/development.md ("Layout"): a package
// under a prefix never imports a package under one of its banned prefixes,
// but the allowed ones. The floors from the bottom: model, encoder, train
// (and the GPU beside it, which reaches train only through the seam), the
// applications and the command tree in cmd.
var floors = []struct {
	prefix         string
	banned, allows []string
}{
	{"model", []string{"encoder", "train", "cuda", "cmd", "scripts"}, nil},
	{"encoder", []string{"train", "cuda", "cmd", "scripts"}, nil},
	{"train", []string{"cuda", "cmd", "scripts"}, nil},
	{"cuda", []string{"train", "cmd", "scripts"}, []string{"train/backend"}},
	{"", []string{"cmd"}, nil}, // nothing outside cmd/ imports cmd/...
}

// shared are the packages under cmd/internal that every application may
// import: the command-line conventions, the GPU runner, the CLI
// reference and the Slurm submission (sbatch, the job record, the tasks'
// states) that sweep and encode share. Any other package under cmd/internal is one command's
// application, which no other application imports: what two share is a
// library below them (the training pipeline is train/pipeline), and no
// shared package imports an application.
var shared = []string{"cmd/internal/cli", "cmd/internal/runner", "cmd/internal/clidoc", "cmd/internal/slurm"}

// application is the application package p belongs to (cmd/internal/X
// for cmd/internal/X/...), or "" outside cmd/internal and for the shared.
func application(p string) string {
	rest, ok := strings.CutPrefix(p, "cmd/internal/")
	if !ok {
		return ""
	}
	app := "cmd/internal/" + strings.SplitN(rest, "/", 2)[0]
	if slices.Contains(shared, app) {
		return ""
	}
	return app
}

// sharedPackage reports whether the package path p is one of the shared
// or below one.
func sharedPackage(p string) bool {
	for _, sh := range shared {
		if under(p, sh) {
			return true
		}
	}
	return false
}

// under reports whether the package path p (module-relative) is prefix or
// below it ("" is every package).
func under(p, prefix string) bool {
	return prefix == "" || p == prefix || strings.HasPrefix(p, prefix+"/")
}

// upward lists the imports of package from (module-relative, as are the
// imports) that point up a floor.
func upward(from string, imports []string) []string {
	var bad []string
	found := map[string]bool{}
	for _, f := range floors {
		if !under(from, f.prefix) || f.prefix == "" && under(from, "cmd") {
			continue
		}
	next:
		for _, im := range imports {
			for _, a := range f.allows {
				if under(im, a) {
					continue next
				}
			}
			for _, b := range f.banned {
				if under(im, b) && !found[im] {
					found[im] = true
					bad = append(bad, fmt.Sprintf("%s imports %s", from, im))
					continue next
				}
			}
		}
	}
	if sharedPackage(from) {
		for _, im := range imports {
			if application(im) != "" && !found[im] {
				found[im] = true
				bad = append(bad, fmt.Sprintf("%s imports %s (a package every application shares imports no application)", from, im))
			}
		}
	}
	if app := application(from); app != "" {
		for _, im := range imports {
			if other := application(im); other != "" && other != app && !found[im] {
				found[im] = true
				bad = append(bad, fmt.Sprintf("%s imports %s (an application imports no other application)", from, im))
			}
		}
	}
	return bad
}

// imports checks the import rules on the non-test imports of every package,
// in the default build and in the builds with the module's tags (the
// CUDA build's, OpenBLAS's).
func imports() error {
	seen := map[string]bool{}
	var bad []string
	n := 0
	for _, tags := range [][]string{nil, {"-tags", "jeirtcuda"}, {"-tags", "openblas"}} {
		ps, err := packages(tags...)
		if err != nil {
			return err
		}
		for _, p := range ps {
			var im []string
			for _, i := range p.Imports {
				if strings.HasPrefix(i, module+"/") {
					im = append(im, short(i))
				}
			}
			n += len(im)
			for _, b := range upward(short(p.ImportPath), im) {
				if !seen[b] {
					seen[b] = true
					bad = append(bad, b)
				}
			}
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("imports that point up a floor (docs/development.md, Layout):\n  %s", strings.Join(bad, "\n  "))
	}
	fmt.Printf("layout: %d imports of the module, in 3 builds, point down; no application under cmd/internal imports another, and none is imported by the packages they share (%s)\n",
		n, strings.Join(shared, ", "))
	return nil
}

// codeSpan is a Markdown code span; apiName a pkg.Name (or
// pkg.Type.Method) inside one.
var (
	codeSpan = regexp.MustCompile("`[^`]+`")
	apiName  = regexp.MustCompile(`\b([a-z][a-z0-9]*)\.([A-Z][A-Za-z0-9_]*)(\.[A-Z][A-Za-z0-9_]*)?`)
)

// apinames checks that every backticked pkg.Name in the files names an
// exported declaration (or a method or field of one) of a package of that
// name in this module.
func apinames(docs []string) error {
	ps, err := packages()
	if err != nil {
		return err
	}
	// Every identifier each package name declares: top-level names, methods
	// and fields by their type.
	decl := map[string]map[string]bool{}
	for _, p := range ps {
		if p.Name == "main" {
			continue
		}
		m := decl[p.Name]
		if m == nil {
			m = map[string]bool{}
			decl[p.Name] = m
		}
		fset := token.NewFileSet()
		for _, f := range files(p) {
			af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			ast.Inspect(af, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.FuncDecl:
					name := x.Name.Name
					if x.Recv != nil && len(x.Recv.List) > 0 {
						t := x.Recv.List[0].Type
						if s, ok := t.(*ast.StarExpr); ok {
							t = s.X
						}
						if id, ok := t.(*ast.Ident); ok {
							m[id.Name+"."+name] = true
						}
						return false
					}
					m[name] = true
					return false
				case *ast.TypeSpec:
					m[x.Name.Name] = true
					if st, ok := x.Type.(*ast.StructType); ok {
						for _, fl := range st.Fields.List {
							for _, fn := range fl.Names {
								m[x.Name.Name+"."+fn.Name] = true
							}
							if len(fl.Names) == 0 { // embedded
								t := fl.Type
								if s, ok := t.(*ast.StarExpr); ok {
									t = s.X
								}
								if se, ok := t.(*ast.SelectorExpr); ok {
									m[x.Name.Name+"."+se.Sel.Name] = true
								} else if id, ok := t.(*ast.Ident); ok {
									m[x.Name.Name+"."+id.Name] = true
								}
							}
						}
					}
					if it, ok := x.Type.(*ast.InterfaceType); ok {
						for _, fl := range it.Methods.List {
							for _, fn := range fl.Names {
								m[x.Name.Name+"."+fn.Name] = true
							}
						}
					}
				case *ast.ValueSpec:
					for _, n := range x.Names {
						m[n.Name] = true
					}
				}
				return true
			})
		}
	}
	// Folders of the module that hold no package of their name (train):
	// pkg.Name with one of them names a package that does not exist.
	folders := map[string]bool{}
	for _, p := range ps {
		for _, part := range strings.Split(short(p.ImportPath), "/") {
			if _, ok := decl[part]; !ok {
				folders[part] = true
			}
		}
	}
	var bad []string
	checked := 0
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			var refs [][]string
			for _, span := range codeSpan.FindAllString(line, -1) {
				refs = append(refs, apiName.FindAllStringSubmatch(span, -1)...)
			}
			for _, mm := range refs {
				names, ok := decl[mm[1]]
				if !ok {
					if folders[mm[1]] {
						bad = append(bad, fmt.Sprintf("%s:%d: %s.%s: there is no package %s (its packages are under %s/)", doc, i+1, mm[1], mm[2], mm[1], mm[1]))
					}
					continue // not a package of this module (json.Marshal, errors.As)
				}
				checked++
				name := mm[2] + mm[3]
				if !names[name] {
					bad = append(bad, fmt.Sprintf("%s:%d: %s.%s names nothing in package %s", doc, i+1, mm[1], name, mm[1]))
				}
			}
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("docs cite API names that do not exist:\n  %s", strings.Join(bad, "\n  "))
	}
	fmt.Printf("layout: %d API names cited in %d files exist\n", checked, len(docs))
	return nil
}
