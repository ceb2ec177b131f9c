package pipeline

import (
	"fmt"

	"github.com/jeirt/jeirt/model/interrupt"
)

// Kept says what a run interrupted after its first epoch wrote into out
// (the message of the error Interrupted gives).
func (r *Result) Kept(out string) string {
	if r.Fit.Interrupted {
		return fmt.Sprintf("wrote %s with epoch %d, the best by validation loss of the %d epochs run; metrics.json says interrupted: true",
			out, r.Fit.BestEpoch, r.Fit.EpochsRun)
	}
	return fmt.Sprintf("wrote %s with the trained model; what came after training (the baselines or the routing cross-validation) did not finish, as metrics.json says", out)
}

// Interrupted is the error jeirt train exits with when err (the context's)
// stopped the run after it wrote into out what Kept says.
func (r *Result) Interrupted(out string, err error) error {
	return &interrupt.Error{Kept: r.Kept(out), Err: err}
}
