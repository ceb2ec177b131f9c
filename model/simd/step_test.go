package simd

import (
	"math"
	"math/rand/v2"
	"testing"
)

// stepLengths cover no vector, one partial vector, whole vectors and a rest
// at both widths.
var stepLengths = []int{0, 1, 7, 8, 15, 16, 17, 31, 33, 100, 1027}

// withSpecials32 replaces a few entries of x by NaN, ±Inf and zeros.
func withSpecials32(rng *rand.Rand, x []float32) {
	special := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1))}
	for i := range x {
		if rng.IntN(50) == 0 {
			x[i] = special[rng.IntN(len(special))]
		}
	}
}

func sameBits32(a, b []float32) int {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) && !(a[i] != a[i] && b[i] != b[i]) {
			return i
		}
	}
	return -1
}

// TestAdamWUpdate checks the update against torch.optim.AdamW's formula in
// float64 (the pure-Go level, within float32 rounding) and every level
// against the pure-Go one bit for bit, NaN and Inf gradients included.
func TestAdamWUpdate(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 31))
	const lr, wd, b1, b2, eps, step = 1e-3, 0.3, 0.9, 0.999, 1e-8, 7
	bc1, bc2 := 1-math.Pow(b1, step), 1-math.Pow(b2, step)
	a := AdamW{Beta1: b1, Beta2: b2, Decay: float32(1 - lr*wd), StepSize: float32(lr / bc1), InvSqrtBC2: float32(1 / math.Sqrt(bc2)), Eps: eps}
	for _, n := range stepLengths {
		p0, g := randSlice(rng, n), randSlice(rng, n)
		m0, v0 := randSlice(rng, n), randSlice(rng, n)
		for i := range v0 {
			v0[i] = v0[i] * v0[i] // a second moment is ≥ 0
			if i%9 == 0 {
				g[i] *= 1e-20 // tiny gradients, where ε matters
			}
		}
		// The formula in float64 (clean inputs).
		p, m, v := append([]float32(nil), p0...), append([]float32(nil), m0...), append([]float32(nil), v0...)
		old := SetLevel(Go)
		a.Update(p, g, m, v)
		SetLevel(old)
		// β1, β2 as float32 holds them (1 − β2 in float32 is 1.3e-5 off 0.001).
		f1, f2 := float64(float32(b1)), float64(float32(b2))
		for i := range p {
			mi := f1*float64(m0[i]) + float64(1-float32(b1))*float64(g[i])
			vi := f2*float64(v0[i]) + float64(1-float32(b2))*float64(g[i])*float64(g[i])
			upd := lr / bc1 * mi / (math.Sqrt(vi)/math.Sqrt(bc2) + eps)
			want := float64(p0[i])*(1-lr*wd) - upd
			if d := math.Abs(float64(p[i]) - want); d > 1e-6*(math.Abs(float64(p0[i]))+math.Abs(upd)) {
				t.Fatalf("n=%d: p[%d] = %g, want %g (torch's formula; p0 %g m0 %g v0 %g g %g upd %g)", n, i, p[i], want, p0[i], m0[i], v0[i], g[i], upd)
			}
		}
		withSpecials32(rng, g)
		forLevels(t, func(t *testing.T) {
			ref := [3][]float32{append([]float32(nil), p0...), append([]float32(nil), m0...), append([]float32(nil), v0...)}
			a.updateGo(ref[0], g, ref[1], ref[2])
			got := [3][]float32{append([]float32(nil), p0...), append([]float32(nil), m0...), append([]float32(nil), v0...)}
			a.Update(got[0], g, got[1], got[2])
			for k, name := range []string{"p", "m", "v"} {
				if i := sameBits32(got[k], ref[k]); i >= 0 {
					t.Fatalf("n=%d: %s[%d] = %g, the pure-Go loop gives %g (g = %g)", n, name, i, got[k][i], ref[k][i], g[i])
				}
			}
		})
	}
}

func TestAxpy(t *testing.T) {
	rng := rand.New(rand.NewPCG(32, 33))
	for _, n := range stepLengths {
		x, y0 := randSlice(rng, n), randSlice(rng, n)
		withSpecials32(rng, x)
		forLevels(t, func(t *testing.T) {
			want := append([]float32(nil), y0...)
			for i := range want {
				want[i] += float32(-0.37 * x[i])
			}
			got := append([]float32(nil), y0...)
			Axpy(got, x, -0.37)
			if i := sameBits32(got, want); i >= 0 {
				t.Fatalf("n=%d: [%d] = %g, want %g", n, i, got[i], want[i])
			}
		})
	}
}

