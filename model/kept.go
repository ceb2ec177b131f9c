package model

// KeptError is the error of long work stopped (Ctrl-C) after it wrote what
// was complete: Kept says what, for the terminal ("wrote out/fit with the
// fit and 1925 of 2000 bootstrap replicates"). It unwraps to the context's
// error, so errors.Is(err, context.Canceled) still holds.
type KeptError struct {
	Kept string
	Err  error
}

func (e *KeptError) Error() string { return "interrupted; " + e.Kept }

func (e *KeptError) Unwrap() error { return e.Err }
