// Package cli holds the command-line conventions of jeirt's commands that
// are not jeirt's own logic: deprecated flag spellings, suggestions for
// mistyped flags and commands, and positional-argument checks that show an
// example.
package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The flag vocabulary shared by every command: --data the responses file,
// --items the item texts, --format the layout of an input, --output the format
// of what is printed, --out an output path, --json a switch that prints JSON
// on standard output. Older spellings stay as hidden aliases that print one
// deprecation line (pflag's "Flag --X has been deprecated, use --Y instead").

// Alias registers old as a hidden, deprecated spelling of the flag named to:
// both set the same value, and using old prints one line on standard error.
// Call it after the command's RunE is set.
func Alias(cmd *cobra.Command, old, to string) {
	f := cmd.Flags()
	nf := f.Lookup(to)
	if nf == nil {
		panic("Alias: no flag --" + to)
	}
	f.AddFlag(&pflag.Flag{Name: old, Usage: nf.Usage, Value: nf.Value, DefValue: nf.DefValue, NoOptDefVal: nf.NoOptDefVal,
		Hidden: true, Annotations: map[string][]string{"alias-of": {to}}})
	if cmd.Annotations["aliases"] != "" {
		return
	}
	cmd.Annotations = map[string]string{"aliases": "yes"}
	run := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		c.Flags().Visit(func(fl *pflag.Flag) {
			if to := fl.Annotations["alias-of"]; len(to) > 0 {
				fmt.Fprintf(c.ErrOrStderr(), "%s: --%s is deprecated; use --%s\n", c.Name(), fl.Name, to[0])
			}
		})
		return run(c, args)
	}
}

// FlagError adds a suggestion to pflag's unknown-flag errors: the command's
// flag nearest the mistyped name.
func FlagError(cmd *cobra.Command, err error) error {
	var nf *pflag.NotExistError
	if !errors.As(err, &nf) {
		return err
	}
	name := strings.TrimPrefix(err.Error(), "unknown flag: --")
	if name == err.Error() {
		return err
	}
	name, _, _ = strings.Cut(name, "=")
	if s := SuggestFlag(cmd, name); s != "" {
		return fmt.Errorf("%w (did you mean --%s?)", err, s)
	}
	return err
}

// SuggestFlag returns the visible flag of cmd closest to name by edit
// distance (at most 2, or a prefix of it), or "".
func SuggestFlag(cmd *cobra.Command, name string) string {
	best, bestD := "", 3
	visit := func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		d := Levenshtein(name, f.Name)
		if d < bestD || (best == "" && len(name) >= 3 && strings.HasPrefix(f.Name, name)) {
			best, bestD = f.Name, min(d, bestD)
		}
	}
	cmd.Flags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	return best
}

// Levenshtein is the edit distance between a and b.
func Levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev, cur := make([]int, len(rb)+1), make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			c := 1
			if ra[i-1] == rb[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// NeedArgs is an Args check that says what the positional arguments are and
// shows the command's first example when they are missing or too many.
func NeedArgs(lo, hi int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) >= lo && (hi < 0 || len(args) <= hi) {
			return nil
		}
		msg := fmt.Sprintf("%s: needs %s, got %d argument(s)", strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" "), what, len(args))
		if len(args) > 0 && cmd.HasSubCommands() {
			msg += SuggestCommand(cmd, args[0])
		}
		// The first example of this command, with its continuation lines.
		var ex []string
		for _, l := range strings.Split(cmd.Example, "\n") {
			if len(ex) > 0 || strings.Contains(l, cmd.CommandPath()+" ") {
				ex = append(ex, "  "+strings.TrimSpace(l))
				if !strings.HasSuffix(l, "\\") {
					break
				}
			}
		}
		if len(ex) > 0 {
			msg += "\nexample:\n" + strings.Join(ex, "\n    ")
		}
		return errors.New(msg)
	}
}

// GroupRun makes a command that only holds subcommands say which command was
// unknown (with cobra's suggestions) instead of printing its help and exiting 0.
func GroupRun(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return cmd.Help()
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath()) + SuggestCommand(cmd, args[0])
	return errors.New(msg + "\nrun " + cmd.CommandPath() + " --help for its commands")
}

// SuggestCommand is "; did you mean jeirt irt fit?" for a mistyped
// subcommand of cmd, or "".
func SuggestCommand(cmd *cobra.Command, arg string) string {
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2
	}
	if s := cmd.SuggestionsFor(arg); len(s) > 0 {
		return fmt.Sprintf("; did you mean %s %s?", cmd.CommandPath(), s[0])
	}
	return ""
}
