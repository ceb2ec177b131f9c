package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"
)

// The docs command writes the CLI reference (one Markdown file per command)
// from the command tree itself, so flags and help text cannot drift from the
// reference in docs/cli. It is hidden: users read the files it writes.
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
			files, err := cliReference(rootCmd)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(out, 0o755); err != nil {
				return fmt.Errorf("docs: %w", err)
			}
			// Remove reference files of commands that no longer exist.
			old, _ := filepath.Glob(filepath.Join(out, "jeirt*.md"))
			for _, f := range old {
				if _, ok := files[filepath.Base(f)]; !ok {
					if err := os.Remove(f); err != nil {
						return fmt.Errorf("docs: %w", err)
					}
				}
			}
			for name, body := range files {
				if err := writeFileAtomic(filepath.Join(out, name), body); err != nil {
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

// writeFileAtomic writes b to a temporary file beside path and renames it.
func writeFileAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// docFileName is the reference file of a command: "jeirt_irt_fit.md".
func docFileName(c *cobra.Command) string {
	return strings.ReplaceAll(c.CommandPath(), " ", "_") + ".md"
}

// documented reports whether a command belongs in the reference.
func documented(c *cobra.Command) bool {
	return c.IsAvailableCommand() && !c.IsAdditionalHelpTopicCommand()
}

// cliReference renders the reference of root and every visible command under
// it, keyed by file name. The output depends only on the command tree.
func cliReference(root *cobra.Command) (map[string][]byte, error) {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	files := map[string][]byte{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		files[docFileName(c)] = commandMarkdown(c)
		for _, sub := range c.Commands() {
			if documented(sub) {
				walk(sub)
			}
		}
	}
	walk(root)
	files["README.md"] = indexMarkdown(root)
	return files, nil
}

func commandMarkdown(c *cobra.Command) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n\n", c.CommandPath())
	fmt.Fprintf(&b, "%s\n\n", c.Short)
	if c.Long != "" {
		fmt.Fprintf(&b, "%s\n\n", strings.TrimSpace(c.Long))
	}
	if c.Runnable() {
		fmt.Fprintf(&b, "```\n%s\n```\n\n", c.UseLine())
	}
	if len(c.Aliases) > 0 {
		fmt.Fprintf(&b, "Aliases: %s\n\n", strings.Join(c.Aliases, ", "))
	}
	if c.Example != "" {
		fmt.Fprintf(&b, "## Examples\n\n```\n%s\n```\n\n", strings.TrimRight(c.Example, "\n"))
	}
	c.InitDefaultHelpFlag()
	if fs := c.NonInheritedFlags(); fs.HasAvailableFlags() {
		fmt.Fprintf(&b, "## Flags\n\n```\n%s```\n\n", fs.FlagUsages())
	}
	if fs := c.InheritedFlags(); fs.HasAvailableFlags() {
		fmt.Fprintf(&b, "## Flags from parent commands\n\n```\n%s```\n\n", fs.FlagUsages())
	}
	var links []string
	if c.HasParent() {
		p := c.Parent()
		links = append(links, fmt.Sprintf("- [%s](%s): %s", p.CommandPath(), docFileName(p), p.Short))
	}
	subs := c.Commands()
	sort.Slice(subs, func(i, j int) bool { return subs[i].Name() < subs[j].Name() })
	for _, sub := range subs {
		if documented(sub) {
			links = append(links, fmt.Sprintf("- [%s](%s): %s", sub.CommandPath(), docFileName(sub), sub.Short))
		}
	}
	if len(links) > 0 {
		fmt.Fprintf(&b, "## See also\n\n%s\n", strings.Join(links, "\n"))
	}
	return append(bytes.TrimRight(b.Bytes(), "\n"), '\n')
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
