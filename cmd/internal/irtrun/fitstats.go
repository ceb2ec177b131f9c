package irtrun

import (
	"fmt"
	"math"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/irtfit"
	"github.com/jeirt/jeirt/train/irt"
	"github.com/jeirt/jeirt/train/irtstat"
	"github.com/jeirt/jeirt/train/irtstat/fitstat"
)

// Texts of fit.json's fit_statistics.
const (
	likelihoodJoint = "joint: the sum over the observed cells of k log P + (n - k) log(1 - P) at the estimate (theta and the items), a cell of n trials counting its n answers (no binomial coefficient)"
	likelihoodMML   = "marginal: the sum over models of log of the integral of the product of P(y | theta) over theta ~ N(0, 1), on 61 points of [-6, 6] (mirt's marginal log-likelihood), at the item estimates"
	likelihoodQuasi = "quasi: graded scores, the fractional logit model's quasi-log-likelihood, the sum over cells of k log P + (n - k) log(1 - P); not a likelihood, so aic and bic are null"
	countingJoint   = "k = the items' free parameters (a slope per dimension and an intercept; the 1PL's one common slope; the 3PL's fitted c) + r abilities per model with an answer + the prior's hyperparameters estimated from the data, less the gauge's r^2 + r directions without a prior on theta (r(r-1)/2 rotations for signed fits under one); n = the observed answers (trials). Under a prior the estimate is maximum a posteriori: aic and bic are then penalised-likelihood criteria, the log-likelihood at the MAP estimate with the nominal k (shrinkage makes the effective number smaller), not Akaike's at the maximum-likelihood estimate; compare them between fits of the same data under the same prior"
	countingMML     = "k = the items' parameters (2 per item with an answer; mirt's count of estimated parameters) + the prior's hyperparameters estimated from the data; n = the models (mirt's N, its respondents): aic = -2 log_likelihood + 2k, bic = -2 log_likelihood + k ln n, as mirt computes them; under an item prior the items are MAP estimates, and the criteria are penalised-likelihood ones"
)

// addFitStatistics completes the folder f of fit (its settings set, its
// prior as fitted) with the statistics of package fitstat: fit.json's
// fit_statistics, the person fit of abilities.csv (and its flag
// person_misfit) and information.csv (rank 1); an gets the statistics and
// the misfitting models for the printed summary.
func addFitStatistics(f *irtfit.Folder, r *model.Responses, fit *model.IRT, an *irtstat.Analysis, prior model.Prior) {
	set := f.Doc.Settings
	asked, _ := set.PriorSpec()
	hyper := 0
	for _, on := range []bool{asked.AAuto && asked.A > 0, asked.DAuto && asked.D > 0, asked.AScaleAuto, asked.DScaleAuto} {
		if on {
			hyper++
		}
	}
	marginal := !irt.Method(set.Method).Joint()
	lk := fitstat.Likelihood{Prior: prior, Hyper: hyper, Marginal: marginal, FitGuess: fit.C != nil && set.Guess == ""}
	if len(set.GuessPrior) == 2 {
		lk.GuessPrior = [2]float64{set.GuessPrior[0], set.GuessPrior[1]}
	}
	st := lk.Statistics(r, fit)
	fs := &irtfit.FitStatistics{LogLikelihood: model.Float(st.LogLikelihood), LogPrior: st.LogPrior, Parameters: st.Parameters, N: st.N,
		AIC: model.Float(st.AIC), BIC: model.Float(st.BIC), Likelihood: likelihoodJoint, Counting: countingJoint}
	switch {
	case st.Quasi:
		fs.Likelihood = likelihoodQuasi
	case marginal:
		fs.Likelihood = likelihoodMML
	}
	if marginal {
		fs.Counting = countingMML
	}
	fs.LogPriorText = logPriorText(prior, fit, lk.FitGuess, marginal)
	f.Doc.FitStatistics, an.FitStatistics = fs, fs

	// Person fit: θ is the MAP under θ's prior, the ML without one; a
	// marginal fit's EAP is taken as the MAP under its N(0, 1).
	sd := prior.Theta
	if marginal {
		sd = 1
	}
	pf := fitstat.PersonFits(r, fit, fitstat.PersonFitOptions{ThetaSD: sd})
	for i := range f.Models {
		p := pf[i]
		f.Models[i].PersonFit = &irtfit.PersonFit{LZStar: p.LZStar, Infit: p.Infit, Outfit: p.Outfit}
		// Ranked models with enough items only: lz* is asymptotic in the items answered.
		if p.LZStar < -fitstat.PersonMisfitZ && an.Rank[i] > 0 && f.Models[i].NObs >= fitstat.PersonMisfitMinItems {
			m := &f.Models[i]
			if m.Flag != "" {
				m.Flag += ";"
			}
			m.Flag += fitstat.FlagPersonMisfit
			an.ModelFlags[i] = m.Flag
			an.PersonMisfits = append(an.PersonMisfits, m.Name)
		}
	}

	if fit.Rank == 1 {
		var perAnswer []float64
		if r.Trials != nil {
			perAnswer = make([]float64, len(f.Items))
			for j, it := range f.Items {
				perAnswer[j] = 1
				if it.NObs > 0 && !math.IsNaN(it.Trials) {
					perAnswer[j] = it.Trials / float64(it.NObs)
				}
			}
		}
		pts, err := fitstat.TestInformation(fit, perAnswer)
		if err == nil {
			f.Information = make([]irtfit.InformationPoint, len(pts))
			for g, p := range pts {
				f.Information[g] = irtfit.InformationPoint{Theta: p.Theta, Information: p.Information, SE: p.SE}
			}
		}
	}
}

