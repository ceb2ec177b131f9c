package irtrun

import (
	"math"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/irtfit"
	"github.com/jeirt/jeirt/train/irt"
)

// checkKeep refuses a fraction of items to keep outside (0, 1] (NaN and
// infinities included), the one rule of every jeirt irt select rule.
func checkKeep(keep float64) error {
	if !(keep > 0 && keep <= 1) {
		return model.FieldErrorf("Keep", "{Keep}: keep %v must be in (0, 1]", keep)
	}
	return nil
}

// checkNumbers refuses the numeric settings of jeirt irt estimate that no
// run can use, before anything is read or fitted: the interval level, the
// Student-t degrees of freedom and, with Eval or CV, the splits, the
// budget, the held-out share and the fits' settings (by CheckSettings, the
// rule of jeirt irt fit). A zero keeps the default of the zero value
// (level 0.95, 10 splits, a fifth of the models held out).
func (e Estimate) checkNumbers() error {
	switch {
	case !(e.Level >= 0 && e.Level < 1):
		return model.FieldErrorf("Level", "{Level} %v: must be in (0, 1)", e.Level)
	case !(e.PriorDF >= 0) || math.IsInf(e.PriorDF, 0):
		return model.FieldErrorf("PriorDF", "{PriorDF} %v: must be finite and not negative (0: normal priors)", e.PriorDF)
	}
	if !e.Eval && !e.CV {
		return nil
	}
	ev := e.Eval1
	switch {
	case ev.Seeds < 0:
		return model.FieldErrorf("Seeds", "{Seeds} %d: must be at least 1 (the number of model splits)", ev.Seeds)
	case ev.Budget < 0:
		return model.FieldErrorf("Budget", "{Budget} %d: must not be negative (0: min(100, 10%% of the items))", ev.Budget)
	case !(ev.TestFraction >= 0 && ev.TestFraction < 1):
		return model.FieldErrorf("TestFraction", "{TestFraction} %v: must be in (0, 1)", ev.TestFraction)
	}
	return CheckSettings(e.evalSettings())
}

// evalSettings are the settings of --eval's fits as jeirt irt fit would
// check them: the fit's defaults where Fitting leaves a field zero.
func (e Estimate) evalSettings() irtfit.Settings {
	s := e.Fitting
	s.Method = string(irt.MethodCBMM)
	if s.Sigma == 0 {
		s.Sigma = 1
	}
	if s.MaxIter == 0 {
		s.MaxIter = 1000
	}
	if s.Level == 0 {
		s.Level = 0.95
	}
	return s
}

// checkRank refuses --eval's rank where the data cannot carry it: the rule
// of jeirt irt fit (FitJob.Run), at least rank models and rank items.
func checkRank(rank int, r *model.Responses) error {
	if n := min(r.NumModels(), r.NumItems()); rank > n {
		return model.FieldErrorf("Rank", "{Rank} %d needs at least %d models and %d items; the data has %d models and %d items", rank, rank, rank, r.NumModels(), r.NumItems())
	}
	return nil
}
