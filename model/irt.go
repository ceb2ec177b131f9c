package model

import "math"

// IRT holds fitted (multidimensional) two-parameter logistic parameters:
// logit x_ij = θ_i·a_j + b_j, P(correct) = sigmoid(x_ij/σ), in the
// parametrisation of cBMM (Qu, Heng, Zeng and Liu, "An Interpretable and
// Scalable Framework for Evaluating Large Language Models", arXiv:2605.07046,
// 2026).
//
// Gauge: each column of θ has mean 0 and standard deviation 1 over models, A and b
// are transformed so that X is unchanged, and A ≥ 0, so higher θ means more correct.
type IRT struct {
	Models []string
	Items  []string
	Rank   int       // r, the number of ability dimensions
	Sigma  float64   // σ, the logistic scale
	Theta  []float64 // N x r, row-major: θ_i = Theta[i*r:(i+1)*r]
	A      []float64 // J x r, row-major: a_j = A[j*r:(j+1)*r]
	B      []float64 // J
	Signed bool      // loadings of either sign (see the gauge above)
	// Family is the response function: TwoPL (also ""), OnePL (every a_j
	// the same) or ThreePL (C holds each item's lower asymptote c_j, so that
	// P = c_j + (1 − c_j)·sigmoid(x_ij/σ)). C is nil without an asymptote.
	Family Family
	C      []float64 // J, or nil

	LossHistory []float64 // ℓ(X) after each iteration (the first entry is the start)
	Iterations  int
	Converged   bool
	// Note says why Converged is false, or which parameters the data leave
	// without a finite estimate (a constant row or column); "" when neither.
	Note string
}

// Logit returns x_ij = θ_i·a_j + b_j.
func (m *IRT) Logit(i, j int) float64 {
	r := m.Rank
	x := m.B[j]
	for k := 0; k < r; k++ {
		x += m.Theta[i*r+k] * m.A[j*r+k]
	}
	return x
}

// Prob returns P(model i answers item j correctly) = sigmoid(x_ij/σ), or
// c_j + (1 − c_j)·sigmoid(x_ij/σ) with a lower asymptote (the 3PL).
func (m *IRT) Prob(i, j int) float64 {
	s := m.Sigma
	if s == 0 {
		s = 1
	}
	return m.Guessing(j, Sigmoid(m.Logit(i, j)/s))
}

// Guessing lifts item j's 2PL probability p to the 3PL's c_j + (1 − c_j)·p;
// without asymptotes (C nil) it returns p.
func (m *IRT) Guessing(j int, p float64) float64 {
	if m.C == nil {
		return p
	}
	return m.C[j] + (1-m.C[j])*p
}

// Response3PL is P = c + (1 − c)·sigmoid(x/σ) and the item information
// I(x) = (a²/σ²)·(P − c)²(1 − P)/((1 − c)²P) per unit of a² (multiply by
// ‖a‖²; Lord 1980, eq. 5-5), which is a²p(1 − p)/σ² with c = 0.
func Response3PL(x, sigma, c float64) (p, info float64) {
	s := Sigmoid(x / sigma)
	p = c + (1-c)*s
	if c == 0 {
		return p, s * (1 - s) / (sigma * sigma)
	}
	if p <= 0 {
		return p, 0
	}
	return p, (1 - s) * s * s * (1 - c) / (p * sigma * sigma)
}

// Sigmoid is the logistic function, stable for large |x|.
func Sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// Difficulty is an item's difficulty in mirt's convention (its IRTpars):
// b = −d/a at rank 1, and at rank > 1 the multidimensional difficulty
// MDIFF = −d/‖a‖ (Reckase 1985), the signed distance from the origin to where
// P = ½ along a's direction. d is the intercept (B of IRT). b rises with
// difficulty; it is NaN when a = 0.
func Difficulty(a []float64, d float64) float64 {
	s := 0.0
	for _, v := range a {
		s += v * v
	}
	if len(a) == 1 {
		if a[0] == 0 {
			return math.NaN()
		}
		return -d / a[0]
	}
	if s == 0 {
		return math.NaN()
	}
	return -d / math.Sqrt(s)
}
