package router

import (
	"math"

	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/train/route"
)

// Reference is the score that ranks a checkpoint's models (one per row of
// M, higher is better) for best-single, the shortlist and the margin's
// default: the training accuracy its routing block records (−Inf for a
// model added later), or, for a checkpoint without one, each model's mean
// predicted P over the checkpoint's questions (route.MeanPredictedP).
func Reference(ck *checkpoint.Checkpoint) []float64 {
	rt := ck.Manifest.Routing
	if rt == nil || len(rt.TrainAccuracy) == 0 {
		return route.MeanPredictedP(ck.Model)
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

// CalibrationOf is the calibration a checkpoint's routing block records,
// its priors from the recorded training accuracies (a model added later
// takes its mean predicted P over the checkpoint's questions), or nil: a
// checkpoint without one routes by the map's P, as before.
func CalibrationOf(ck *checkpoint.Checkpoint) *route.Calibration {
	rt := ck.Manifest.Routing
	if rt == nil || rt.Calibration == nil {
		return nil
	}
	m := ck.Model
	acc := make([]float64, m.NumModels())
	var fill []float64
	for i, name := range m.Models {
		v, ok := rt.TrainAccuracy[name]
		if !ok {
			v = math.NaN()
			if fill == nil {
				fill = route.MeanPredictedP(m)
			}
		}
		acc[i] = v
	}
	return route.NewCalibration(*rt.Calibration, acc, fill)
}
