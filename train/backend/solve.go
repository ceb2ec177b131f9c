package backend

import "math"

// SmallNNLS holds the buffers of one small non-negative least-squares solve,
// reused across items: the CPU fitter fills G, H and X and calls SolveInPlace;
// other backends (package cuda) call Solve, so that every backend does the CPU
// fitter's arithmetic exactly.
type SmallNNLS struct {
	G, H, X    []float64 // normal equations G v = H; X: warm value in, solution out
	xOld, z, s []float64
	rhs        []float64
	inP        []bool
	idx        []int
}

// NewSmallNNLS returns a solver for systems of up to m unknowns.
func NewSmallNNLS(m int) *SmallNNLS {
	return &SmallNNLS{G: make([]float64, m*m), H: make([]float64, m), X: make([]float64, m),
		xOld: make([]float64, m), z: make([]float64, m), s: make([]float64, m*m), rhs: make([]float64, m),
		inP: make([]bool, m), idx: make([]int, 0, m)}
}

// SolveInPlace minimises ½vᵀGv − hᵀv + ½ε‖v − x‖² over v with v_k ≥ 0 for k < nc
// (the item's loadings a_j; the intercept b_j is free) by the active-set
// method of Lawson and Hanson (Solving Least Squares Problems, 1974, ch. 23),
// written on the normal equations. ε = 1e-12·trace(G) is a proximal term that
// keeps the small system positive definite; it can only lower the surrogate
// relative to the warm value x. The result replaces x. G and h are modified.
// (G, h, x are the first m*m, m and m values of w.G, w.H and w.X.)
func (w *SmallNNLS) SolveInPlace(m, nc int) {
	G, h, x := w.G[:m*m], w.H[:m], w.X[:m]
	tr := addProximal(G, h, x, m)
	if tr == 0 {
		return
	}
	copy(w.xOld, x)
	for d := 0; d < min(nc, m); d++ {
		if x[d] < 0 {
			x[d] = 0
		}
	}
	hmax := 0.0
	for _, v := range h {
		hmax = math.Max(hmax, math.Abs(v))
	}
	tol := 1e-13 * (hmax + tr)
	inP := w.inP[:m]
	for k := range inP {
		inP[k] = k >= nc
	}
	z := w.z[:m]
	if !w.solveP(m, z) {
		copy(x, w.xOld)
		return
	}
	copy(x, z)
	for outer := 0; outer < 4*m+4; outer++ {
		best, bestW := -1, tol
		for k := 0; k < nc; k++ {
			if inP[k] {
				continue
			}
			g := h[k]
			for l := 0; l < m; l++ {
				g -= G[k*m+l] * x[l]
			}
			if g > bestW {
				best, bestW = k, g
			}
		}
		if best < 0 {
			return
		}
		inP[best] = true
		for inner := 0; inner < 4*m+4; inner++ {
			if !w.solveP(m, z) {
				copy(x, w.xOld)
				return
			}
			alpha, feasible := 1.0, true
			for k := 0; k < nc; k++ {
				if inP[k] && z[k] <= 0 {
					feasible = false
					if d := x[k] - z[k]; d > 0 {
						alpha = math.Min(alpha, x[k]/d)
					} else {
						alpha = 0
					}
				}
			}
			if feasible {
				copy(x, z)
				break
			}
			for k := 0; k < m; k++ {
				x[k] += alpha * (z[k] - x[k])
			}
			for k := 0; k < nc; k++ {
				if inP[k] && x[k] <= 0 {
					inP[k], x[k] = false, 0
				} else if inP[k] && z[k] <= 0 && alpha == 0 {
					inP[k], x[k] = false, 0
				}
			}
		}
	}
}

// solveP solves G_PP z_P = h_P on the passive set P and sets z to 0 off P.
func (w *SmallNNLS) solveP(m int, z []float64) bool {
	idx := w.idx[:0]
	for k := 0; k < m; k++ {
		if w.inP[k] {
			idx = append(idx, k)
		}
		z[k] = 0
	}
	w.idx = idx
	p := len(idx)
	s, rhs := w.s[:p*p], w.rhs[:p]
	for a, ka := range idx {
		rhs[a] = w.H[ka]
		for b, kb := range idx {
			s[a*p+b] = w.G[ka*m+kb]
		}
	}
	if !cholSolve(s, rhs, p) {
		return false
	}
	for a, ka := range idx {
		z[ka] = rhs[a]
	}
	return true
}

