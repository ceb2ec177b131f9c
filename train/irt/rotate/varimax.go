// Package rotate identifies multidimensional IRT fits up to rotation:
// varimax (Kaiser 1958) and the gauges of signed fits (SignedGauge,
// VarimaxGauge), which change neither X = θAᵀ + 1bᵀ nor a centred prior.
package rotate

import (
	"math"
	"sort"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/backend"
	"gonum.org/v1/gonum/mat"
)

// WhitenedLoadings returns A·L where LLᵀ is the covariance of θ's columns
// (Cholesky): the loadings on uncorrelated abilities, X unchanged, which is
// the form an orthogonal rotation such as varimax assumes.
func WhitenedLoadings(fit *model.IRT) []float64 {
	rk := fit.Rank
	C := thetaCovChol(fit.Theta, rk)
	if C == nil {
		return append([]float64(nil), fit.A...) // degenerate abilities: leave A as is
	}
	out := make([]float64, len(fit.A))
	matMul(fit.A, C, out, len(fit.A)/rk, rk, rk)
	return out
}

// thetaCovChol returns the lower Cholesky factor L (r x r, row-major) of the
// population covariance of the N x r abilities theta, or nil when it is
// singular.
func thetaCovChol(theta []float64, rk int) []float64 {
	N := len(theta) / rk
	C := make([]float64, rk*rk)
	mu := make([]float64, rk)
	for i := 0; i < N; i++ {
		for d := 0; d < rk; d++ {
			mu[d] += theta[i*rk+d] / float64(N)
		}
	}
	for i := 0; i < N; i++ {
		for d := 0; d < rk; d++ {
			for e := 0; e < rk; e++ {
				C[d*rk+e] += (theta[i*rk+d] - mu[d]) * (theta[i*rk+e] - mu[e]) / float64(N)
			}
		}
	}
	// C = L Lᵀ (lower triangle), the upper triangle cleared.
	if !backend.Cholesky(C, rk, 1e-12) {
		return nil
	}
	for j := 0; j < rk; j++ {
		for k := j + 1; k < rk; k++ {
			C[j*rk+k] = 0
		}
	}
	return C
}

// Varimax rotates the J x r loadings A (row-major) to Kaiser's varimax
// criterion (raw, without row normalisation; Kaiser 1958), the canonical
// form reported for r > 1, by the usual SVD iteration. Columns are then
// signed to have a positive sum and ordered by decreasing sum of squares.
func Varimax(A []float64, J, r int) []float64 {
	out := make([]float64, J*r)
	matMul(A, VarimaxRotation(A, J, r), out, J, r, r)
	return out
}

// VarimaxRotation returns the orthogonal r x r matrix T (row-major) with
// Varimax(A) = A·T: the varimax rotation followed by the column signs and
// order.
func VarimaxRotation(A []float64, J, r int) []float64 {
	L := make([]float64, J*r)
	R := identity(r)
	rot := make([]float64, J*r)
	for it := 0; it < 500; it++ {
		// rot = A R; B = Aᵀ(rot³ − rot·diag(Σ rot²)/J); R = U Vᵀ of svd(B).
		matMul(A, R, rot, J, r, r)
		colSS := make([]float64, r)
		for j := 0; j < J; j++ {
			for d := 0; d < r; d++ {
				colSS[d] += rot[j*r+d] * rot[j*r+d]
			}
		}
		B := make([]float64, r*r)
		for j := 0; j < J; j++ {
			for d := 0; d < r; d++ {
				x := rot[j*r+d]
				g := x*x*x - x*colSS[d]/float64(J)
				for e := 0; e < r; e++ {
					B[e*r+d] += A[j*r+e] * g
				}
			}
		}
		u, _, v := svdSmall(B, r)
		next := make([]float64, r*r)
		matMulT(u, v, next, r)
		change := 0.0
		for k := range next {
			change = math.Max(change, math.Abs(next[k]-R[k]))
		}
		R = next
		if change < 1e-13 {
			break
		}
	}
	matMul(A, R, L, J, r, r)
	// Sign and order the columns.
	type col struct {
		d    int
		sign float64
		ss   float64
	}
	cols := make([]col, r)
	for d := 0; d < r; d++ {
		sum, ss := 0.0, 0.0
		for j := 0; j < J; j++ {
			sum += L[j*r+d]
			ss += L[j*r+d] * L[j*r+d]
		}
		cols[d] = col{d, 1, ss}
		if sum < 0 {
			cols[d].sign = -1
		}
	}
	sort.SliceStable(cols, func(x, y int) bool { return cols[x].ss > cols[y].ss })
	T := make([]float64, r*r)
	for e := 0; e < r; e++ {
		for k, c := range cols {
			T[e*r+k] = R[e*r+c.d] * c.sign
		}
	}
	return T
}

func identity(r int) []float64 {
	m := make([]float64, r*r)
	for d := 0; d < r; d++ {
		m[d*r+d] = 1
	}
	return m
}

// matMul sets c (n x m) = a (n x k) b (k x m), all row-major.
func matMul(a, b, c []float64, n, k, m int) {
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			s := 0.0
			for l := 0; l < k; l++ {
				s += a[i*k+l] * b[l*m+j]
			}
			c[i*m+j] = s
		}
	}
}

// matMulT sets c = u vᵀ for r x r matrices.
func matMulT(u, v, c []float64, r int) {
	for i := 0; i < r; i++ {
		for j := 0; j < r; j++ {
			s := 0.0
			for l := 0; l < r; l++ {
				s += u[i*r+l] * v[j*r+l]
			}
			c[i*r+j] = s
		}
	}
}

// svdSmall returns U, the singular values and V of the r x r matrix b (row-major).
func svdSmall(b []float64, r int) (u, s, v []float64) {
	var svd mat.SVD
	if !svd.Factorize(mat.NewDense(r, r, append([]float64(nil), b...)), mat.SVDFull) {
		return identity(r), make([]float64, r), identity(r)
	}
	var um, vm mat.Dense
	svd.UTo(&um)
	svd.VTo(&vm)
	return append([]float64(nil), um.RawMatrix().Data...), svd.Values(nil), append([]float64(nil), vm.RawMatrix().Data...)
}
