// Package cli holds the command-line conventions of jeirt's commands that
// are not jeirt's own logic: deprecated flag spellings, suggestions for
// mistyped flags and commands, and positional-argument checks that show an
// example.
package cli

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/jeirt/jeirt/model/suggest"
)

// The flag vocabulary shared by every command: --data the responses file,
// --items the item texts (an item file: item_id,text), --groups an item-group
// file (item id and category), --format the layout of an input, --print the
// format of what is printed (table, csv, json), --out an output path, and
// counts as --n-<thing>. Older spellings stay one release as hidden aliases
// that print one deprecation line ("route: --output is deprecated; use
// --print"). docs/cli/flags.md lists every flag with its one meaning.

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
	warnAliases(cmd)
}

// warnAliases makes cmd print one deprecation line for each hidden alias
// given (once per command, whatever the number of aliases).
func warnAliases(cmd *cobra.Command) {
	if cmd.Annotations["aliases"] != "" {
		return
	}
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations["aliases"] = "yes"
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

// PrintJSON adds --print table|json, the format of what cmd prints, to a
// command that printed JSON with --json: asJSON is true for --print json,
// and --json stays one release as its deprecated spelling. Call it after
// the command's RunE is set.
func PrintJSON(cmd *cobra.Command, asJSON *bool) {
	cmd.Flags().Var(&printJSON{asJSON}, "print", "what to print on standard output: table or json")
	cmd.Flags().AddFlag(&pflag.Flag{Name: "json", Usage: "print JSON (old spelling of --print json)", Value: newBoolValue(asJSON), DefValue: "false",
		NoOptDefVal: "true", Hidden: true, Annotations: map[string][]string{"alias-of": {"print json"}}})
	warnAliases(cmd)
}

type printJSON struct{ json *bool }

func (p *printJSON) String() string {
	if p.json != nil && *p.json {
		return "json"
	}
	return "table"
}
func (p *printJSON) Type() string { return "string" }
func (p *printJSON) Set(v string) error {
	switch v {
	case "table", "json":
		*p.json = v == "json"
		return nil
	}
	return fmt.Errorf("want table or json")
}

type boolValue struct{ b *bool }

func newBoolValue(b *bool) *boolValue { return &boolValue{b} }
func (v *boolValue) String() string {
	if v.b != nil && *v.b {
		return "true"
	}
	return "false"
}
func (v *boolValue) Type() string     { return "bool" }
func (v *boolValue) IsBoolFlag() bool { return true }
func (v *boolValue) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err == nil {
		*v.b = b
	}
	return err
}

// FlagError adds a suggestion to pflag's unknown-flag errors: the
// command's flag nearest the mistyped name, or the one a familiar name from
// other tools stands for (--input: --data, --cfg: --config), or else the
// command's flags, so that no unknown flag goes without one.
func FlagError(cmd *cobra.Command, err error) error {
	var nf *pflag.NotExistError
	if !errors.As(err, &nf) {
		return err
	}
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		// A shorthand (-x): jeirt has none but -h.
		return fmt.Errorf("%w (jeirt's flags are long, --name; %s)", err, flagList(cmd))
	}
	name, _, _ = strings.Cut(name, "=")
	if s := SuggestFlag(cmd, name); s != "" {
		return fmt.Errorf("%w (did you mean --%s?)", err, s)
	}
	return fmt.Errorf("%w (%s)", err, flagList(cmd))
}

// synonyms are names users bring from other tools, with the jeirt flags they
// may mean, most likely first.
var synonyms = map[string][]string{
	"input": {"data", "items"}, "in": {"data", "items"}, "file": {"data", "items"}, "responses": {"data"},
	"matrix": {"data"}, "dataset": {"data"}, "response": {"data"},
	"cfg": {"config"}, "conf": {"config"}, "configuration": {"config"},
	"output": {"out", "print"}, "o": {"out"}, "output-dir": {"out"}, "outdir": {"out"}, "out-dir": {"out"}, "dir": {"out"},
	"dest": {"out"}, "save": {"out"}, "overwrite": {"force"}, "yes": {"force"},
	"ckpt": {"checkpoint"}, "model-dir": {"checkpoint"}, "model": {"models", "checkpoint"}, "run": {"checkpoint"},
	"questions": {"items"}, "texts": {"items"}, "prompts": {"items"}, "item-file": {"items"},
	"categories": {"groups"}, "category": {"groups"},
	"json": {"print"}, "csv": {"print"}, "fmt": {"format", "print"}, "layout": {"format"},
	"gpu": {"device"}, "cuda": {"device"}, "cpu": {"device"}, "jobs": {"threads"}, "workers": {"threads"}, "j": {"threads"},
	"n-bootstrap": {"bootstrap"}, "boot": {"bootstrap"}, "random-seed": {"seed"},
	"port": {"addr"}, "host": {"addr"}, "listen": {"addr"}, "token": {"token-env"},
	"num-models": {"n-models"}, "num-items": {"n-items"}, "nmodels": {"n-models"}, "nitems": {"n-items"},
}

// SuggestFlag returns the visible flag of cmd closest to name by edit
// distance (at most 2, or a prefix of it), or the first flag of cmd that a
// familiar name stands for (synonyms), or "".
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
	if best != "" {
		return best
	}
	for _, s := range synonyms[strings.ToLower(name)] {
		if f := cmd.Flags().Lookup(s); f != nil && !f.Hidden {
			return s
		}
	}
	return ""
}

// flagList is "its flags: --a, --b (jeirt X --help)" for cmd.
func flagList(cmd *cobra.Command) string {
	var names []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && f.Name != "help" {
			names = append(names, "--"+f.Name)
		}
	})
	if len(names) == 0 {
		return fmt.Sprintf("%s takes no flags", cmd.CommandPath())
	}
	return fmt.Sprintf("%s takes %s; see %s --help", cmd.CommandPath(), strings.Join(names, ", "), cmd.CommandPath())
}

// Levenshtein is the edit distance between a and b (suggest.EditDistance).
func Levenshtein(a, b string) int { return suggest.EditDistance(a, b) }

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
