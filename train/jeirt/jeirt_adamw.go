package jeirt

import (
	"math"
	"runtime"
	"sync"

	"github.com/jeirt/jeirt/train/backend"
)

// adamW is AdamW as PyTorch's torch.optim.AdamW computes it:
//
//	θ ← θ·(1 − lr·λ)
//	m ← β1·m + (1−β1)·g,  v ← β2·v + (1−β2)·g²
//	θ ← θ − lr · (m/(1−β1ᵗ)) / (√(v/(1−β2ᵗ)) + ε)
//
// applied to every parameter (PyTorch's default parameter group decays all).
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
	decay := float32(1 - lr*a.WeightDecay)
	b1, b2 := float32(a.Beta1), float32(a.Beta2)
	stepSize := float32(lr / bc1)
	invSqrtBc2 := float32(1 / math.Sqrt(bc2))
	eps := float32(a.Eps)
	update := func(p, g, m, v []float32) {
		for k := range p {
			gk := g[k]
			mk := b1*m[k] + (1-b1)*gk
			vk := b2*v[k] + (1-b2)*gk*gk
			m[k], v[k] = mk, vk
			p[k] = p[k]*decay - stepSize*mk/(float32(math.Sqrt(float64(vk)))*invSqrtBc2+eps)
		}
	}
	// Split the large arrays over the cores; the result does not depend on the split.
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for i, p := range params {
		if len(p) < 1<<15 || workers == 1 {
			update(p, grads[i], a.m[i], a.v[i])
			continue
		}
		chunk := (len(p) + workers - 1) / workers
		for lo := 0; lo < len(p); lo += chunk {
			hi := min(lo+chunk, len(p))
			wg.Add(1)
			go func(p, g, m, v []float32) {
				defer wg.Done()
				update(p, g, m, v)
			}(p[lo:hi], grads[i][lo:hi], a.m[i][lo:hi], a.v[i][lo:hi])
		}
	}
	wg.Wait()
}
