package estimate

import (
	"context"
	"fmt"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/irt"
)

// RankChoice is one candidate rank of ChooseRank: p-IRT's mean absolute
// and root mean square error on the validation models (ValidationBias),
// whether the validation fit converged (and its Note when not), and Err,
// when the rank could not be fitted or scored at all.
type RankChoice struct {
	Rank      int
	MAE, RMS  float64
	Converged bool
	Note      string
	Err       error
}

// ChooseRank chooses the rank of the fit behind the estimate as
// tinyBenchmarks chooses its dimension (Maia Polo et al. 2024, its
// notebooks): for each of ranks, train is fitted without every fifth of
// its models (the validation models), their θ estimated from their
// even-numbered items and p-IRT's error measured on the odd-numbered ones
// (ValidationBias); best is the index of the rank of the lowest mean
// absolute error, ties to the lower rank. A rank whose fit or scoring
// fails is reported (its Err) and not chosen; it is an error only when no
// rank is left.
func ChooseRank(ctx context.Context, fitter irt.CBMM, ranks []int, train *model.Responses, level float64) (out []RankChoice, best int, err error) {
	best = -1
	for _, rk := range ranks {
		if rk < 1 {
			return nil, 0, model.FieldErrorf("Ranks", "{Ranks} %d: a rank is at least 1", rk)
		}
		f := fitter
		f.Rank = rk
		c, err := validate(ctx, f, train, level)
		if ctx.Err() != nil {
			return nil, 0, ctx.Err()
		}
		c.Err = err
		out = append(out, c)
		if err == nil && (best < 0 || c.MAE < out[best].MAE) {
			best = len(out) - 1
		}
	}
	if best < 0 {
		return out, 0, fmt.Errorf("estimate: no rank of %v could be fitted and scored on the validation models (rank %d: %v)", ranks, out[0].Rank, out[0].Err)
	}
	return out, best, nil
}
