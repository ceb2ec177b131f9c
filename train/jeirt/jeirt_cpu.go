package jeirt

import (
	"math"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/simd"
	"github.com/jeirt/jeirt/train/backend"
	"gonum.org/v1/gonum/blas"
)

// fusedGradient is the JE-IRT loss and gradient written out by hand: the
// adapter's matrix products go to model/simd's blocked, multi-threaded
// Sgemm and the link to one vectorised pass over the pairs (linkPass).
// Buffers are reused across steps.
type fusedGradient struct {
	a, h, q, gq, gh []float32 // U x Hidden, U x Hidden, U x Dim, U x Dim, U x Hidden
	link            linkPass
	g               *backend.JEIRTParams // the gradient
}

func newFusedGradient(p *backend.JEIRTParams) *fusedGradient { return &fusedGradient{} }

func grow32(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

func grow64(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

func (f *fusedGradient) gradient(p *backend.JEIRTParams, b *backend.JEIRTBatch) ([][]float32, float64, error) {
	U, B := b.Rows(), len(b.Row)
	D, H, d := p.InputDim, p.Hidden, p.Dim
	f.a, f.h = grow32(f.a, U*H), grow32(f.h, U*H)
	f.q, f.gq, f.gh = grow32(f.q, U*d), grow32(f.gq, U*d), grow32(f.gh, U*H)

	// Adapter forward: a = x·W1ᵀ + c1, h = dropout(relu(a)), q = h·W2ᵀ + c2 (+ r_j).
	adapter := model.JEIRT{InputDim: D, Hidden: H, Dim: d, W1: p.W1, C1: p.C1, W2: p.W2, C2: p.C2}
	adapter.AdapterForward(b.X, U, b.Mask, f.a, f.h, f.q)
	if p.R != nil {
		for u, j := range b.Item {
			simd.Axpy(f.q[u*d:(u+1)*d], p.R[int(j)*d:(int(j)+1)*d], 1)
		}
	}

	// Link and loss, per pair: z = q·m/(‖q‖+ε) − ‖q‖, ℓ = softplus(z) − y·z.
	// The gradients of M, R and q are sums from zero; linearBackward
	// writes the others whole.
	if !sameShape(f.g, p) {
		f.g = p.ZeroLike()
	}
	g := f.g
	clear(g.M)
	if g.R != nil {
		clear(g.R)
	}
	clear(f.gq)
	invB := 1 / float64(B)
	loss := f.link.run(f.q, p.M, f.gq, g.M, d, b.Row, b.Model, b.Label, b.Weight)

	// Residual: ∂/∂r_j of the pair-mean penalty λ‖r_j‖² and of the loss through q.
	if p.R != nil {
		count := make(map[int32]int, U)
		for _, r := range b.Row {
			count[b.Item[r]]++
		}
		for u, j := range b.Item {
			r, gr := p.R[int(j)*d:(int(j)+1)*d], g.R[int(j)*d:(int(j)+1)*d]
			simd.Axpy(gr, f.gq[u*d:(u+1)*d], 1)
			if c := count[j]; c > 0 {
				w := p.ResidualL2 * float64(c) * invB
				loss += w * simd.Dot64(r, r)
				simd.Axpy(gr, r, float32(2*w))
				count[j] = 0 // a question on several rows (per-pair) is penalised once per pair, counted above
			}
		}
	}

	// Adapter backward.
	linearBackward(g.W2, g.C2, f.gh, f.gq, f.h, p.W2, U, H, d)
	reluMaskBackward(f.gh, f.gh, f.a, b.Mask)
	linearBackward(g.W1, g.C1, nil, f.gh, b.X, nil, U, D, H)
	return f.g.Slices(), loss, nil
}

// sameShape reports whether g (nil: no) has p's slices, length for length.
func sameShape(g, p *backend.JEIRTParams) bool {
	if g == nil || len(g.Slices()) != len(p.Slices()) {
		return false
	}
	for k, s := range p.Slices() {
		if len(g.Slices()[k]) != len(s) {
			return false
		}
	}
	return true
}

// linearBackward is the gradient of y = x·Wᵀ + c (x rows x in, W out x in)
// given gy = ∂ℓ/∂y: gW = gyᵀ·x, gc = Σ_rows gy (from zero) and, when gx is
// not nil, gx = gy·W.
func linearBackward(gW, gc, gx, gy, x, w []float32, rows, in, out int) {
	clear(gc)
	for u := 0; u < rows; u++ {
		simd.Axpy(gc, gy[u*out:(u+1)*out], 1)
	}
	simd.Sgemm(blas.Trans, blas.NoTrans, out, in, rows, 1, gy, out, x, in, 0, gW, in)
	if gx != nil {
		simd.Sgemm(blas.NoTrans, blas.NoTrans, rows, in, out, 1, gy, out, w, in, 0, gx, in)
	}
}

// reluMaskBackward is the gradient of h = relu(a) ⊙ mask (mask nil: none):
// gA = gH where a > 0, times the mask, else 0. gA may be gH.
func reluMaskBackward(gA, gH, a, mask []float32) {
	for k, v := range a {
		switch {
		case v <= 0:
			gA[k] = 0
		case mask != nil:
			gA[k] = gH[k] * mask[k]
		default:
			gA[k] = gH[k]
		}
	}
}

// linkPass is the binary cross-entropy of the JE-IRT link over a batch's
// pairs and its gradient, with its buffers. The link is JE-IRT's (Yao et
// al. 2025, arXiv:2509.22888), as model.Link computes it: z = q·m/(‖q‖+ε) −
// ‖q‖, P(correct) = σ(z), with loss ℓ = softplus(z) − y·z (model.BCE).
type linkPass struct {
	norm, coef []float64 // per row: ‖q‖, and the coefficient of q in ∂ℓ/∂q
	z, dot, sp []float64 // per pair: z, q·m, softplus(z)
	sig        []float64 // per pair: σ(z)
}

// run returns the mean loss over the pairs k (question row[k] of Q, model
// mdl[k] of M, label[k]) and adds its gradients to gq and gm; with weights
// (trials), the trial-weighted mean Σ n·ℓ(z, ȳ)/Σ n, the label the fraction
// ȳ = k/n as a soft target. The sums are
// model.Link's (float64, on simd.Dot64; the norm once per row), softplus
// and σ of all z at once on the vector kernels:
//
//	∂ℓ/∂z = σ(z) − y
//	∂z/∂m = q/(‖q‖+ε)
//	∂z/∂q = m/(‖q‖+ε) − ((q·m)/(‖q‖(‖q‖+ε)²) + 1/‖q‖)·q
//
// where the second term of ∂z/∂q is summed over a row's pairs before it is
// added to the row once.
func (lp *linkPass) run(Q, M, gq, gm []float32, d int, row, mdl []int32, label, weight []float32) float64 {
	B, U := len(row), len(Q)/d
	invB := 1 / float64(B)
	if weight != nil {
		total := 0.0
		for _, w := range weight {
			total += float64(w)
		}
		invB = 1 / total
	}
	lp.norm, lp.coef = grow64(lp.norm, U), grow64(lp.coef, U)
	lp.z, lp.dot = grow64(lp.z, B), grow64(lp.dot, B)
	lp.sp, lp.sig = grow64(lp.sp, B), grow64(lp.sig, B)
	// The rows no pair refers to (a graph bucket's padding) need no norm.
	used := lp.coef
	clear(used)
	for _, u := range row {
		used[u] = 1
	}
	for u := range U {
		if used[u] != 0 {
			q := Q[u*d : (u+1)*d]
			lp.norm[u] = math.Sqrt(simd.Dot64(q, q))
		}
	}
	for k := range row {
		u, i := int(row[k]), int(mdl[k])
		dot := simd.Dot64(Q[u*d:(u+1)*d], M[i*d:(i+1)*d])
		n := lp.norm[u]
		lp.dot[k], lp.z[k] = dot, dot/(n+model.LinkEps)-n
	}
	simd.Softplus64(lp.sp, lp.z)
	simd.Sigmoid64(lp.sig, lp.z)
	clear(lp.coef)
	var loss float64
	for k := range row {
		u, i := int(row[k]), int(mdl[k])
		y, z := float64(label[k]), lp.z[k]
		w := 1.0
		if weight != nil {
			w = float64(weight[k])
		}
		loss += w * (lp.sp[k] - y*z)
		gz := w * (lp.sig[k] - y) * invB
		n := lp.norm[u]
		const eps = model.LinkEps
		q := Q[u*d : (u+1)*d]
		simd.Axpy(gm[i*d:(i+1)*d], q, float32(gz/(n+eps)))
		simd.Axpy(gq[u*d:(u+1)*d], M[i*d:(i+1)*d], float32(gz/(n+eps)))
		if n > 0 {
			lp.coef[u] -= gz * (lp.dot[k]/(n*(n+eps)*(n+eps)) + 1/n)
		}
	}
	for u := range U {
		if lp.coef[u] != 0 {
			simd.Axpy(gq[u*d:(u+1)*d], Q[u*d:(u+1)*d], float32(lp.coef[u]))
		}
	}
	return loss * invB
}
