package cli

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/jeirt/jeirt/model/interrupt"
)

// StopsOnSignal is the annotation of a command whose normal end is Ctrl-C
// or SIGTERM (serve): it exits 0 when stopped.
const StopsOnSignal = "jeirt-stops-on-signal"

// ExitStatus is the one exit rule of every command c run under ctx (which
// Ctrl-C and SIGTERM cancel) that returned err: 0 when it finished; 130
// when it was interrupted, after keeping what was complete, whether it says
// what it kept (a interrupt.Error), wrote nothing (context.Canceled), or
// returned without an error after it stopped early; 1 for any other error.
// msg is the last line to print ("" for none).
func ExitStatus(c *cobra.Command, ctx context.Context, err error) (code int, msg string) {
	var kept *interrupt.Error
	switch {
	case errors.As(err, &kept):
		return 130, kept.Error()
	case errors.Is(err, context.Canceled):
		return 130, "interrupted; nothing was written"
	case err != nil:
		return 1, err.Error()
	case ctx.Err() != nil && (c == nil || c.Annotations[StopsOnSignal] == ""):
		return 130, "interrupted; what was complete is kept (see above)"
	}
	return 0, ""
}
