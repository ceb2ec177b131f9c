package jeirt

import (
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/backend"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// fusedGradient is the JE-IRT loss and gradient written out by hand: the
// adapter's matrix products go to gonum's blocked, multi-threaded Sgemm and
// the per-pair link is one loop. Buffers are reused across steps.
type fusedGradient struct {
	a, h, q, gq, gh []float32 // U x Hidden, U x Hidden, U x Dim, U x Dim, U x Hidden
}

func newFusedGradient(p *backend.JEIRTParams) *fusedGradient { return &fusedGradient{} }

func grow32(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

func mat32(rows, cols int, data []float32) blas32.General {
	return blas32.General{Rows: rows, Cols: cols, Stride: cols, Data: data}
}

func (f *fusedGradient) gradient(p *backend.JEIRTParams, b *backend.JEIRTBatch, g *backend.JEIRTParams) (float64, error) {
	U, B := b.Rows(), len(b.Row)
	D, H, d := p.InputDim, p.Hidden, p.Dim
	f.a, f.h = grow32(f.a, U*H), grow32(f.h, U*H)
	f.q, f.gq, f.gh = grow32(f.q, U*d), grow32(f.gq, U*d), grow32(f.gh, U*H)

	// Adapter forward: a = x·W1ᵀ + c1, h = dropout(relu(a)), q = h·W2ᵀ + c2 (+ r_j).
	adapter := model.JEIRT{InputDim: D, Hidden: H, Dim: d, W1: p.W1, C1: p.C1, W2: p.W2, C2: p.C2}
	adapter.AdapterForward(b.X, U, b.Mask, f.a, f.h, f.q)
	if p.R != nil {
		for u, j := range b.Item {
			axpy32(f.q[u*d:(u+1)*d], p.R[int(j)*d:(int(j)+1)*d], 1)
		}
	}

	// Link and loss, per pair: z = q·m/(‖q‖+ε) − ‖q‖, ℓ = softplus(z) − y·z.
	for _, s := range g.Slices() {
		clear(s)
	}
	clear(f.gq)
	invB := 1 / float64(B)
	loss := linkLoss(f.q, p.M, f.gq, g.M, d, b.Row, b.Model, b.Label, b.Weight)

	// Residual: ∂/∂r_j of the pair-mean penalty λ‖r_j‖² and of the loss through q.
	if p.R != nil {
		count := make(map[int32]int, U)
		for _, r := range b.Row {
			count[b.Item[r]]++
		}
		for u, j := range b.Item {
			r, gr := p.R[int(j)*d:(int(j)+1)*d], g.R[int(j)*d:(int(j)+1)*d]
			axpy32(gr, f.gq[u*d:(u+1)*d], 1)
			if c := count[j]; c > 0 {
				w := p.ResidualL2 * float64(c) * invB
				loss += w * sumSq32(r)
				axpy32(gr, r, float32(2*w))
				count[j] = 0 // a question on several rows (per-pair) is penalised once per pair, counted above
			}
		}
	}

	// Adapter backward.
	for u := 0; u < U; u++ {
		axpy32(g.C2, f.gq[u*d:(u+1)*d], 1)
	}
	blas32.Gemm(blas.Trans, blas.NoTrans, 1, mat32(U, d, f.gq), mat32(U, H, f.h), 0, mat32(d, H, g.W2))
	blas32.Gemm(blas.NoTrans, blas.NoTrans, 1, mat32(U, d, f.gq), mat32(d, H, p.W2), 0, mat32(U, H, f.gh))
	for k, v := range f.a {
		switch {
		case v <= 0:
			f.gh[k] = 0
		case b.Mask != nil:
			f.gh[k] *= b.Mask[k]
		}
	}
	for u := 0; u < U; u++ {
		axpy32(g.C1, f.gh[u*H:(u+1)*H], 1)
	}
	blas32.Gemm(blas.Trans, blas.NoTrans, 1, mat32(U, H, f.gh), mat32(U, D, b.X), 0, mat32(H, D, g.W1))
	return loss, nil
}

func axpy32(dst, src []float32, alpha float32) {
	for k, v := range src {
		dst[k] += alpha * v
	}
}

func sumSq32(x []float32) float64 {
	var s float64
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return s
}

// linkLoss returns the mean binary cross-entropy of the JE-IRT link over the
// pairs k (question row[k] of Q, model mdl[k] of M, label[k]) and adds its
// gradients to gq and gm. The link is JE-IRT's (Yao et al. 2025,
// arXiv:2509.22888): z = q·m/(‖q‖+ε) − ‖q‖, P(correct) = σ(z), with loss
// ℓ = softplus(z) − y·z computed stably; with weights (trials), the
// trial-weighted mean, y the fraction k/n.
func linkLoss(Q, M, gq, gm []float32, d int, row, mdl []int32, label, weight []float32) float64 {
	invB := 1 / float64(len(row))
	if weight != nil {
		// The trial-weighted mean: Σ n·ℓ(z, ȳ)/Σ n, with a fraction ȳ = k/n as
		// the soft target.
		total := 0.0
		for _, w := range weight {
			total += float64(w)
		}
		invB = 1 / total
	}
	var loss float64
	for k := range row {
		u, i := int(row[k]), int(mdl[k])
		q, m := Q[u*d:(u+1)*d], M[i*d:(i+1)*d]
		z, dot, n := model.Link(q, m)
		y := float64(label[k])
		w := 1.0
		if weight != nil {
			w = float64(weight[k])
		}
		loss += w * model.BCE(z, y)
		gz := w * (model.Sigmoid(z) - y) * invB
		// ∂z/∂m = q/(‖q‖+ε); ∂z/∂q = m/(‖q‖+ε) − (q·m)·q/(‖q‖(‖q‖+ε)²) − q/‖q‖.
		const eps = model.LinkEps
		axpy32(gm[i*d:(i+1)*d], q, float32(gz/(n+eps)))
		gqu := gq[u*d : (u+1)*d]
		axpy32(gqu, m, float32(gz/(n+eps)))
		if n > 0 {
			axpy32(gqu, q, float32(-gz*(dot/(n*(n+eps)*(n+eps))+1/n)))
		}
	}
	return loss * invB
}
