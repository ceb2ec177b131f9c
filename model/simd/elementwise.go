package simd

import (
	"math"
	"unsafe"
)

// The elementwise kernels run on the calling goroutine (callers split rows
// across cores). The pure-Go versions below are the reference: they compute in
// float64 and round once, and the vector versions are tested against them
// within the bounds in each doc comment (kernel_test.go).

// vectorPart is how many of n values whole vectors of lanes cover.
func vectorPart(n, lanes int) int { return n / lanes * lanes }

// Exp sets dst[i] = exp(src[i]); dst may be src. The vector versions are
// within 2 ulp of float32(math.Exp) for results in float32's normal range
// and within 2⁻¹⁴⁹ (one subnormal step) below it; exp(−Inf) = 0,
// exp(+Inf) = +Inf, NaN stays NaN.
func Exp(dst, src []float32) {
	unaryVec(dst, src, func(o *ops) func(dst, src *float32, n int) { return o.exp },
		func(x float32) float32 { return float32(math.Exp(float64(x))) })
}

// unaryVec runs a vector kernel over whole vectors and the rest through a
// buffer (the same arithmetic for every element wherever it sits), or f at
// the pure-Go level; vec picks the level's kernel.
func unaryVec[T float32 | float64](dst, src []T, vec func(*ops) func(dst, src *T, n int), f func(T) T) {
	dst = dst[:len(src)]
	o := use
	if o.level == Go {
		for i, v := range src {
			dst[i] = f(v)
		}
		return
	}
	k := vec(o)
	lanes := o.lanes * 4 / int(unsafe.Sizeof(T(0)))
	n := vectorPart(len(src), lanes)
	if n > 0 {
		k(&dst[0], &src[0], n)
	}
	if n < len(src) {
		var buf [16]T
		copy(buf[:], src[n:])
		k(&buf[0], &buf[0], lanes)
		copy(dst[n:], buf[:len(src)-n])
	}
}

// gelu is the exact GELU of Hendrycks and Gimpel (2016), x·Φ(x) =
// 0.5·x·(1 + erf(x/√2)), Hugging Face's hidden_act "gelu" (not the tanh
// approximation), in float64 rounded once. It is written with erfc,
// Φ(x) = erfc(−x/√2)/2, which keeps its relative accuracy for negative x
// where 1 + erf(x/√2) cancels (from x ≈ −5 on; at x = −10 it gives 0).
func gelu(x float32) float32 {
	v := float64(x)
	return float32(0.5 * v * math.Erfc(-v/math.Sqrt2))
}

// GELU sets dst[i] = gelu(src[i]), the exact (erf) GELU x·Φ(x); dst may be
// src. The vector versions compute Φ(−|x|) = exp(−x²/2)·W(|x|) with a
// rational W (see asmgen.geluBody) and are within 8 ulp of the float64 value
// rounded to float32 for x ≥ −13 and within 1e-37 below (where x·Φ(x) is
// smaller than float32's normal range); gelu(+Inf) = +Inf, gelu(−Inf) = NaN
// (−Inf·0, as in float64), NaN stays NaN.
func GELU(dst, src []float32) {
	unaryVec(dst, src, func(o *ops) func(dst, src *float32, n int) { return o.gelu }, gelu)
}

// Softmax replaces x by softmax(x): exp(x[i] − max x) / Σ exp(x[j] − max x).
// −Inf entries (masked keys) get exactly 0; a row of nothing but −Inf
// becomes all 0; a NaN or +Inf anywhere makes the row NaN. The vector
// versions (float32 exp, the sum in float64) are within 8 ulp + 2e-9 of the
// float64 computation.
func Softmax(x []float32) {
	if len(x) == 0 {
		return
	}
	o := use
	if o.level == Go || len(x) < o.lanes {
		softmaxGo(x)
		return
	}
	n := vectorPart(len(x), o.lanes)
	m := o.max(&x[0], n)
	for _, v := range x[n:] {
		if v > m || v != v {
			m = v
		}
	}
	if math.IsInf(float64(m), -1) {
		clear(x)
		return
	}
	sum := o.expSubSum(&x[0], n, m)
	if n < len(x) {
		var buf [16]float32
		for i := range buf {
			buf[i] = float32(math.Inf(-1))
		}
		copy(buf[:], x[n:])
		sum += o.expSubSum(&buf[0], o.lanes, m)
		copy(x[n:], buf[:])
	}
	inv := float32(1 / sum)
	o.scale(&x[0], n, inv)
	for i := n; i < len(x); i++ {
		x[i] *= inv
	}
}

