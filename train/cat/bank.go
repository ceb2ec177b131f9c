// Package cat is computerized adaptive testing on a fitted IRT item bank:
// it places a new model by asking it one item at a time, each chosen for
// what its answer will tell about the model's ability θ given the answers so
// far (Wainer et al., Computerized Adaptive Testing: A Primer, 2nd ed.,
// 2000; van der Linden and Glas, Elements of Adaptive Testing, 2010).
//
// The bank is the items of a fit, P(correct) = model.Sigmoid((θ·a_j + d_j)/σ). θ
// is estimated after every answer as the posterior mode (MAP) under the
// fit's normal prior, or at rank 1 optionally as the posterior mean (EAP),
// with the posterior standard deviation as its standard error. The rules
// (Rule) are maximum Fisher information, Chang and Ying's KL information,
// D-optimality (Segall 1996) and random; Kingsbury and Zara's constrained
// CAT balances item groups; a test stops at a budget of items or when the
// standard error reaches a target.
package cat

import (
	"fmt"
	"math"

	"github.com/jeirt/jeirt/model"
)

// Bank is an item bank: J items of slopes A (J x Rank, row-major) and
// intercepts D on the logistic scale Sigma, P(correct | θ) =
// model.Sigmoid((θ·a_j + d_j)/σ), optionally in groups.
type Bank struct {
	Rank  int
	Sigma float64 // σ; 0 means 1
	A     []float64
	D     []float64
	// Group (nil: no groups) gives each item's group, an index into Groups.
	Group  []int
	Groups []string
}

// NumItems is J.
func (b *Bank) NumItems() int { return len(b.D) }

func (b *Bank) sigma() float64 {
	if b.Sigma > 0 {
		return b.Sigma
	}
	return 1
}

// MaxBankLogit bounds a bank's slopes and intercepts on the logit scale,
// |a_k|/σ and |d|/σ. Beyond it an item is a step (a slope of 1,000 takes
// P(correct) from 10⁻¹⁶ to 1 − 10⁻¹⁶ within 0.08 of θ) or certain at
// every plausible ability (an intercept of 1,000), its information 0 or
// overflowing. Fits stay far below it (SWE-bench Verified's 2PL: |a| ≤
// 6.8, |d| ≤ 8.2); a hand-edited or corrupted items.csv need not.
const MaxBankLogit = 1000

// ItemError is an item of a bank that cannot be used: its index, the
// parameter ("slope", "intercept") and its value.
type ItemError struct {
	Item  int
	Param string
	Value float64
}

func (e *ItemError) Error() string { return fmt.Sprintf("cat: item %d has %s", e.Item, e.Reason()) }

// Reason is the error without the item: "slope 1e+200, beyond ...".
func (e *ItemError) Reason() string {
	if !model.Finite(e.Value) {
		return fmt.Sprintf("%s %v, not a finite number", e.Param, e.Value)
	}
	return fmt.Sprintf("%s %v, beyond ±%v on the logit scale (|value|/sigma): the item would be a step or certain at every plausible ability", e.Param, e.Value, MaxBankLogit)
}

// Check reports a bank whose slices do not fit together or hold a
// non-finite number or one beyond MaxBankLogit (an *ItemError for an
// item's parameter).
func (b *Bank) Check() error {
	J, r := len(b.D), b.Rank
	switch {
	case r < 1:
		return fmt.Errorf("cat: bank of rank %d", r)
	case J == 0:
		return fmt.Errorf("cat: empty item bank")
	case len(b.A) != J*r:
		return fmt.Errorf("cat: %d slopes for %d items of rank %d", len(b.A), J, r)
	case b.Group != nil && len(b.Group) != J:
		return fmt.Errorf("cat: %d item groups for %d items", len(b.Group), J)
	case !(b.Sigma >= 0) || math.IsInf(b.Sigma, 0):
		return fmt.Errorf("cat: sigma %v", b.Sigma)
	}
	usable := func(v float64) bool { return model.Finite(v) && math.Abs(v)/b.sigma() <= MaxBankLogit }
	for j := 0; j < J; j++ {
		if !usable(b.D[j]) {
			return &ItemError{Item: j, Param: "intercept", Value: b.D[j]}
		}
		for k := 0; k < r; k++ {
			if v := b.A[j*r+k]; !usable(v) {
				return &ItemError{Item: j, Param: "slope", Value: v}
			}
		}
		if b.Group != nil && (b.Group[j] < 0 || b.Group[j] >= len(b.Groups)) {
			return fmt.Errorf("cat: item %d in group %d of %d", j, b.Group[j], len(b.Groups))
		}
	}
	return nil
}

// logit is x_j(θ)/σ = (θ·a_j + d_j)/σ.
func (b *Bank) logit(j int, theta []float64) float64 {
	r := b.Rank
	x := b.D[j]
	for k := 0; k < r; k++ {
		x += theta[k] * b.A[j*r+k]
	}
	return x / b.sigma()
}

// Prob is P(correct) on item j at theta.
func (b *Bank) Prob(j int, theta []float64) float64 { return model.Sigmoid(b.logit(j, theta)) }

// Prior is the normal prior N(Mean, Cov) on θ (Cov Rank x Rank, row-major).
type Prior struct {
	Mean []float64
	Cov  []float64
}

// StandardPrior is N(0, I_r).
func StandardPrior(r int) Prior {
	p := Prior{Mean: make([]float64, r), Cov: make([]float64, r*r)}
	for k := 0; k < r; k++ {
		p.Cov[k*r+k] = 1
	}
	return p
}

// PopulationPrior is the normal with the mean and population covariance of
// the abilities theta (N x r, row-major) of a fit's models.
func PopulationPrior(theta []float64, r int) (Prior, error) {
	N := len(theta) / r
	if N < 2 {
		return Prior{}, fmt.Errorf("cat: a population prior needs at least 2 models, got %d", N)
	}
	p := Prior{Mean: make([]float64, r), Cov: make([]float64, r*r)}
	for i := 0; i < N; i++ {
		for k := 0; k < r; k++ {
			p.Mean[k] += theta[i*r+k] / float64(N)
		}
	}
	for i := 0; i < N; i++ {
		for k := 0; k < r; k++ {
			for l := 0; l < r; l++ {
				p.Cov[k*r+l] += (theta[i*r+k] - p.Mean[k]) * (theta[i*r+l] - p.Mean[l]) / float64(N)
			}
		}
	}
	return p, p.check(r)
}

// check reports a prior of the wrong size or whose covariance is not
// positive definite.
func (p Prior) check(r int) error {
	if len(p.Mean) != r || len(p.Cov) != r*r {
		return fmt.Errorf("cat: prior of %d means and %d covariances for rank %d", len(p.Mean), len(p.Cov), r)
	}
	if _, ok := invertSPD(p.Cov, r); !ok {
		return fmt.Errorf("cat: the prior covariance is not positive definite")
	}
	return nil
}
