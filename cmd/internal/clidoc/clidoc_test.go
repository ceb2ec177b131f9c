package clidoc

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestFlagTableOneMeaning: the table lists each flag once with its meaning,
// its commands and old spellings, and refuses a flag without a meaning or
// a name with two kinds of value.
func TestFlagTableOneMeaning(t *testing.T) {
	tree := func() *cobra.Command {
		root := &cobra.Command{Use: "tool"}
		a := &cobra.Command{Use: "a", Run: func(*cobra.Command, []string) {}}
		b := &cobra.Command{Use: "b", Run: func(*cobra.Command, []string) {}}
		a.Flags().String("out", "", "")
		a.Flags().Int("n-items", 1, "")
		b.Flags().String("out", "", "")
		b.Flags().StringSlice("data", nil, "")
		b.Flags().String("output", "", "")
		b.Flags().Lookup("output").Hidden = true
		b.Flags().Lookup("output").Annotations = map[string][]string{"alias-of": {"out"}}
		root.AddCommand(a, b)
		return root
	}
	meanings := map[string]string{"out": "output path", "n-items": "a count", "data": "responses file"}
	got, err := FlagTable(tree(), meanings)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| `--data` | responses file | b |  |\n", "| `--n-items` | a count | a |  |\n", "| `--out` | output path | a, b | `--output` (b) |\n"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	delete(meanings, "data")
	if _, err := FlagTable(tree(), meanings); err == nil || !strings.Contains(err.Error(), "--data of b has no meaning") {
		t.Errorf("a flag without a meaning: %v", err)
	}
	meanings["data"] = "responses file"
	root := tree()
	root.Commands()[0].Flags().Int("data", 0, "")
	if _, err := FlagTable(root, meanings); err == nil || !strings.Contains(err.Error(), "--data is a int in a but a string in b") {
		t.Errorf("two kinds of value: %v", err)
	}
}
