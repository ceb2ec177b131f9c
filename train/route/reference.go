package route

import (
	"math"

	"github.com/jeirt/jeirt/model/checkpoint"
)

// Reference is the score that ranks a checkpoint's models (one per row of
// M, higher is better) for best-single, the shortlist and the margin's
// default: the training accuracy its routing block records (−Inf for a
// model added later), or, for a checkpoint without one, each model's mean
// predicted P over the checkpoint's questions.
func Reference(ck *checkpoint.Checkpoint) []float64 {
	rt := ck.Manifest.Routing
	if rt == nil || len(rt.TrainAccuracy) == 0 {
		return MeanPredictedP(ck.Model)
	}
	ref := make([]float64, ck.Model.NumModels())
	for i, name := range ck.Model.Models {
		ref[i] = math.Inf(-1)
		if v, ok := rt.TrainAccuracy[name]; ok {
			ref[i] = v
		}
	}
	return ref
}
