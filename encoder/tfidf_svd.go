package encoder

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// randomizedSVD returns the k leading right singular vectors of the sparse
// n × V matrix X (rows), as a V × k term-major float32 matrix. It is
// Halko, Martinsson and Tropp (SIAM Review 2011): Algorithm 4.4 (randomised
// subspace iteration, Y = (XXᵀ)^q XΩ with an orthonormalisation after every
// product by XXᵀ) followed by Algorithm 5.1 (the SVD of B = QᵀX), here taken
// from the eigendecomposition of the small BBᵀ = QᵀXXᵀQ, so that nothing of
// size V × l is formed except XᵀQ. Ω is standard normal from a PCG seeded by
// seed, with l = k + 10 columns (oversampling). Each component's sign makes
// its largest entry positive, so a fit is deterministic. step, when not
// nil, is called after each of the power+2 products by X and Xᵀ (the slow
// part) with those done and power+2.
func randomizedSVD(ctx context.Context, X []sparseRow, V, k, power int, seed uint64, step func(done, total int)) ([]float32, error) {
	if step == nil {
		step = func(int, int) {}
	}
	n := len(X)
	l := min(k+10, n, V)
	if k < 1 || l < k {
		return nil, fmt.Errorf("tfidf encoder: cannot take %d components of a %d × %d matrix", k, n, V)
	}
	rng := rand.New(rand.NewPCG(seed, 0x6a656972742d7466))
	omega := make([]float64, V*l)
	for i := range omega {
		omega[i] = rng.NormFloat64()
	}
	// Y = XΩ, then q rounds of Q = orth(Y), Y = X(XᵀQ).
	Y := make([]float64, n*l)
	mulSparse(X, omega, l, Y)
	W := make([]float64, V*l)
	for it := 0; it < power; it++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		orthonormalize(Y, n, l)
		clear(W)
		mulSparseT(X, Y, l, W)
		mulSparse(X, W, l, Y) // Y = XXᵀQ
		step(it+1, power+2)
	}
	// Here Y = XXᵀQ with Q orthonormal; Y was overwritten, so keep Q apart.
	Q := make([]float64, n*l)
	copy(Q, Y)
	orthonormalize(Q, n, l)
	clear(W)
	mulSparseT(X, Q, l, W)
	mulSparse(X, W, l, Y)
	step(power+1, power+2)
	// BBᵀ = QᵀY (l × l, symmetric).
	bbt := mat.NewSymDense(l, nil)
	for a := 0; a < l; a++ {
		for b := a; b < l; b++ {
			var s float64
			for i := 0; i < n; i++ {
				s += Q[i*l+a] * Y[i*l+b]
			}
			bbt.SetSym(a, b, s)
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(bbt, true) {
		return nil, fmt.Errorf("tfidf encoder: the eigendecomposition of the %d × %d SVD core did not converge", l, l)
	}
	vals := eig.Values(nil) // ascending
	var U mat.Dense
	eig.VectorsTo(&U)
	// P = Q U_k S_k⁻¹ (n × k); then the components are XᵀP (V × k).
	P := make([]float64, n*k)
	top := math.Sqrt(math.Max(vals[l-1], 0))
	for d := 0; d < k; d++ {
		c := l - 1 - d
		s := math.Sqrt(math.Max(vals[c], 0))
		if s <= 1e-10*top || s == 0 {
			continue // a null direction: leave the component zero
		}
		for i := 0; i < n; i++ {
			var sum float64
			for a := 0; a < l; a++ {
				sum += Q[i*l+a] * U.At(a, c)
			}
			P[i*k+d] = sum / s
		}
	}
	comp := make([]float64, V*k)
	mulSparseT(X, P, k, comp)
	step(power+2, power+2)
	out := make([]float32, V*k)
	for d := 0; d < k; d++ {
		best, sign := 0.0, 1.0
		for t := 0; t < V; t++ {
			if a := math.Abs(comp[t*k+d]); a > best {
				best = a
				sign = math.Copysign(1, comp[t*k+d])
			}
		}
		for t := 0; t < V; t++ {
			out[t*k+d] = float32(sign * comp[t*k+d])
		}
	}
	return out, nil
}

// mulSparse sets Y (n × l) = X·B, B dense V × l row-major.
func mulSparse(X []sparseRow, B []float64, l int, Y []float64) {
	for i, r := range X {
		y := Y[i*l : (i+1)*l]
		clear(y)
		for k, j := range r.col {
			v := r.val[k]
			b := B[int(j)*l : (int(j)+1)*l]
			for c, x := range b {
				y[c] += v * x
			}
		}
	}
}

// mulSparseT adds Xᵀ·A (V × l) to W, A dense n × l row-major.
func mulSparseT(X []sparseRow, A []float64, l int, W []float64) {
	for i, r := range X {
		a := A[i*l : (i+1)*l]
		for k, j := range r.col {
			v := r.val[k]
			w := W[int(j)*l : (int(j)+1)*l]
			for c, x := range a {
				w[c] += v * x
			}
		}
	}
}

// orthonormalize replaces the l columns of the n × l row-major matrix A by an
// orthonormal basis of their span: modified Gram-Schmidt applied twice
// ("twice is enough", Giraud et al. 2005). A column that falls to zero
// (dependent on the earlier ones) stays zero.
func orthonormalize(A []float64, n, l int) {
	col := make([]float64, n)
	for c := 0; c < l; c++ {
		for i := 0; i < n; i++ {
			col[i] = A[i*l+c]
		}
		orig := norm2(col)
		for pass := 0; pass < 2; pass++ {
			for p := 0; p < c; p++ {
				var dot float64
				for i := 0; i < n; i++ {
					dot += A[i*l+p] * col[i]
				}
				for i := 0; i < n; i++ {
					col[i] -= dot * A[i*l+p]
				}
			}
		}
		nrm := norm2(col)
		scale := 0.0
		if nrm > 1e-12*orig && nrm > 0 {
			scale = 1 / nrm
		}
		for i := 0; i < n; i++ {
			A[i*l+c] = col[i] * scale
		}
	}
}

func norm2(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v * v
	}
	return math.Sqrt(s)
}
