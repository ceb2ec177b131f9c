package estimate

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/irt"
)

// TestChooseRank: on answers from a rank-2 bank whose halves measure two
// abilities, p-IRT on the validation models' odd items from their even
// ones errs less at rank 2 than at rank 1, so rank 2 is chosen, and both
// validation fits converge under the default prior; a rank 0 is refused.
func TestChooseRank(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	r, _ := rank2Responses(60, 200, rng, "m")
	fitter := irt.CBMM{Prior: model.DefaultPrior, MaxIter: 500}
	cs, best, err := ChooseRank(context.Background(), fitter, []int{1, 2}, r, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		t.Logf("rank %d: MAE %.4f RMS %.4f converged %v %s", c.Rank, c.MAE, c.RMS, c.Converged, c.Note)
		if !c.Converged || c.Err != nil {
			t.Errorf("rank %d: converged %v (%s), error %v", c.Rank, c.Converged, c.Note, c.Err)
		}
	}
	if cs[best].Rank != 2 || !(cs[1].MAE < 0.7*cs[0].MAE) {
		t.Errorf("chose rank %d; MAE %.4f at rank 1, %.4f at rank 2: want rank 2, well below", cs[best].Rank, cs[0].MAE, cs[1].MAE)
	}
	if _, _, err := ChooseRank(context.Background(), fitter, []int{1, 0}, r, 0.95); err == nil || err.Error() != "ranks 0: a rank is at least 1" {
		t.Errorf("rank 0: error %v", err)
	}
}
