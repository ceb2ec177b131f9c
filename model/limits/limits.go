// Package limits holds the bounds on what jeirt's readers, configurations
// and checkpoints accept (docs/limits.md), and Clip, which keeps a quoted
// input value within MaxQuote in an error message.
package limits

import (
	"strconv"
	"unicode/utf8"
)

// Limits on what the readers accept. They are documented in docs/limits.md.
const (
	// MaxPatternRespondents is the most respondents a pattern table (one row
	// per distinct response pattern with a freq column) may expand to.
	MaxPatternRespondents = 1 << 18

	// MaxPatternCells is the most cells (respondents times items) a pattern
	// table may expand to: a few bytes of freq must not ask for seconds of
	// work and gigabytes of memory.
	MaxPatternCells = 1 << 21

	// MaxLineBytes is the longest line (a record with its quoted line
	// breaks counts as one) a text reader accepts: a file without line
	// breaks, such as a stream of zeros, is refused there instead of
	// filling the memory.
	MaxLineBytes = 1 << 30

	// MaxQuote is the most bytes of an input value that an error message
	// quotes; longer values are cut and marked with their length.
	MaxQuote = 200
)

// Clip returns s shortened to at most MaxQuote bytes (cut at a UTF-8
// boundary) followed by a note of the full length, for quoting input in
// error messages.
func Clip(s string) string {
	if len(s) <= MaxQuote {
		return s
	}
	n := MaxQuote
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "… (" + strconv.Itoa(len(s)) + " bytes)"
}

// MaxDim is the largest embedding, hidden-layer or encoder dimension the
// configurations, encoders and checkpoints accept.
const MaxDim = 1 << 16