// logPriorText says what fit_statistics.log_prior holds.
func logPriorText(prior model.Prior, fit *model.IRT, fitGuess, marginal bool) string {
	var s string
	switch {
	case !prior.On():
		s = "no prior on theta, a or d"
	case marginal:
		s = "the item prior " + prior.String() + " (theta's N(0, 1) is integrated in the marginal likelihood)"
	default:
		s = "the prior " + prior.String()
	}
	if fit.C != nil && fitGuess {
		s += ", and the Beta prior on the fitted lower asymptotes c"
	}
	return fmt.Sprintf("%s: log densities at the estimate without their normalising constants, so that loss = -(log_likelihood + log_prior)", s)
}

// statsSummary is the printed line of the fit statistics: "log-likelihood
// −2.1e4, log-prior −312.5 (loss 2.1e4 is minus their sum); AIC ..., BIC
// ... (k 1234, n 5678)".
func statsSummary(fs *irtfit.FitStatistics, misfits []string) string {
	if fs == nil {
		return ""
	}
	what := "log-likelihood"
	if math.IsNaN(float64(fs.BIC)) && !math.IsNaN(float64(fs.LogLikelihood)) {
		what = "quasi-log-likelihood (graded scores: no AIC or BIC)"
	}
	s := fmt.Sprintf("%s %.6g, log-prior %.6g (the fit's loss %.6g is minus their sum); AIC %.6g, BIC %.6g (k %d, n %d)",
		what, fs.LogLikelihood, fs.LogPrior, -(float64(fs.LogLikelihood) + fs.LogPrior), fs.AIC, fs.BIC, fs.Parameters, fs.N)
	if n := len(misfits); n > 0 {
		s += fmt.Sprintf("; %d model(s) with person misfit (lz* < −%.3f): %s", n, fitstat.PersonMisfitZ, joinFirst(misfits, 5))
	}
	return s
}

// joinFirst joins the first n names, with ", ..." when there are more.
func joinFirst(names []string, n int) string {
	out := ""
	for k, s := range names[:min(n, len(names))] {
		if k > 0 {
			out += ", "
		}
		out += s
	}
	if len(names) > n {
		out += ", ..."
	}
	return out
}
