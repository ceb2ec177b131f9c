package rotate

import "github.com/jeirt/jeirt/model"

// SignedGauge fixes the rotation a signed fit leaves free, without changing
// X = θAᵀ + 1bᵀ. The loss of a signed fit is the same for θR and AR⁻ᵀ with
// any invertible R; the gauge picks one R:
//
//  1. θ is centred and whitened, θ ← θL⁻ᵀ and A ← AL with LLᵀ the
//     covariance of θ's columns (Cholesky), so the abilities are
//     uncorrelated with sd 1 and only an orthogonal R is left;
//  2. that R is the varimax rotation of A (Kaiser 1958), with each column
//     signed so its loadings sum positive (higher θ_d means more correct on
//     the average item) and columns ordered by decreasing sum of squares.
//
// It is what fit.json's group_loadings average at rank > 1 in any case, so
// for a signed fit they are the means of items.csv's a columns. Degenerate
// abilities (a singular covariance) are left as StandardGauge put them.
func SignedGauge(m *model.IRT) {
	r, N, J := m.Rank, len(m.Models), len(m.Items)
	if r < 2 || N == 0 || J == 0 {
		return
	}
	L := thetaCovChol(m.Theta, r)
	if L == nil {
		return
	}
	// Centre θ (b absorbs the mean), then θ_i ← L⁻¹θ_i by forward substitution.
	mu := make([]float64, r)
	for i := 0; i < N; i++ {
		for d := 0; d < r; d++ {
			mu[d] += m.Theta[i*r+d] / float64(N)
		}
	}
	for j := 0; j < J; j++ {
		for d := 0; d < r; d++ {
			m.B[j] += m.A[j*r+d] * mu[d]
		}
	}
	for i := 0; i < N; i++ {
		th := m.Theta[i*r : (i+1)*r]
		for d := 0; d < r; d++ {
			s := th[d] - mu[d]
			for e := 0; e < d; e++ {
				s -= L[d*r+e] * th[e]
			}
			th[d] = s / L[d*r+d]
		}
	}
	aw := make([]float64, J*r)
	matMul(m.A, L, aw, J, r, r)
	T := VarimaxRotation(aw, J, r)
	matMul(aw, T, m.A, J, r, r)
	th := make([]float64, N*r)
	matMul(m.Theta, T, th, N, r, r)
	copy(m.Theta, th)
}

// VarimaxGauge rotates a signed fit made under a prior to its varimax
// loadings without rescaling: A ← AT and θ ← θT with T orthogonal, so X,
// the centred priors on θ and A, and so the posterior are unchanged.
func VarimaxGauge(m *model.IRT) {
	r, N, J := m.Rank, len(m.Models), len(m.Items)
	if r < 2 || N == 0 || J == 0 {
		return
	}
	T := VarimaxRotation(m.A, J, r)
	a := make([]float64, J*r)
	matMul(m.A, T, a, J, r, r)
	copy(m.A, a)
	th := make([]float64, N*r)
	matMul(m.Theta, T, th, N, r, r)
	copy(m.Theta, th)
}