// softmaxGo is Softmax in float64.
func softmaxGo(x []float32) {
	maxV := math.Inf(-1)
	for _, v := range x {
		maxV = math.Max(maxV, float64(v))
	}
	if math.IsInf(maxV, -1) {
		clear(x)
		return
	}
	var sum float64
	var buf [256]float64
	e := buf[:]
	if len(x) > len(buf) {
		e = make([]float64, len(x))
	}
	for i, v := range x {
		e[i] = math.Exp(float64(v) - maxV)
		sum += e[i]
	}
	for i := range x {
		x[i] = float32(e[i] / sum)
	}
}

// LayerNorm is torch.nn.LayerNorm over one row (Ba, Kiros and Hinton 2016):
// dst = (src − mean)/√(var + eps)·gamma + beta with the biased variance;
// beta nil is a norm without bias; dst may be src. The mean and variance are
// summed in float64 and every element computed in float64 and rounded once,
// at every level; the vector versions differ from the pure-Go one only in
// the order of the sums (within 1 ulp).
func LayerNorm(dst, src, gamma, beta []float32, eps float64) {
	d := len(src)
	if d == 0 {
		return
	}
	dst, gamma = dst[:d], gamma[:d]
	if beta != nil {
		beta = beta[:d]
	}
	o := use
	var sum float64
	n := 0
	if o.level != Go {
		n = vectorPart(d, o.lanes)
		if n > 0 {
			sum = o.sum64(&src[0], n)
		}
	}
	for _, v := range src[n:] {
		sum += float64(v)
	}
	mean := sum / float64(d)
	var ss float64
	if n > 0 {
		ss = o.sumSqDev64(&src[0], n, mean)
	}
	for _, v := range src[n:] {
		dv := float64(v) - mean
		ss += dv * dv
	}
	inv := 1 / math.Sqrt(ss/float64(d)+eps)
	n = 0
	if o.level != Go {
		n = vectorPart(d, o.lanes/2)
		if n > 0 {
			var bp *float32
			if beta != nil {
				bp = &beta[0]
			}
			o.norm64(&dst[0], &src[0], &gamma[0], bp, n, mean, inv)
		}
	}
	for k := n; k < d; k++ {
		y := (float64(src[k]) - mean) * inv * float64(gamma[k])
		if beta != nil {
			y += float64(beta[k])
		}
		dst[k] = float32(y)
	}
}

// Add sets dst[i] = a[i] + b[i] (float32); dst may be a or b.
func Add(dst, a, b []float32) {
	binary(dst, a, b, func(o *ops) func(dst, a, b *float32, n int) { return o.add }, func(x, y float32) float32 { return x + y })
}

// Mul sets dst[i] = a[i]·b[i] (float32); dst may be a or b.
func Mul(dst, a, b []float32) {
	binary(dst, a, b, func(o *ops) func(dst, a, b *float32, n int) { return o.mul }, func(x, y float32) float32 { return x * y })
}

func binary(dst, a, b []float32, vec func(*ops) func(dst, a, b *float32, n int), f func(x, y float32) float32) {
	b, dst = b[:len(a)], dst[:len(a)]
	o := use
	n := 0
	if o.level != Go {
		n = vectorPart(len(a), o.lanes)
		if n > 0 {
			vec(o)(&dst[0], &a[0], &b[0], n)
		}
	}
	for i := n; i < len(a); i++ {
		dst[i] = f(a[i], b[i])
	}
}

// scaleSlice sets x[i] *= c.
func scaleSlice(x []float32, c float32) {
	o := use
	n := 0
	if o.level != Go {
		n = vectorPart(len(x), o.lanes)
		if n > 0 {
			o.scale(&x[0], n, c)
		}
	}
	for i := n; i < len(x); i++ {
		x[i] *= c
	}
}
