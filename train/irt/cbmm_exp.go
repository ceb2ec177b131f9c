package irt

import "math"

// expTable[j] = 2^(j/64).
var expTable = func() (t [64]float64) {
	for j := range t {
		t[j] = math.Exp2(float64(j) / 64)
	}
	return
}()

const (
	expInvLn2x64 = 64 / math.Ln2
	expLn2x64Hi  = 0.01083042469326756    // ln2/64 to 32 bits, so k·hi is exact
	expLn2x64Lo  = 2.9815858269852933e-12 // ln2/64 − expLn2x64Hi
)

// ExpNeg returns e^x for x ≤ 0, within about 2 ulp of math.Exp, in a form
// the hot loop can inline: x = (64m + j)·ln2/64 + r with |r| ≤ ln2/128, so
// e^x = 2^m · 2^(j/64) · e^r with a degree-5 polynomial for e^r (Tang's
// table method; the truncation error r⁶/720 is below 4e-17). Below −708 it
// returns 0 (the true value is under 1e-307).
func ExpNeg(x float64) float64 {
	if x < -708 {
		return 0
	}
	k := int64(x*expInvLn2x64 - 0.5) // round to nearest (x ≤ 0)
	kf := float64(k)
	r := (x - kf*expLn2x64Hi) - kf*expLn2x64Lo
	p := 1 + r*(1+r*(1.0/2+r*(1.0/6+r*(1.0/24+r*(1.0/120)))))
	m := k >> 6 // floor division by 64
	scale := math.Float64frombits(uint64(m+1023) << 52)
	return expTable[k&63] * p * scale
}

// SoftplusSigmoid returns softplus(t) = log(1 + e^t) and sigmoid(t) from one
// exponential, e^−|t| (the logistic loss of cBMM's cells and its derivative).
func SoftplusSigmoid(t float64) (sp, sg float64) {
	e := ExpNeg(-math.Abs(t))
	sg = 1 / (1 + e)
	if t > 0 {
		return t + math.Log(1+e), sg
	}
	return math.Log(1 + e), e * sg
}
