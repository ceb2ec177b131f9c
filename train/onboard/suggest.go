package onboard

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/jeirt/jeirt/model"
)

// Suggested is one question picked by SuggestItems.
type Suggested struct {
	Index int     // position in the candidate list
	P     float64 // P(correct) of the population-mean model
	Gain  float64 // increase of log det of the information matrix when it was added
}

// SuggestItems picks K of the candidate question embeddings q on which a new
// model's answers pin its row down best: greedy Bayesian D-optimal design
// (Chaloner and Verdinelli, "Bayesian Experimental Design: A Review",
// Statistical Science 1995, §2.1) for the row fit of Onboard. With u_j the
// unit direction of q_j and w_j = p_j(1−p_j) the Fisher weight of question j
// at the population-mean model row m̄ (p_j = σ(u_j·m̄ − ‖q_j‖)), it maximises
//
//	log det(Λ + Σ_{j∈S} w_j u_j u_jᵀ)
//
// over sets S of K questions, one question at a time, where Λ is the
// precision of the prior the row fit uses. Adding j raises the log
// determinant by log(1 + w_j u_jᵀA⁻¹u_j); A⁻¹ and u_jᵀA⁻¹u_j are kept up to
// date with Sherman–Morrison, so a pick costs O(J·d + d²). Questions that
// every model gets right (or wrong) carry little weight, and a question
// along a direction already covered gains little.
func SuggestItems(ctx context.Context, m *model.JEIRT, q [][]float32, K int, prior Gaussian) ([]Suggested, error) {
	return suggest(ctx, m, q, K, prior, "d-optimal")
}

// SuggestItemsV is SuggestItems with the V-optimal (I-optimal) criterion
// (Atkinson, Donev and Tobias, Optimum Experimental Designs, §10.6): each
// pick most reduces the pool's summed Fisher-weighted predictive variance
// Σ_j w_j u_jᵀA⁻¹u_j, so the design serves the questions the model will
// actually be asked rather than shrinking the posterior's volume in rare
// directions. Adding v = √w_k u_k reduces it by vᵀA⁻¹FA⁻¹v/(1+vᵀA⁻¹v), with
// F = Σ_j w_j u_j u_jᵀ; u_kᵀA⁻¹FA⁻¹u_k is kept up to date with the same
// rank-one algebra. Here w_j is the Fisher weight averaged over the known
// models, mean_i p_ij(1−p_ij), rather than taken at the mean model: a
// question only the strong models find hard is informative for them.
func SuggestItemsV(ctx context.Context, m *model.JEIRT, q [][]float32, K int, prior Gaussian) ([]Suggested, error) {
	return suggest(ctx, m, q, K, prior, "v-optimal")
}

// SuggestNext picks K more questions for a new model that has already
// answered some: computerized adaptive testing in batches (Wainer et al.,
// Computerized Adaptive Testing: A Primer, 2000). It is the V-optimal design
// of SuggestItemsV, made at post, the Laplace posterior of the model's own
// row (Onboard.Posterior of its answers) rather than at the population prior,
// with Fisher weights p_j(1−p_j) at the fitted row. Questions with done[j]
// set (already answered) are neither picked nor counted in the target;
// Suggested.P is the fitted row's P(correct).
//
// A single design made before any answer is seen has to guess the new
// model's weights from the known models and misjudges models unlike them.
// A first round of random questions followed by rounds of SuggestNext beat
// random questions at equal K on both benchmarks of README ("Onboarding
// measured on real data"), most clearly when K is small.
func SuggestNext(ctx context.Context, q [][]float32, K int, post Gaussian, done []bool) ([]Suggested, error) {
	if err := checkSuggest(q, K, done); err != nil {
		return nil, err
	}
	row := float32Row(post.Mean)
	w, p := make([]float64, len(q)), make([]float64, len(q))
	for j, qj := range q {
		p[j] = model.Sigmoid(model.Logit(qj, row))
		w[j] = p[j] * (1 - p[j])
	}
	return greedyDesign(ctx, q, K, post, w, p, "v-optimal", done)
}

