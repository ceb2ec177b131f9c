package pipeline

import "fmt"

// Kept says what a run interrupted after its first epoch wrote into out
// (the message of the model.KeptError jeirt train exits with).
func (r *Result) Kept(out string) string {
	if r.Fit.Interrupted {
		return fmt.Sprintf("wrote %s with epoch %d, the best by validation loss of the %d epochs run; metrics.json says interrupted: true",
			out, r.Fit.BestEpoch, r.Fit.EpochsRun)
	}
	return fmt.Sprintf("wrote %s with the trained model; what came after training (the baselines or the routing cross-validation) did not finish, as metrics.json says", out)
}
