package jeirt

import (
	"math"

	"github.com/jeirt/jeirt/model/simd"
	"github.com/jeirt/jeirt/train/backend"
)

// adamW is AdamW as PyTorch's torch.optim.AdamW computes it:
//
//	θ ← θ·(1 − lr·λ)
//	m ← β1·m + (1−β1)·g,  v ← β2·v + (1−β2)·g²
//	θ ← θ − lr · (m/(1−β1ᵗ)) / (√(v/(1−β2ᵗ)) + ε)
//
// applied to every parameter (PyTorch's default parameter group decays all),
// in float32 on simd.AdamW (vectorised, the same bits at every level).
type adamW struct {
	backend.AdamW
	t    int
	m, v [][]float32
}

func newAdamW(o backend.AdamW, params [][]float32) *adamW {
	if o.Beta1 == 0 {
		o.Beta1 = 0.9
	}
	if o.Beta2 == 0 {
		o.Beta2 = 0.999
	}
	if o.Eps == 0 {
		o.Eps = 1e-8
	}
	a := &adamW{AdamW: o}
	for _, p := range params {
		a.m = append(a.m, make([]float32, len(p)))
		a.v = append(a.v, make([]float32, len(p)))
	}
	return a
}

func (a *adamW) step(lr float64, params, grads [][]float32) {
	a.t++
	bc1 := 1 - math.Pow(a.Beta1, float64(a.t))
	bc2 := 1 - math.Pow(a.Beta2, float64(a.t))
	k := simd.AdamW{Beta1: float32(a.Beta1), Beta2: float32(a.Beta2), Decay: float32(1 - lr*a.WeightDecay),
		StepSize: float32(lr / bc1), InvSqrtBC2: float32(1 / math.Sqrt(bc2)), Eps: float32(a.Eps)}
	// The large arrays are split over the cores; the result does not depend
	// on the split.
	for i, p := range params {
		g, m, v := grads[i], a.m[i], a.v[i]
		simd.ParallelRange(len(p), 1<<15, func(lo, hi int) { k.Update(p[lo:hi], g[lo:hi], m[lo:hi], v[lo:hi]) })
	}
}
