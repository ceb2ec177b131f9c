package fitstat

import (
	"fmt"
	"math"

	"github.com/jeirt/jeirt/model"
)

// InformationGrid is the θ grid of TestInformation: InformationPoints
// equally spaced points of [−InformationLimit, InformationLimit] (step 0.1).
const (
	InformationLimit  = 6.0
	InformationPoints = 121
)

// InformationPoint is the test information at one θ and the standard error
// of θ there.
type InformationPoint struct {
	Theta, Information float64
	// SE is 1/√I(θ), the asymptotic standard error of the maximum-likelihood
	// θ of a model at θ that answered every item once (mirt's SE curve);
	// NaN where the information is 0.
	SE float64
}

// ItemInformation is item j's Fisher information about θ at theta (rank 1):
// (a_j/σ)²·p(1 − p) for the 2PL (p = sigmoid((θa_j + d_j)/σ)), the 3PL's
// (a/σ)²(P − c)²(1 − P)/((1 − c)²P) (Lord 1980, eq. 5-5; model.Response3PL)
// with a lower asymptote, times the item's trials per answer (perAnswer;
// nil: 1).
func ItemInformation(fit *model.IRT, j int, theta float64, perAnswer []float64) float64 {
	sigma := fit.Sigma
	if sigma == 0 {
		sigma = 1
	}
	a := fit.A[j]
	c := 0.0
	if fit.C != nil {
		c = fit.C[j]
	}
	_, info := model.Response3PL(theta*a+fit.B[j], sigma, c)
	info *= a * a
	if perAnswer != nil {
		info *= perAnswer[j]
	}
	return info
}

// TestInformation is the test information function I(θ) = Σ_j I_j(θ) of
// a rank-1 fit over its items (ItemInformation), and the standard error of
// θ along θ, 1/√I(θ), on the grid of InformationGrid (Lord 1980, ch. 5;
// Baker and Kim 2004, ch. 7). At rank > 1 the information is a matrix,
// and it returns an error.
func TestInformation(fit *model.IRT, perAnswer []float64) ([]InformationPoint, error) {
	if fit.Rank != 1 {
		return nil, fmt.Errorf("the test information along θ needs rank 1 (the fit has rank %d: its information is an r x r matrix)", fit.Rank)
	}
	out := make([]InformationPoint, InformationPoints)
	for g := range out {
		th := -InformationLimit + 2*InformationLimit*float64(g)/float64(InformationPoints-1)
		th = math.Round(th*1e9) / 1e9 // the grid's decimals, without the float noise of the division
		info := 0.0
		for j := range fit.B {
			info += ItemInformation(fit, j, th, perAnswer)
		}
		se := math.NaN() // no information (every slope 0): no standard error
		if info > 0 {
			se = 1 / math.Sqrt(info)
		}
		out[g] = InformationPoint{Theta: th, Information: info, SE: se}
	}
	return out, nil
}