// TestDot64 checks Dot64 against the index-order float64 sum within the
// bound of a reordered sum, and NaN and Inf through it.
func TestDot64(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 35))
	forLevels(t, func(t *testing.T) {
		for _, n := range stepLengths {
			x, y := randSlice(rng, n), randSlice(rng, n)
			var want, mag float64
			for i := range x {
				want += float64(x[i]) * float64(y[i])
				mag += math.Abs(float64(x[i]) * float64(y[i]))
			}
			got := Dot64(x, y)
			if d := math.Abs(got - want); d > float64(n)*0x1p-53*mag {
				t.Fatalf("n=%d: %g, want %g (apart %g, bound %g)", n, got, want, d, float64(n)*0x1p-53*mag)
			}
			if n == 0 {
				continue
			}
			for _, c := range []struct {
				v    float32
				want float64
			}{{float32(math.NaN()), math.NaN()}, {float32(math.Inf(1)), math.Inf(int(math.Copysign(1, float64(y[n-1]))))}} {
				x2 := append([]float32(nil), x...)
				x2[n-1] = c.v
				if got := Dot64(x2, y); !(got == c.want || (math.IsNaN(got) && math.IsNaN(c.want))) {
					t.Fatalf("n=%d with %g: %g, want %g", n, c.v, got, c.want)
				}
			}
		}
	})
}

// inputsLog1p are inputs over log1p's domain and past it: random values on
// many scales, and the edges.
func inputsLog1p(rng *rand.Rand, n int) []float64 {
	x := make([]float64, 0, n+40)
	for i := 0; i < n; i++ {
		var v float64
		switch i % 4 {
		case 0:
			v = -1 + rng.Float64()*2 // (−1, 1)
		case 1:
			v = math.Ldexp(rng.Float64(), -rng.IntN(1070)) // tiny, down to the subnormals
			if rng.IntN(2) == 0 {
				v = -v
			}
		case 2:
			v = math.Ldexp(1+rng.Float64(), rng.IntN(1023)) // large
		default:
			v = -1 + math.Ldexp(rng.Float64(), -rng.IntN(60)) // just above −1
		}
		x = append(x, v)
	}
	return append(x, 0, math.Copysign(0, -1), -1, math.Nextafter(-1, 0), -1.5, -2, -math.MaxFloat64, 1, 1e-17, -1e-17, 1e-300,
		math.SmallestNonzeroFloat64, 0x1p-1022, math.Sqrt2-1, math.Sqrt2/2-1, 0x1p53, math.MaxFloat64,
		math.Inf(1), math.Inf(-1), math.NaN())
}

// TestLog1pSoftplus64 checks Log1p64 against math.Log1p within 2 ulp and
// Softplus64 against softplus64 within 4 ulp (absolute 2⁻¹⁰⁷⁴ for
// subnormal results), with the edges exact.
func TestLog1pSoftplus64(t *testing.T) {
	forLevels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(36, 37))
		x := inputsLog1p(rng, 200003)
		sp := inputs64(rng, 200003, 800)
		sp = append(sp, -37, -36.9, 36.9, 37, -745, 745, 1e300, -1e300)
		for _, c := range []struct {
			name  string
			f     func(dst, src []float64)
			ref   func(float64) float64
			src   []float64
			bound float64
		}{{"log1p", Log1p64, math.Log1p, x, 2}, {"softplus", Softplus64, softplus64, sp, 4}} {
			dst := make([]float64, len(c.src))
			c.f(dst, c.src)
			worst, worstAt := 0.0, 0.0
			for i, v := range c.src {
				want := c.ref(v)
				if math.Abs(want) < 0x1p-1022 && want != 0 {
					if d := math.Abs(dst[i] - want); d > math.SmallestNonzeroFloat64 {
						t.Fatalf("%s(%g) = %g, want %g", c.name, v, dst[i], want)
					}
					continue
				}
				u := ulps64(dst[i], want)
				if u > worst {
					worst, worstAt = u, v
				}
				if u > c.bound {
					t.Fatalf("%s(%g) = %g, want %g (%g ulp)", c.name, v, dst[i], want, u)
				}
			}
			t.Logf("%s: worst %g ulp (at %g) over %d inputs", c.name, worst, worstAt, len(c.src))
			in := append([]float64(nil), c.src[:37]...) // in place: the same values
			c.f(in, in)
			for i := range in {
				if math.Float64bits(in[i]) != math.Float64bits(dst[i]) {
					t.Fatalf("in place %s(%g) = %g, apart %g", c.name, c.src[i], in[i], dst[i])
				}
			}
		}
	})
}
