package simd

import "math"

// The kernels of the training steps (the JE-IRT step, the cBMM cell pass):
// AdamW's update, axpy, a float64 dot product of float32 vectors, and log1p
// and softplus in float64. Like the other elementwise kernels they run on
// the calling goroutine.

// AdamW is one step of AdamW (Loshchilov and Hutter, "Decoupled Weight Decay
// Regularization", ICLR 2019) as torch.optim.AdamW computes it, in float32:
//
//	m ← β1·m + (1−β1)·g,  v ← β2·v + ((1−β2)·g)·g
//	p ← p·Decay − StepSize·m / (√v·InvSqrtBC2 + Eps)
//
// with Decay = 1 − lr·λ, StepSize = lr/(1−β1ᵗ) and InvSqrtBC2 = 1/√(1−β2ᵗ)
// at step t.
type AdamW struct {
	Beta1, Beta2 float32
	Decay        float32
	StepSize     float32
	InvSqrtBC2   float32
	Eps          float32
}

// Update applies the step to the parameters p with gradient g and moments m
// and v (all of one length), in place. Every level rounds each operation on
// its own in the order above (no fused multiply-add; the square root is
// correctly rounded), so all levels give the same bits.
func (a AdamW) Update(p, g, m, v []float32) {
	g, m, v = g[:len(p)], m[:len(p)], v[:len(p)]
	o := use
	n := 0
	if o.level != Go {
		n = vectorPart(len(p), o.lanes)
		if n > 0 {
			c := [8]float32{a.Beta1, 1 - a.Beta1, a.Beta2, 1 - a.Beta2, a.Decay, a.StepSize, a.InvSqrtBC2, a.Eps}
			adamWAt(o.level, &p[0], &g[0], &m[0], &v[0], n, &c[0])
		}
	}
	a.updateGo(p[n:], g[n:], m[n:], v[n:])
}

// updateGo is Update in Go; the conversions keep the compiler from fusing a
// product into a sum (the Go spec allows fusion, an explicit conversion
// forbids it).
func (a AdamW) updateGo(p, g, m, v []float32) {
	c1, c2 := 1-a.Beta1, 1-a.Beta2
	for k := range p {
		gk := g[k]
		mk := float32(a.Beta1*m[k]) + float32(c1*gk)
		vk := float32(a.Beta2*v[k]) + float32(float32(c2*gk)*gk)
		m[k], v[k] = mk, vk
		den := float32(float32(math.Sqrt(float64(vk)))*a.InvSqrtBC2) + a.Eps
		p[k] = float32(p[k]*a.Decay) - float32(a.StepSize*mk)/den
	}
}

// Axpy sets dst[i] += alpha·x[i] (float32, the product rounded before the
// sum, at every level: the same bits).
func Axpy(dst, x []float32, alpha float32) {
	dst = dst[:len(x)]
	o := use
	n := 0
	if o.level != Go {
		n = vectorPart(len(x), o.lanes)
		if n > 0 {
			o.axpy(&dst[0], &x[0], n, alpha)
		}
	}
	for i := n; i < len(x); i++ {
		dst[i] += float32(alpha * x[i])
	}
}

// Dot64 is Σ x[i]·y[i] over float32 vectors of one length, in float64: each
// product is exact in float64 (24 + 24 bits), only the sums round. The
// pure-Go level adds in index order; the vector levels add in lanes and
// differ from it by at most len(x)·2⁻⁵³·Σ|x[i]·y[i]|.
func Dot64(x, y []float32) float64 {
	y = y[:len(x)]
	o := use
	n := 0
	var s float64
	if o.level != Go {
		n = vectorPart(len(x), o.lanes)
		if n > 0 {
			s = o.dot64(&x[0], &y[0], n)
		}
	}
	for i := n; i < len(x); i++ {
		s += float64(x[i]) * float64(y[i])
	}
	return s
}

// Log1p64 sets dst[i] = log(1 + src[i]) in float64; dst may be src. The
// vector versions (fdlibm's log of 1 + x with the rounding error of 1 + x
// added back) are within 2 ulp of math.Log1p; log1p(−1) = −Inf,
// log1p(x < −1) = NaN, log1p(+Inf) = +Inf, NaN stays NaN.
func Log1p64(dst, src []float64) {
	unaryVec(dst, src, func(o *ops) func(dst, src *float64, n int) { return o.log1p64 }, math.Log1p)
}

// Softplus64 sets dst[i] = log(1 + exp(src[i])) in float64, computed as
// max(x, 0) + log1p(exp(−|x|)) so that neither side overflows; dst may be
// src. The vector versions are within 4 ulp of softplus64 (for results in
// float64's normal range; within 2⁻¹⁰⁷⁴ below); softplus(−Inf) = 0,
// softplus(+Inf) = +Inf, NaN stays NaN. The binary cross-entropy of a logit
// z and a label y is Softplus64(z) − y·z.
func Softplus64(dst, src []float64) {
	unaryVec(dst, src, func(o *ops) func(dst, src *float64, n int) { return o.softplus64 }, softplus64)
}

// softplus64 is log(1 + eˣ) in float64, as Softplus64 computes it.
func softplus64(x float64) float64 {
	return math.Max(x, 0) + math.Log1p(exp64(-math.Abs(x)))
}
