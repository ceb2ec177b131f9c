package main

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/spf13/cobra"

	"github.com/jeirt/jeirt/cmd/internal/cli"
)

// TestCLIReferenceUpToDate regenerates the CLI reference into a temporary
// folder and fails when docs/cli differs: run `go run ./cmd/jeirt docs --out
// docs/cli` after changing a command's flags or help text.
func TestCLIReferenceUpToDate(t *testing.T) {
	dir := t.TempDir()
	rootCmd.SetArgs([]string{"docs", "--out", dir})
	rootCmd.SetOut(&bytes.Buffer{})
	defer rootCmd.SetArgs(nil)
	defer rootCmd.SetOut(nil)
	if err := rootCmd.Execute(); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join("..", "..", "docs", "cli")
	got, _ := filepath.Glob(filepath.Join(dir, "*.md"))
	have, _ := filepath.Glob(filepath.Join(want, "*.md"))
	names := func(paths []string) []string {
		var n []string
		for _, p := range paths {
			n = append(n, filepath.Base(p))
		}
		sort.Strings(n)
		return n
	}
	gn, hn := names(got), names(have)
	if len(gn) < 10 {
		t.Fatalf("only %d reference files generated: %v", len(gn), gn)
	}
	if len(gn) != len(hn) {
		t.Fatalf("docs/cli has %d files, the commands give %d:\n have %v\n want %v\nrun: go run ./cmd/jeirt docs --out docs/cli", len(hn), len(gn), hn, gn)
	}
	for i, n := range gn {
		if hn[i] != n {
			t.Fatalf("docs/cli lacks %s (has %s); run: go run ./cmd/jeirt docs --out docs/cli", n, hn[i])
		}
		a, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(want, n))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("docs/cli/%s is out of date; run: go run ./cmd/jeirt docs --out docs/cli", n)
		}
	}
}

// TestEveryCommandGuarded: every command that does work goes through
// cli.Guard (the output rule before any work, one message naming --force,
// the input context), new ones included; only groups of subcommands and
// cobra's own help and completion commands do not.
func TestEveryCommandGuarded(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if !c.Runnable() || c == rootCmd || c.Name() == "help" || c.Name() == "completion" || c.Parent() != nil && c.Parent().Name() == "completion" {
			return
		}
		switch c.CommandPath() {
		case "jeirt irt", "jeirt data", "jeirt analyze", "jeirt device":
			return // groups (groupRun): they only name their subcommands
		}
		if c.Annotations[cli.GuardedAnnotation] == "" {
			t.Errorf("%s does not go through cli.Guard", c.CommandPath())
		}
	}
	walk(rootCmd)
}
