package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/jeirt/jeirt/model"
)

// The docs command writes the CLI reference (one Markdown file per command,
// by cobra's doc generator, and an index) from the command tree itself, so
// flags and help text cannot drift from docs/cli. It is hidden: users read
// the files it writes.
func init() {
	var out string
	cmd := &cobra.Command{
		Use:     "docs",
		Short:   "Write the Markdown CLI reference (one file per command) to --out",
		Hidden:  true,
		Args:    cobra.NoArgs,
		Example: `  jeirt docs --out docs/cli`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return fmt.Errorf("docs: --out DIR is required")
			}
			files := map[string][]byte{"README.md": indexMarkdown(rootCmd)}
			if err := referenceFiles(rootCmd, files); err != nil {
				return err
			}
			if err := os.MkdirAll(out, 0o755); err != nil {
				return fmt.Errorf("docs: %w", err)
			}
			old, _ := filepath.Glob(filepath.Join(out, "jeirt*.md")) // of commands that no longer exist
			for _, f := range old {
				if _, ok := files[filepath.Base(f)]; !ok {
					os.Remove(f)
				}
			}
			for name, body := range files {
				if err := model.WriteFileAtomic(filepath.Join(out, name), func(w io.Writer) error { _, err := w.Write(body); return err }); err != nil {
					return fmt.Errorf("docs: %w", err)
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %d files to %s\n", len(files), out)
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "folder to write the Markdown reference to (e.g. docs/cli)")
	rootCmd.AddCommand(cmd)
}

// referenceFiles renders c and every documented command under it with
// cobra's Markdown generator, keyed by file name (jeirt_irt_fit.md).
func referenceFiles(c *cobra.Command, files map[string][]byte) error {
	c.DisableAutoGenTag = true // no date: the files depend only on the commands
	var b bytes.Buffer
	if err := doc.GenMarkdownCustom(c, &b, func(s string) string { return s }); err != nil {
		return err
	}
	files[docFileName(c)] = b.Bytes()
	for _, sub := range c.Commands() {
		if documented(sub) {
			if err := referenceFiles(sub, files); err != nil {
				return err
			}
		}
	}
	return nil
}

// docFileName is the reference file of a command: "jeirt_irt_fit.md".
func docFileName(c *cobra.Command) string {
	return strings.ReplaceAll(c.CommandPath(), " ", "_") + ".md"
}

// documented reports whether a command belongs in the reference.
func documented(c *cobra.Command) bool {
	return c.IsAvailableCommand() && !c.IsAdditionalHelpTopicCommand()
}

func indexMarkdown(root *cobra.Command) []byte {
	var b bytes.Buffer
	b.WriteString("# jeirt command reference\n\n")
	b.WriteString("Generated from the commands themselves by `jeirt docs --out docs/cli`; do not edit by hand.\n\n")
	var walk func(c *cobra.Command, depth int)
	walk = func(c *cobra.Command, depth int) {
		fmt.Fprintf(&b, "%s- [%s](%s): %s\n", strings.Repeat("  ", depth), c.CommandPath(), docFileName(c), c.Short)
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
