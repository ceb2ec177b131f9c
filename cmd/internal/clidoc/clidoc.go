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
)

// Files renders root and every documented command under it, keyed by file
// name ("jeirt_irt_fit.md"), with the index as "README.md".
func Files(root *cobra.Command) (map[string][]byte, error) {
	files := map[string][]byte{"README.md": index(root)}
	return files, render(root, files)
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
	return b.Bytes()
}
