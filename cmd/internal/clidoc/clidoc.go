// Package clidoc renders a cobra command tree as a Markdown reference, one
// file per command (cobra's own generator) and an index, so the reference is
// made from the commands themselves and cannot drift from them.
package clidoc

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/jeirt/jeirt/model/fileio"
	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/spf13/pflag"
)

// Files renders root and every documented command under it, keyed by file
// name ("jeirt_irt_fit.md"), with the index as "README.md" and the table of
// every flag as "flags.md" (FlagTable, with meanings).
func Files(root *cobra.Command, meanings map[string]string) (map[string][]byte, error) {
	table, err := FlagTable(root, meanings)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{"README.md": index(root), "flags.md": table}
	return files, render(root, files)
}

// FlagTable is a Markdown table of every visible flag of the documented
// commands under root: its one meaning (from meanings, keyed by flag name),
// the commands that have it and its old spellings (hidden flags annotated
// "alias-of", as cli.Alias makes them). A flag without a meaning, or a
// name whose values are of two kinds (a number here, a path there), is an
// error: one name, one meaning.
func FlagTable(root *cobra.Command, meanings map[string]string) ([]byte, error) {
	type use struct {
		cmds  []string
		kind  string
		where string
	}
	uses := map[string]*use{}
	old := map[string][]string{} // new name -> "--old (command)"
	var errs []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		path := strings.TrimPrefix(c.CommandPath(), root.Name()+" ")
		if c == root {
			path = root.Name()
		}
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Name == "help" || f.Name == "version" {
				return
			}
			if to := f.Annotations["alias-of"]; len(to) > 0 {
				name := strings.Fields(to[0])[0]
				old[name] = append(old[name], fmt.Sprintf("`--%s` (%s)", f.Name, path))
				return
			}
			if f.Hidden {
				return
			}
			kind := strings.TrimSuffix(strings.TrimSuffix(f.Value.Type(), "Slice"), "Array")
			u := uses[f.Name]
			if u == nil {
				u = &use{kind: kind, where: path}
				uses[f.Name] = u
			} else if u.kind != kind {
				errs = append(errs, fmt.Sprintf("--%s is a %s in %s but a %s in %s: give one of them another name", f.Name, u.kind, u.where, kind, path))
			}
			u.cmds = append(u.cmds, path)
			if meanings[f.Name] == "" {
				errs = append(errs, fmt.Sprintf("--%s of %s has no meaning in the flag table: add it (one meaning per name)", f.Name, path))
			}
		})
		for _, sub := range c.Commands() {
			if documented(sub) {
				walk(sub)
			}
		}
	}
	walk(root)
	if len(errs) > 0 {
		sort.Strings(errs)
		return nil, fmt.Errorf("flag table: %s", strings.Join(errs, "; "))
	}
	var names []string
	for n := range uses {
		names = append(names, n)
	}
	sort.Strings(names)
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s flags\n\n", root.Name())
	fmt.Fprintf(&b, "Generated from the commands themselves by `%s docs --out docs/cli`; do not edit by hand.\n\n", root.Name())
	b.WriteString("Every flag name has one meaning, whatever the command: `--out` is always a path the command writes, " +
		"`--format` the layout of a responses input, `--print` the format of what is printed, `--items` an item-text file, " +
		"and a counted thing is `--n-...`. Old spellings still work for one release and print which flag to use instead.\n\n")
	b.WriteString("| flag | meaning | commands | old spellings |\n|---|---|---|---|\n")
	for _, n := range names {
		sort.Strings(old[n])
		fmt.Fprintf(&b, "| `--%s` | %s | %s | %s |\n", n, strings.ReplaceAll(meanings[n], "|", `\|`), strings.Join(uses[n].cmds, ", "), strings.Join(old[n], ", "))
	}
	return b.Bytes(), nil
}

// Write writes files into dir atomically, one by one, and removes the
// reference files of commands that no longer exist.
func Write(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	old, _ := filepath.Glob(filepath.Join(dir, "*_*.md"))
	for _, f := range old {
		if _, ok := files[filepath.Base(f)]; !ok {
			os.Remove(f)
		}
	}
	for name, body := range files {
		if err := fileio.WriteFileAtomic(filepath.Join(dir, name), func(w io.Writer) error { _, err := w.Write(body); return err }); err != nil {
			return err
		}
	}
	return nil
}

// Check compares the reference files in dir with files: a file that
// differs, is missing or is left over from a command that no longer exists
// is an error naming it and the command that rewrites the folder.
func Check(dir string, files map[string][]byte) error {
	var bad []string
	for name, body := range files {
		b, err := os.ReadFile(filepath.Join(dir, name))
		switch {
		case err != nil:
			bad = append(bad, name+" is missing")
		case !bytes.Equal(b, body):
			bad = append(bad, name+" differs")
		}
	}
	have, _ := filepath.Glob(filepath.Join(dir, "*.md"))
	for _, f := range have {
		if _, ok := files[filepath.Base(f)]; !ok {
			bad = append(bad, filepath.Base(f)+" is no command's")
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	return fmt.Errorf("%s is out of date (%s); run: go run ./cmd/jeirt docs --out %s", dir, strings.Join(bad, ", "), dir)
}

func render(c *cobra.Command, files map[string][]byte) error {
	c.DisableAutoGenTag = true // no date: the files depend only on the commands
	var b bytes.Buffer
	if err := doc.GenMarkdownCustom(c, &b, func(s string) string { return s }); err != nil {
		return err
	}
	files[FileName(c)] = b.Bytes()
	for _, sub := range c.Commands() {
		if documented(sub) {
			if err := render(sub, files); err != nil {
				return err
			}
		}
	}
	return nil
}

// FileName is the reference file of a command: "jeirt_irt_fit.md".
func FileName(c *cobra.Command) string {
	return strings.ReplaceAll(c.CommandPath(), " ", "_") + ".md"
}

// documented reports whether a command belongs in the reference.
func documented(c *cobra.Command) bool {
	return c.IsAvailableCommand() && !c.IsAdditionalHelpTopicCommand()
}

func index(root *cobra.Command) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s command reference\n\n", root.Name())
	fmt.Fprintf(&b, "Generated from the commands themselves by `%s docs --out docs/cli`; do not edit by hand.\n\n", root.Name())
	var walk func(c *cobra.Command, depth int)
	walk = func(c *cobra.Command, depth int) {
		fmt.Fprintf(&b, "%s- [%s](%s): %s\n", strings.Repeat("  ", depth), c.CommandPath(), FileName(c), c.Short)
		subs := c.Commands()
		sort.Slice(subs, func(i, j int) bool { return subs[i].Name() < subs[j].Name() })
		for _, sub := range subs {
			if documented(sub) {
				walk(sub, depth+1)
			}
		}
	}
	walk(root, 0)
	b.WriteString("\nEvery flag of every command, with its one meaning: [flags.md](flags.md).\n")
	return b.Bytes()
}
