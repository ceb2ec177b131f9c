package interrupt

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// The error says what was kept and still is the context's error, wrapped.
func TestError(t *testing.T) {
	err := fmt.Errorf("fit: %w", &Error{Kept: "wrote out/fit with 3 of 5 replicates", Err: context.Canceled})
	if got, want := err.Error(), "fit: interrupted; wrote out/fit with 3 of 5 replicates"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	var e *Error
	if !errors.Is(err, context.Canceled) || !errors.As(err, &e) || e.Kept != "wrote out/fit with 3 of 5 replicates" {
		t.Errorf("errors.Is %v, errors.As %v", errors.Is(err, context.Canceled), e)
	}
}
