package irtrun

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/irtfit"
	"github.com/jeirt/jeirt/model/limits"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/train/irt"
	"github.com/jeirt/jeirt/train/irtstat"
)

// SpecFor is the fit specification that fit.json's settings describe, for
// the responses r: the one conversion from irtfit.Settings to irt.Spec.
// The 3PL's lower asymptotes are as settings.guess says: fitted (""), one
// number for every item, or a column of the items file (settings.items)
// read by read.ItemGuess (neither read nor required when r is nil). It checks only that the
// prior parses: a fit folder read from disk keeps the zeros older folders
// wrote (CheckSettings checks settings before a new fit).
func SpecFor(s irtfit.Settings, r *model.Responses) (irt.Spec, error) {
	prior, err := s.PriorSpec()
	if err != nil {
		return irt.Spec{}, model.FieldErrorf("Prior", "{Prior}: %v", err)
	}
	c := irt.CBMM{Sigma: s.Sigma, Rank: s.Rank, Tol: s.Tol, MaxIter: s.MaxIter, Threads: s.Threads,
		Accelerate: s.Accelerate, Signed: s.Signed, Device: s.Device, Model: s.Family(), Prior: prior}
	if len(s.GuessPrior) == 2 {
		c.GuessPrior = [2]float64{s.GuessPrior[0], s.GuessPrior[1]}
	}
	sp := irt.Spec{Method: irt.Method(s.Method), CBMM: c, GradTol: s.GradTol}
	if s.Guess == "" {
		return sp, nil
	}
	if v, err := strconv.ParseFloat(s.Guess, 64); err == nil {
		switch {
		case v > 0:
			sp.CBMM.Guess = v
		case v == 0 && r != nil: // c = 0 given: the 3PL's floor fixed at 0
			sp.CBMM.ItemGuess = [][]float64{make([]float64, r.NumItems())}
		}
		return sp, nil
	}
	if r == nil {
		return sp, nil
	}
	if s.Items == "" {
		return sp, model.FieldErrorf("Guess", "{Guess} %s names a column of the items file: give it with {Items}", limits.Clip(s.Guess))
	}
	g, err := read.ItemGuess(s.Items, s.Guess, r.Items)
	if err != nil {
		return sp, err
	}
	sp.CBMM.ItemGuess = [][]float64{g}
	return sp, nil
}

// FitterFor is the cBMM settings of SpecFor(s, r), for the refits that
// always run cBMM (a selection's, cross-validation's, irt estimate's).
func FitterFor(s irtfit.Settings, r *model.Responses) (irt.CBMM, error) {
	sp, err := SpecFor(s, r)
	return sp.CBMM, err
}

// CheckSettings reports settings that cannot be fitted, as
// model.FieldErrors on the fields of irtfit.Settings: the settings' own
// check (irtfit.Settings.Check), then their specification's
// (irt.Spec.Validate), then what the bootstrap needs (it refits by cBMM).
func CheckSettings(s irtfit.Settings) error {
	if err := s.Check(); err != nil {
		return err
	}
	sp, err := SpecFor(s, nil)
	if err != nil {
		return err
	}
	if err := sp.Validate(nil); err != nil {
		return err
	}
	if s.Bootstrap > 0 && sp.Method != irt.MethodCBMM {
		return model.FieldErrorf("Bootstrap", "{Bootstrap} needs {Method} %s", irt.MethodCBMM)
	}
	return nil
}