// SuggestRandom picks K of the candidate questions not done, uniformly with a
// generator seeded by seed: the first round of an adaptive test, and the
// baseline the designs are measured against. Suggested.P is P(correct) at
// the row at (NaN when at is nil); Gain is NaN.
func SuggestRandom(q [][]float32, K int, seed uint64, done []bool, at []float64) ([]Suggested, error) {
	if err := checkSuggest(q, K, done); err != nil {
		return nil, err
	}
	var free []int
	for j := range q {
		if done == nil || !done[j] {
			free = append(free, j)
		}
	}
	var row []float32
	if at != nil {
		row = float32Row(at)
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	out := make([]Suggested, K)
	for k, t := range rng.Perm(len(free))[:K] {
		out[k] = Suggested{Index: free[t], P: math.NaN(), Gain: math.NaN()}
		if row != nil {
			out[k].P = model.Sigmoid(model.Logit(q[free[t]], row))
		}
	}
	return out, nil
}

// checkSuggest checks that K questions can be picked from the q not done.
func checkSuggest(q [][]float32, K int, done []bool) error {
	if K < 1 {
		return fmt.Errorf("suggest: K = %d must be at least 1", K)
	}
	if done != nil && len(done) != len(q) {
		return fmt.Errorf("suggest: %d done flags for %d questions", len(done), len(q))
	}
	left := len(q)
	for _, x := range done {
		if x {
			left--
		}
	}
	if K > left && left == len(q) {
		return fmt.Errorf("suggest: K = %d but the pool has only %d questions", K, left)
	}
	if K > left {
		return fmt.Errorf("suggest: K = %d but only %d of the pool's %d questions are not answered yet", K, left, len(q))
	}
	return nil
}

func suggest(ctx context.Context, m *model.JEIRT, q [][]float32, K int, prior Gaussian, design string) ([]Suggested, error) {
	d := m.Dim
	if err := checkSuggest(q, K, nil); err != nil {
		return nil, err
	}
	if len(prior.Mean) != d {
		return nil, fmt.Errorf("suggest: prior of dimension %d for rows of dimension %d", len(prior.Mean), d)
	}
	// m̄: the mean model row of the checkpoint.
	mean := make([]float32, d)
	for i := 0; i < m.NumModels(); i++ {
		for k, v := range m.ModelEmbedding(i) {
			mean[k] += v / float32(m.NumModels())
		}
	}
	w, p := make([]float64, len(q)), make([]float64, len(q))
	for j, qj := range q {
		p[j] = model.Sigmoid(model.Logit(qj, mean))
		w[j] = p[j] * (1 - p[j])
		if design == "v-optimal" {
			// The expected Fisher weight over the known models.
			w[j] = 0
			for i := 0; i < m.NumModels(); i++ {
				pi := m.Prob(i, qj)
				w[j] += pi * (1 - pi) / float64(m.NumModels())
			}
		}
	}
	return greedyDesign(ctx, q, K, prior, w, p, design, nil)
}

// greedyDesign is the greedy loop of the designs: prior gives A⁻¹ at the
// start, w the Fisher weights, p the P(correct) reported with each pick.
func greedyDesign(ctx context.Context, q [][]float32, K int, prior Gaussian, w, p []float64, design string, done []bool) ([]Suggested, error) {
	J, d := len(q), len(prior.Mean)
	if len(prior.Precision) != d*d {
		return nil, fmt.Errorf("suggest: prior mean of dimension %d with a precision of %d entries", d, len(prior.Precision))
	}
	for j, qj := range q {
		if len(qj) != d {
			return nil, fmt.Errorf("suggest: question %d has an embedding of length %d, want %d", j, len(qj), d)
		}
	}
	// C = Λ⁻¹.
	var chol mat.Cholesky
	if !chol.Factorize(mat.NewSymDense(d, append([]float64(nil), prior.Precision...))) {
		return nil, fmt.Errorf("suggest: prior precision is not positive definite")
	}
	var cov mat.SymDense
	if err := chol.InverseTo(&cov); err != nil {
		return nil, fmt.Errorf("suggest: inverting the prior precision: %w", err)
	}
	C := make([]float64, d*d)
	for a := 0; a < d; a++ {
		for b := 0; b < d; b++ {
			C[a*d+b] = cov.At(a, b)
		}
	}
	U := make([]float64, J*d)
	for j, qj := range q {
		nrm := model.Norm(qj)
		for k, v := range qj {
			U[j*d+k] = float64(v) / (nrm + model.LinkEps)
		}
	}
	// c_j = u_jᵀ C u_j, from V = U C.
	V := make([]float64, J*d)
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, blas64.General{Rows: J, Cols: d, Stride: d, Data: U},
		blas64.General{Rows: d, Cols: d, Stride: d, Data: C}, 0, blas64.General{Rows: J, Cols: d, Stride: d, Data: V})
	c := make([]float64, J)
	for j := range c {
		c[j] = blas64.Dot(blas64.Vector{N: d, Inc: 1, Data: U[j*d : (j+1)*d]}, blas64.Vector{N: d, Inc: 1, Data: V[j*d : (j+1)*d]})
	}
	// V-optimal: e_j = u_jᵀ C F C u_j with F = Σ_j w_j u_j u_jᵀ.
	var F, CF, e, a, Fz []float64
	if design == "v-optimal" {
		F = make([]float64, d*d)
		scaled := make([]float64, J*d)
		for j := 0; j < J; j++ {
			if done != nil && done[j] {
				continue // answered: no longer to be predicted
			}
			sw := math.Sqrt(w[j])
			for k := 0; k < d; k++ {
				scaled[j*d+k] = sw * U[j*d+k]
			}
		}
		blas64.Gemm(blas.Trans, blas.NoTrans, 1, blas64.General{Rows: J, Cols: d, Stride: d, Data: scaled},
			blas64.General{Rows: J, Cols: d, Stride: d, Data: scaled}, 0, blas64.General{Rows: d, Cols: d, Stride: d, Data: F})
		CF = make([]float64, d*d)
		G := make([]float64, d*d)
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, blas64.General{Rows: d, Cols: d, Stride: d, Data: C},
			blas64.General{Rows: d, Cols: d, Stride: d, Data: F}, 0, blas64.General{Rows: d, Cols: d, Stride: d, Data: CF})
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, blas64.General{Rows: d, Cols: d, Stride: d, Data: CF},
			blas64.General{Rows: d, Cols: d, Stride: d, Data: C}, 0, blas64.General{Rows: d, Cols: d, Stride: d, Data: G})
		W := make([]float64, J*d)
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, blas64.General{Rows: J, Cols: d, Stride: d, Data: U},
			blas64.General{Rows: d, Cols: d, Stride: d, Data: G}, 0, blas64.General{Rows: J, Cols: d, Stride: d, Data: W})
		e = make([]float64, J)
		for j := range e {
			e[j] = blas64.Dot(blas64.Vector{N: d, Inc: 1, Data: U[j*d : (j+1)*d]}, blas64.Vector{N: d, Inc: 1, Data: W[j*d : (j+1)*d]})
		}
		a, Fz = make([]float64, d), make([]float64, d)
	}
	uz := make([]float64, J)
	ua := make([]float64, J)
	chosen := make([]bool, J)
	if done != nil {
		copy(chosen, done)
	}
	z := make([]float64, d)
	v := make([]float64, d)
	out := make([]Suggested, 0, K)
	for len(out) < K {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		best, bestGain := -1, math.Inf(-1)
		for j := range c {
			if chosen[j] {
				continue
			}
			g := math.Log1p(w[j] * c[j])
			if e != nil {
				g = w[j] * e[j] / (1 + w[j]*c[j])
			}
			if g > bestGain {
				best, bestGain = j, g
			}
		}
		chosen[best] = true
		out = append(out, Suggested{Index: best, P: p[best], Gain: bestGain})
		// Sherman–Morrison with v = √w u: C ← C − (Cv)(Cv)ᵀ/(1 + vᵀCv).
		sw := math.Sqrt(w[best])
		for k := range v {
			v[k] = sw * U[best*d+k]
		}
		blas64.Symv(1, blas64.Symmetric{Uplo: blas.Upper, N: d, Stride: d, Data: C}, blas64.Vector{N: d, Inc: 1, Data: v},
			0, blas64.Vector{N: d, Inc: 1, Data: z})
		denom := 1 + blas64.Dot(blas64.Vector{N: d, Inc: 1, Data: v}, blas64.Vector{N: d, Inc: 1, Data: z})
		if e != nil {
			// C' = C − zzᵀ/den gives C'FC' = CFC − (azᵀ + zaᵀ)/den + zzᵀ(zᵀFz)/den², a = CFz.
			blas64.Gemv(blas.NoTrans, 1, blas64.General{Rows: d, Cols: d, Stride: d, Data: CF}, blas64.Vector{N: d, Inc: 1, Data: z},
				0, blas64.Vector{N: d, Inc: 1, Data: a})
			blas64.Gemv(blas.NoTrans, 1, blas64.General{Rows: d, Cols: d, Stride: d, Data: F}, blas64.Vector{N: d, Inc: 1, Data: z},
				0, blas64.Vector{N: d, Inc: 1, Data: Fz})
			blas64.Gemv(blas.NoTrans, 1, blas64.General{Rows: J, Cols: d, Stride: d, Data: U}, blas64.Vector{N: d, Inc: 1, Data: a},
				0, blas64.Vector{N: J, Inc: 1, Data: ua})
		}
		// c_j ← c_j − (u_j·z)²/denom.
		blas64.Gemv(blas.NoTrans, 1, blas64.General{Rows: J, Cols: d, Stride: d, Data: U}, blas64.Vector{N: d, Inc: 1, Data: z},
			0, blas64.Vector{N: J, Inc: 1, Data: uz})
		for j := range c {
			c[j] -= uz[j] * uz[j] / denom
		}
		if e != nil {
			zFz := blas64.Dot(blas64.Vector{N: d, Inc: 1, Data: z}, blas64.Vector{N: d, Inc: 1, Data: Fz})
			for j := range e {
				e[j] += -2*ua[j]*uz[j]/denom + uz[j]*uz[j]*zFz/(denom*denom)
			}
			// CF ← C'F = CF − z(Fz)ᵀ/den.
			blas64.Ger(-1/denom, blas64.Vector{N: d, Inc: 1, Data: z}, blas64.Vector{N: d, Inc: 1, Data: Fz},
				blas64.General{Rows: d, Cols: d, Stride: d, Data: CF})
		}
		blas64.Syr(-1/denom, blas64.Vector{N: d, Inc: 1, Data: z}, blas64.Symmetric{Uplo: blas.Upper, N: d, Stride: d, Data: C})
	}
	return out, nil
}