// cholSolve solves the symmetric positive-definite n x n system G v = h in
// place (G becomes its Cholesky factor, h the solution). It reports false,
// leaving h unusable, when G is not numerically positive definite.
func cholSolve(G, h []float64, n int) bool {
	if !Cholesky(G, n, 0) {
		return false
	}
	for i := 0; i < n; i++ {
		s := h[i]
		for k := 0; k < i; k++ {
			s -= G[i*n+k] * h[k]
		}
		h[i] = s / G[i*n+i]
	}
	for i := n - 1; i >= 0; i-- {
		s := h[i]
		for k := i + 1; k < n; k++ {
			s -= G[k*n+i] * h[k]
		}
		h[i] = s / G[i*n+i]
	}
	return true
}

// Solve minimises ½vᵀGv − hᵀv over v with v_k ≥ 0 for k < nc, as the item block
// of the CPU fitter does (G is m x m row-major, m = len(h)). x holds the warm
// value on entry and the solution on return; G and h are left unchanged.
func (s *SmallNNLS) Solve(G, h, x []float64, nc int) {
	m := len(h)
	copy(s.G[:m*m], G)
	copy(s.H[:m], h)
	copy(s.X[:m], x)
	s.SolveInPlace(m, nc)
	copy(x, s.X[:m])
}

// addProximal adds the proximal term ε‖v − x‖², ε = 1e-12·trace(G), to the
// m x m normal equations G v = h, and returns trace(G) before it; an empty
// system (zero trace) is left as it is.
func addProximal(G, h, x []float64, m int) float64 {
	tr := 0.0
	for d := 0; d < m; d++ {
		tr += G[d*m+d]
	}
	if tr == 0 {
		return 0
	}
	eps := 1e-12 * tr
	for d := 0; d < m; d++ {
		G[d*m+d] += eps
		h[d] += eps * x[d]
	}
	return tr
}

// Cholesky factors the symmetric n x n G (row-major) in place: its lower
// triangle becomes L with G = L Lᵀ; the upper triangle is not read or
// written. It reports false when a pivot is not above minPivot (G is not
// numerically positive definite).
func Cholesky(G []float64, n int, minPivot float64) bool {
	for j := 0; j < n; j++ {
		d := G[j*n+j]
		for k := 0; k < j; k++ {
			d -= G[j*n+k] * G[j*n+k]
		}
		if !(d > minPivot) {
			return false
		}
		d = math.Sqrt(d)
		G[j*n+j] = d
		for i := j + 1; i < n; i++ {
			s := G[i*n+j]
			for k := 0; k < j; k++ {
				s -= G[i*n+k] * G[j*n+k]
			}
			G[i*n+j] = s / d
		}
	}
	return true
}

// CholSolve solves G v = h for a symmetric positive definite n x n G by
// Cholesky, writing v into h; it reports false (and leaves h undefined) when G
// is not positive definite. G is overwritten.
func CholSolve(G, h []float64, n int) bool { return cholSolve(G, h, n) }

// SolveTheta is the θ block for one model: θ_i = argmin Σ_j (θ_iᵀa_j + b_j − ỹ_ij)²
// from the normal equations G θ = h (G symmetric r x r), by Cholesky with the
// proximal term ε‖θ − θ_old‖², ε = 1e-12·trace(G). A model whose system is
// empty or singular keeps θ. G and h are overwritten.
func SolveTheta(G, h, theta []float64) {
	r := len(theta)
	if addProximal(G, h, theta, r) == 0 {
		return
	}
	if cholSolve(G, h, r) {
		copy(theta, h)
	}
}

// ItemSolve1 is the rank-1 item block: min over a ≥ 0 and b of
// Σ_i (θ_i a + b − ỹ_i)², from n = |Ω_j|, st = Σθ, stt = Σθ², sy = Σỹ, sty = Σθỹ.
// When a is not identified (θ constant over the item's models) a keeps its
// value and b is its exact minimiser, so the surrogate still does not increase.
func ItemSolve1(n, st, stt, sy, sty, aOld float64) (a, b float64) {
	det := n*stt - st*st
	if det <= 1e-12*n*stt || det <= 0 {
		return aOld, (sy - aOld*st) / n
	}
	a = (n*sty - st*sy) / det
	if a <= 0 {
		return 0, sy / n
	}
	return a, (sy - a*st) / n
}
