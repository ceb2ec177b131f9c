package simd

import "math"

// Sigmoid sets dst[i] = 1/(1 + exp(−src[i])), the logistic function; dst
// may be src. It is computed as e/(1 + e) for x < 0 and 1/(1 + e) otherwise,
// e = exp(−|x|), so that neither side overflows. The vector versions are
// within 4 ulp of the float64 value rounded to float32 (for results in
// float32's normal range; within 2⁻¹⁴⁹ below); sigmoid(+Inf) = 1,
// sigmoid(−Inf) = 0, NaN stays NaN.
func Sigmoid(dst, src []float32) {
	unaryVec(dst, src, func(o *ops) func(dst, src *float32, n int) { return o.sigmoid },
		func(x float32) float32 { return float32(sigmoid64(float64(x))) })
}

// Exp64 sets dst[i] = exp(src[i]) in float64; dst may be src. The vector
// versions are within 2 ulp of exp64 (math.Exp below 709) in the normal
// range and within one subnormal step below it; exp(−Inf) = 0,
// exp(+Inf) = +Inf, NaN stays NaN.
func Exp64(dst, src []float64) {
	unaryVec(dst, src, func(o *ops) func(dst, src *float64, n int) { return o.exp64 }, exp64)
}

// exp64 is math.Exp, but for x in (709, 709.78], where Go's amd64 assembly
// math.Exp returns +Inf (it overflows from about 709.5 on; exp(709.78) is
// 1.8e308): there exp(x/2)², within 3 ulp.
func exp64(x float64) float64 {
	if x > 709 && x <= 709.79 {
		h := math.Exp(x / 2)
		return h * h
	}
	return math.Exp(x)
}

// sigmoid64 is the logistic function in float64, as Sigmoid computes it.
func sigmoid64(x float64) float64 {
	e := exp64(-math.Abs(x))
	if x < 0 {
		return e / (1 + e)
	}
	return 1 / (1 + e)
}

// Sigmoid64 sets dst[i] = 1/(1 + exp(−src[i])) in float64, as Sigmoid
// does; dst may be src. The vector versions are within 4 ulp of sigmoid64.
func Sigmoid64(dst, src []float64) {
	unaryVec(dst, src, func(o *ops) func(dst, src *float64, n int) { return o.sigmoid64 }, sigmoid64)
}
