// Package progress is how long work reports: Logf, the one function type
// every library package takes for its progress lines and warnings, and
// LogTo, the Logf of a command that prints them.
package progress

import (
	"fmt"
	"io"
)

// Logf receives the progress lines and warnings of long work: one line per
// call, formatted as by fmt.Sprintf, without a trailing newline. Library
// packages report through a Logf field or argument and never print; a nil
// Logf discards the lines. Commands pass one that prints (see LogTo).
type Logf func(format string, args ...any)

// Printf hands one line to l, unless l is nil.
func (l Logf) Printf(format string, args ...any) {
	if l != nil {
		l(format, args...)
	}
}

// LogTo returns a Logf that writes each line to w followed by a newline, or
// nil (silent) when w is nil.
func LogTo(w io.Writer) Logf {
	if w == nil {
		return nil
	}
	return func(format string, args ...any) {
		fmt.Fprintf(w, format+"\n", args...)
	}
}
