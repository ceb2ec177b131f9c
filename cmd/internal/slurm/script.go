package slurm

import (
	"strings"
	"unicode"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/limits"
)

// The job scripts jeirt writes name paths (the job folder, the items, the
// binary) in three places, each with its own quoting: bash words (Quote),
// the arguments of #SBATCH lines, which sbatch itself splits (Directive),
// and Slurm's filename patterns (--output), where % is special (Pattern).
// A path that none of them can hold (a newline, any control character, a
// backslash, which turns a filename pattern off) is refused up front
// (CheckScriptPath).

// Quote is s as one word of a bash script: single-quoted, so that nothing
// in it ($, backquotes, spaces, quotes) is expanded or split.
func Quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// Directive is s as one argument of an #SBATCH line: sbatch groups what is
// inside double quotes and takes a backslash as an escape (and an unquoted
// # as the start of a comment).
func Directive(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}

// Pattern is the literal path p as part of a Slurm filename pattern
// (--output): a % stands for itself as %%.
func Pattern(p string) string { return strings.ReplaceAll(p, "%", "%%") }

// CheckScriptPath refuses a path that a job script cannot name safely: a
// control character (a newline would end the line it is on) or a
// backslash (Slurm's filename patterns stop at one). field is the flag or
// key that gave it, for the message.
func CheckScriptPath(field, p string) error {
	for _, r := range p {
		if unicode.IsControl(r) || r == '\\' {
			return model.FieldErrorf(field, "{"+field+"} %q holds %q, which a Slurm job script cannot name; choose a path without control characters or backslashes", limits.Clip(p), r)
		}
	}
	if !strings.ContainsFunc(p, func(r rune) bool { return !unicode.IsSpace(r) }) {
		return model.FieldErrorf(field, "{"+field+"} %q is empty", p)
	}
	return nil
}

// globEscape is p with the characters filepath.Glob treats as special
// escaped, so that a folder named [x] or a*b matches only itself.
func globEscape(p string) string {
	var b strings.Builder
	for _, r := range p {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Comment is s on one line of a script's comment: each control character
// (a newline would end the comment) becomes a space.
func Comment(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

// DirectiveArgs splits the text after "#SBATCH" on one line into its
// arguments the way sbatch does (src/sbatch/opt.c, _get_argument): blanks
// separate them, single or double quotes group, a backslash escapes the
// next character, and an unquoted # starts a comment.
func DirectiveArgs(line string) []string {
	var args []string
	var arg strings.Builder
	in, escaped, quote, q := false, false, false, rune(0)
	for _, r := range line {
		switch {
		case escaped:
			escaped = false
			arg.WriteRune(r)
			in = true
			continue
		case r == '\\':
			escaped, in = true, true
			continue
		case quote:
			if r == q {
				quote = false
				continue
			}
		case r == '"' || r == '\'':
			quote, q, in = true, r, true
			continue
		case r == '#':
			if in {
				args = append(args, arg.String())
			}
			return args
		case unicode.IsSpace(r):
			if in {
				args = append(args, arg.String())
				arg.Reset()
				in = false
			}
			continue
		}
		arg.WriteRune(r)
		in = true
	}
	if in {
		args = append(args, arg.String())
	}
	return args
}

// Arg is p as a word of a command the user is told to type: itself when
// the shell takes it as it is, else quoted (a folder named x$(cmd) is not
// run when the suggestion is pasted).
func Arg(p string) string {
	if p != "" && !strings.ContainsFunc(p, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:=@,%", r))
	}) {
		return p
	}
	return Quote(p)
}