// NewFolder is the fit folder of one fit: doc (fit.json) completed with the
// fit's and the analysis's figures, the abilities and items tables, and the
// bootstrap's standard errors and intervals when boot is not nil; under a
// prior, those of θ, a, d and b are the posterior curvature's instead.
func NewFolder(doc irtfit.Doc, r *model.Responses, fit *model.IRT, an *irtstat.Analysis, boot *irtstat.BootstrapResult) *irtfit.Folder {
	doc.Settings.RankMove = an.RankMoveLimit
	doc.Models, doc.Items, doc.Observed = r.NumModels(), r.NumItems(), r.Len()
	doc.LossHistory, doc.Loss = fit.LossHistory, fit.LossHistory[len(fit.LossHistory)-1]
	doc.Iterations, doc.Converged, doc.ConvergenceNote = fit.Iterations, fit.Converged, fit.Note
	doc.KendallTau, doc.KendallNote = model.Float(an.KendallTau), an.KendallNote
	doc.RankMoves, doc.FlagCounts, doc.GroupLoadings = an.RankMoves, an.FlagCounts, an.GroupLoadings
	doc.Settings.MinAnswers = an.MinAnswers
	doc.Gauge, doc.Parameterisation = irtfit.GaugeJML, irtfit.Parameterisation
	if fit.C != nil {
		doc.Parameterisation = irtfit.Parameterisation3PL
	}
	if !irt.Method(doc.Settings.Method).Joint() {
		doc.Gauge = irtfit.GaugeMML
	}
	if doc.Settings.Signed {
		doc.Gauge = irtfit.GaugeSigned
	}
	// The prior the fit ran under: settings.prior, with any scale it left
	// to the data as estimated (prior_fitted).
	prior, _ := doc.Settings.PriorSpec()
	if doc.PriorFitted != "" {
		if p, err := model.ParsePrior(doc.PriorFitted); err == nil {
			prior = p
		}
	}
	joint := irt.Method(doc.Settings.Method).Joint()
	switch {
	case prior.On() && joint && doc.Settings.Signed:
		doc.Gauge = irtfit.GaugeSignedMAP
	case prior.On() && joint:
		doc.Gauge = irtfit.GaugeMAP
	}
	doc.Diagnostics = &irtfit.Diagnostics{CronbachAlpha: model.Float(an.Test.Alpha), AlphaMissing: irtstat.AlphaMissing,
		MarginalReliability: model.Float(an.Test.MarginalReliability), EmpiricalReliability: model.Float(an.Test.EmpiricalReliability),
		ExtremeModels: an.Test.ExtremeModels, Flags: irtstat.FlagRules(doc.Settings.MinA), Columns: irtstat.DiagnosticColumnsText}
	rk := fit.Rank
	f := &irtfit.Folder{Doc: doc}
	part := func(v []float64, k int) []float64 {
		if v == nil {
			return nil
		}
		return v[k*rk : (k+1)*rk]
	}
	at := func(v []float64, k int) float64 {
		if v == nil {
			return math.NaN()
		}
		return v[k]
	}
	var b irtstat.BootstrapResult
	if boot != nil {
		b = *boot
	}
	// A fit with a prior (maximum a posteriori) takes the standard errors
	// and intervals of θ, a, d and b from the posterior's curvature
	// (irtstat.Laplace, the full joint inverse where it is affordable);
	// with a bootstrap too, each se is the wider of the curvature's and the
	// bootstrap's. Either way the interval is est ± z·se (a's clipped at 0),
	// so it contains its estimate: the bootstrap's percentile intervals
	// under a prior can miss it, and cover less (scripts/coverage.sh,
	// docs). The bootstrap still gives the rank intervals and the 3PL's
	// se_c (the curvature holds c fixed). Joint ML keeps the bootstrap's.
	if boot != nil {
		f.Doc.Intervals = fmt.Sprintf("bootstrap: sd over %d replicates, percentile intervals", boot.B)
	}
	if prior.On() && joint {
		sp, _ := SpecFor(doc.Settings, nil) // its prior parsed where doc was made or read
		fitter := sp.CBMM
		fitter.Prior = prior
		lp, err := irtstat.Laplace{Fitter: fitter, Level: doc.Settings.Level}.Run(r, fit)
		if err == nil {
			f.Doc.Intervals = "posterior curvature (Laplace): " + lp.Method + "; interval est ± z·se"
			if boot != nil {
				f.Doc.Intervals += fmt.Sprintf("; each se the wider of it and the bootstrap's (%d replicates), which also gives the rank intervals", boot.B)
			}
			z := math.Sqrt2 * math.Erfinv(lp.Level)
			wider := func(se, lo, hi, bse []float64, est func(k int) float64, clip bool) ([]float64, []float64, []float64) {
				if bse == nil {
					return se, lo, hi
				}
				for k := range se {
					if bse[k] > se[k] || math.IsNaN(se[k]) && !math.IsNaN(bse[k]) {
						se[k], lo[k], hi[k] = bse[k], est(k)-z*bse[k], est(k)+z*bse[k]
						if clip && lo[k] < 0 {
							lo[k] = 0
						}
					}
				}
				return se, lo, hi
			}
			diff := func(j int) float64 { return model.Difficulty(part(fit.A, j), fit.B[j]) }
			b.ThetaSE, b.ThetaLo, b.ThetaHi = wider(lp.ThetaSE, lp.ThetaLo, lp.ThetaHi, b.ThetaSE, func(k int) float64 { return fit.Theta[k] }, false)
			b.ASE, b.ALo, b.AHi = wider(lp.ASE, lp.ALo, lp.AHi, b.ASE, func(k int) float64 { return fit.A[k] }, !fit.Signed)
			b.BSE, b.BLo, b.BHi = wider(lp.BSE, lp.BLo, lp.BHi, b.BSE, func(k int) float64 { return fit.B[k] }, false)
			b.DiffSE, b.DiffLo, b.DiffHi = wider(lp.DiffSE, lp.DiffLo, lp.DiffHi, b.DiffSE, diff, false)
			// As with the bootstrap (irtstat.Bootstrap.Ranked), a model with
			// too few answers to be ranked gets no θ se or interval.
			for i := range fit.Models {
				if an.Rank[i] <= 0 {
					for d := i * rk; d < (i+1)*rk; d++ {
						b.ThetaSE[d], b.ThetaLo[d], b.ThetaHi[d] = math.NaN(), math.NaN(), math.NaN()
					}
				}
			}
		}
	}
	for i, name := range fit.Models {
		m := irtfit.Model{Name: name, Theta: part(fit.Theta, i), SE: part(b.ThetaSE, i), Lo: part(b.ThetaLo, i),
			Hi: part(b.ThetaHi, i), Score: an.Score[i], Rank: an.Rank[i], Accuracy: an.Accuracy[i], AccuracyRank: an.AccuracyRank[i],
			NObs: an.ModelObserved[i], Flag: an.ModelFlags[i]}
		if boot != nil {
			m.RankLo, m.RankHi = boot.RankLo[i], boot.RankHi[i]
		}
		f.Models = append(f.Models, m)
	}
	for j, id := range fit.Items {
		a := part(fit.A, j)
		it := irtfit.Item{ID: id, A: a, D: fit.B[j], B: model.Difficulty(a, fit.B[j]), SEA: part(b.ASE, j),
			SED: at(b.BSE, j), SEB: at(b.DiffSE, j), PCorrect: an.ItemAccuracy[j], NObs: an.ItemObserved[j], Flag: an.ItemFlags[j]}
		it.C, it.SEC, it.Trials = at(fit.C, j), at(b.CSE, j), math.NaN()
		if r.Trials != nil {
			it.Trials = an.ItemTrials[j]
		}
		d := an.ItemDiagnostics[j]
		it.ItemTotal, it.ItemRest, it.Infit, it.InfitZ, it.Outfit, it.OutfitZ = d.PointBiserial, d.RestScore, d.Infit, d.InfitZ, d.Outfit, d.OutfitZ
		if rk == 1 {
			it.ALo, it.AHi, it.DLo, it.DHi = at(b.ALo, j), at(b.AHi, j), at(b.BLo, j), at(b.BHi, j)
			it.BLo, it.BHi = at(b.DiffLo, j), at(b.DiffHi, j)
		}
		if noDifficulty(it.Flag) && !prior.On() { // under a prior b is the posterior's, finite
			it.B, it.SEB, it.BLo, it.BHi = math.NaN(), math.NaN(), math.NaN(), math.NaN()
		}
		f.Items = append(f.Items, it)
	}
	addFitStatistics(f, r, fit, an, prior)
	return f
}

// noDifficulty says whether an item with these flags has no finite
// difficulty: when every model solved it, or none did, the likelihood keeps
// rising as b goes to ∓∞ (the fit drives a towards 0 and −d/a past 1e14), so
// b, se_b and b's interval are undefined (items.csv leaves them empty); d and
// p_correct still say where the item sits.
func noDifficulty(flag string) bool {
	for _, f := range strings.Split(flag, ";") {
		if f == irtstat.FlagNeverSolved || f == irtstat.FlagAlwaysSolved {
			return true
		}
	}
	return false
}
