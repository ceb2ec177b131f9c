package onboardrun

import (
	"math"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/onboard"
)

// checkNumbers refuses the numeric settings of add-model that no fit can
// use, before the checkpoint is opened: the fraction of answers fitted, and
// the population prior's ridge and the l2 prior's precision (0: their
// defaults), each finite and not negative.
func checkNumbers(o onboard.Onboard, fraction float64) error {
	switch {
	case !(fraction >= 0 && fraction <= 1):
		return model.FieldErrorf("Fraction", "{Fraction} %v: must be in (0, 1]", fraction)
	case !(o.Shrink >= 0) || math.IsInf(o.Shrink, 0):
		return model.FieldErrorf("Shrink", "{Shrink} %v: must be finite and positive (the ridge added to the population covariance, relative to its mean variance)", o.Shrink)
	case !(o.L2 >= 0) || math.IsInf(o.L2, 0):
		return model.FieldErrorf("L2", "{L2} %v: must be finite and positive (the l2 prior's precision)", o.L2)
	}
	return nil
}
