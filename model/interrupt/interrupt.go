// Package interrupt holds the error of long work stopped (Ctrl-C) after it
// wrote what was complete (Error), which every command exits with as 130
// after printing what was kept.
package interrupt

// Error is the error of long work stopped (Ctrl-C) after it wrote what
// was complete: Kept says what, for the terminal ("wrote out/fit with the
// fit and 1925 of 2000 bootstrap replicates"). It unwraps to the context's
// error, so errors.Is(err, context.Canceled) still holds.
type Error struct {
	Kept string
	Err  error
}

func (e *Error) Error() string { return "interrupted; " + e.Kept }

func (e *Error) Unwrap() error { return e.Err }
