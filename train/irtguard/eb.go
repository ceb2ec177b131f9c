package irtguard

import (
	"context"
	"fmt"
	"math"

	"github.com/jeirt/jeirt/model"
)

// EBRounds caps EmpiricalBayes's rounds, and EBTol is the relative change
// of every estimated scale at which it stops.
const (
	EBRounds = 12
	EBTol    = 0.01
)

// EBResult is what EmpiricalBayes found: the prior with its scales
// estimated, the rounds it took and whether they settled within EBTol.
type EBResult struct {
	Prior   model.Prior
	Rounds  int
	Settled bool
}

// EmpiricalBayes estimates from r the scales that the guard's prior
// leaves to the data (model.Prior.AScaleAuto, DScaleAuto): the sd of the
// slopes' and of the intercepts' priors. It is the EM algorithm for a
// normal prior's variance with the posterior approximated at its mode
// (Laplace; as py-irt's hierarchical model estimates its scales, and
// mirt's empirical priors): from the default scales, it fits the rank-1
// 2PL under the current scales (cBMM from the last fit), then sets each
// scale² to the mean over the items of (estimate − prior mean)² plus the
// estimate's posterior variance (from the curvature of the item's own
// parameters, the abilities held), and repeats until no scale moves by
// more than EBTol (relative), at most EBRounds times. Where the data say
// little about the slopes (few models), the posterior variances keep the
// scale from collapsing and the estimates shrink hard; where they say much
// (many models), the scale grows and the prior lets the data speak. A
// prior without scales to estimate is returned as it is.
func (g Guard) EmpiricalBayes(ctx context.Context, r *model.Responses) (EBResult, error) {
	g = g.withDefaults()
	p := g.CBMM.Prior
	if !p.EstimatesScales() {
		return EBResult{Prior: p, Settled: true}, nil
	}
	c := g.CBMM
	c.Model, c.Rank, c.Signed, c.Guess, c.ItemGuess = model.TwoPL, 1, false, 0, nil
	c.Trace, c.Watch, c.Log = nil, nil, nil
	c.Tol = 1e-5
	c.Accelerate = true
	cur := p.Resolved(p.A, p.D)
	var fit *model.IRT
	res := EBResult{}
	for res.Rounds = 1; res.Rounds <= EBRounds; res.Rounds++ {
		c.Prior = cur
		var from []*model.IRT
		if fit != nil {
			from = []*model.IRT{fit}
		}
		fits, err := c.FitBatchFrom(ctx, []*model.Responses{r}, from)
		if err != nil {
			return EBResult{}, fmt.Errorf("empirical Bayes: %w", err)
		}
		fit = fits[0]
		sa, sd := itemScales(r, fit, cur)
		next := cur
		if p.AScaleAuto && sa > 0 {
			next.A = sa
		}
		if p.DScaleAuto && sd > 0 {
			next.D = sd
		}
		moved := math.Max(math.Abs(next.A/cur.A-1), math.Abs(next.D/cur.D-1))
		cur = next
		if moved < EBTol {
			res.Settled = true
			break
		}
	}
	res.Rounds = min(res.Rounds, EBRounds)
	res.Prior = cur
	return res, nil
}

// itemScales is one EM update of the slopes' and the intercepts' prior
// scales at the rank-1 fit f made under p: the root of the mean over the
// items of (a_j/σ − mean_a)² + Var(a_j/σ), and the same for d, with the
// variances from the item's 2 x 2 posterior curvature (the abilities
// held). Items without answers are left out.
func itemScales(r *model.Responses, f *model.IRT, p model.Prior) (sa, sd float64) {
	sig := f.Sigma
	if sig == 0 {
		sig = 1
	}
	J := len(f.Items)
	haa, hab, hbb := make([]float64, J), make([]float64, J), make([]float64, J)
	for cell := range r.Label {
		i, j := int(r.Model[cell]), int(r.Item[cell])
		q := model.Sigmoid(f.Logit(i, j) / sig)
		w := float64(r.TrialsAt(cell)) * q * (1 - q) / (sig * sig)
		th := f.Theta[i]
		haa[j] += w * th * th
		hab[j] += w * th
		hbb[j] += w
	}
	var ssA, ssD float64
	n := 0
	for j := 0; j < J; j++ {
		if hbb[j] == 0 {
			continue
		}
		// The prior's precision on (a, b) in the fit's units, then the
		// inverse of the 2 x 2 block, in logit units (divided by σ²).
		ha, hb := haa[j], hbb[j]
		if p.A > 0 {
			ha += 1 / (sig * sig * p.A * p.A)
		}
		if p.D > 0 {
			hb += 1 / (sig * sig * p.D * p.D)
		}
		det := ha*hb - hab[j]*hab[j]
		if !(det > 0) {
			continue
		}
		va, vd := hb/det/(sig*sig), ha/det/(sig*sig)
		da, dd := f.A[j]/sig-p.AMean, f.B[j]/sig-p.DMean
		ssA += da*da + va
		ssD += dd*dd + vd
		n++
	}
	if n == 0 {
		return 0, 0
	}
	return math.Sqrt(ssA / float64(n)), math.Sqrt(ssD / float64(n))
}

// resolvePriors runs EmpiricalBayes on each of rs when the guard's prior
// estimates scales, returning each matrix's prior (the guard's own where it
// does not).
func (g Guard) resolvePriors(ctx context.Context, rs []*model.Responses) ([]EBResult, error) {
	out := make([]EBResult, len(rs))
	for k, r := range rs {
		var err error
		if out[k], err = g.EmpiricalBayes(ctx, r); err != nil {
			return nil, err
		}
	}
	return out, nil
}
