// Package yamlerr puts the errors of a YAML parser so that a user can act
// on them (Wrap): a tab in an indentation is named with its line.
package yamlerr

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// Wrap is err, the error of a YAML parser reading raw (the text of
// the file source), put so a user can act on it: a tab in a line's
// indentation, which YAML forbids and the parser reports as "found
// character that cannot start any token", is named with its line and what
// to do. Any other error is given as "source: err".
func Wrap(err error, raw []byte, source string) error {
	msg := err.Error()
	lines := bytes.Split(raw, []byte("\n"))
	tabbed := func(n int) bool {
		if n < 1 || n > len(lines) {
			return false
		}
		l := lines[n-1]
		indent := l[:len(l)-len(bytes.TrimLeft(l, " \t"))]
		return bytes.IndexByte(indent, '\t') >= 0
	}
	line := 0
	if i := strings.Index(msg, "line "); i >= 0 {
		digits := msg[i+len("line "):]
		if j := strings.IndexFunc(digits, func(r rune) bool { return r < '0' || r > '9' }); j >= 0 {
			digits = digits[:j]
		}
		line, _ = strconv.Atoi(digits)
	}
	if !tabbed(line) && strings.Contains(msg, "cannot start any token") {
		// The parser may name a later line; the first tab-indented one is
		// the cause.
		for n := 1; n <= len(lines); n++ {
			if tabbed(n) {
				line = n
				break
			}
		}
	}
	if tabbed(line) {
		return fmt.Errorf("%s:%d: tabs are not allowed in YAML: indent line %d with spaces", source, line, line)
	}
	return fmt.Errorf("%s: %w", source, err)
}
