package simd

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"testing"

	"github.com/jeirt/jeirt/model/simd/internal/asmgen"
	"gonum.org/v1/gonum/blas"
)

var _ blas.Float32 = BLAS{}

// forLevels runs f at every level this CPU has, the pure-Go one included.
func forLevels(t *testing.T, f func(t *testing.T)) {
	for _, l := range Levels() {
		t.Run(l.String(), func(t *testing.T) {
			old := SetLevel(l)
			defer SetLevel(old)
			if Current() != l {
				t.Fatalf("running at %v, want %v", Current(), l)
			}
			f(t)
		})
	}
}

func TestAssemblyUpToDate(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("amd64 only")
	}
	got, err := os.ReadFile("simd_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, asmgen.Source()) {
		t.Fatal("simd_amd64.s differs from internal/asmgen's output: run go generate ./model/simd")
	}
}

func TestLevels(t *testing.T) {
	ls := Levels()
	if ls[0] != Go || ls[len(ls)-1] != detected {
		t.Fatalf("levels %v, detected %v", ls, detected)
	}
	t.Logf("levels %v, running at %v", ls, Current())
}

// refGemm is C = alpha·op(A)·op(B) + beta·C (+ bias) in float64, with the
// error bound of each element: (k+4)·2⁻²⁴ times the sum of the magnitudes of
// its terms, the bound of a float32 dot product of k terms (Higham 2002,
// §3.1) with room for alpha, beta and the bias.
func refGemm(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, bias []float32) (ref, bound []float64) {
	ref, bound = make([]float64, m*n), make([]float64, m*n)
	at := func(i, p int) float64 {
		if tA {
			return float64(a[p*lda+i])
		}
		return float64(a[i*lda+p])
	}
	bt := func(p, j int) float64 {
		if tB {
			return float64(b[j*ldb+p])
		}
		return float64(b[p*ldb+j])
	}
	u := math.Ldexp(1, -24)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s, mag float64
			for p := 0; p < k; p++ {
				s += at(i, p) * bt(p, j)
				mag += math.Abs(at(i, p) * bt(p, j))
			}
			s *= float64(alpha)
			mag *= math.Abs(float64(alpha))
			if bias != nil {
				s += float64(bias[j])
				mag += math.Abs(float64(bias[j]))
			}
			if beta != 0 {
				s += float64(beta) * float64(c[i*ldc+j])
				mag += math.Abs(float64(beta) * float64(c[i*ldc+j]))
			}
			ref[i*n+j] = s
			bound[i*n+j] = float64(k+4)*u*mag + 1e-30
		}
	}
	return ref, bound
}

func randSlice(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	return x
}

// gemmCase is one product with strides padded by pad and C prefilled, so
// that the test sees writes outside op(A)·op(B)'s m×n.
type gemmCase struct {
	tA, tB      bool
	m, n, k     int
	pad         int
	alpha, beta float32
	bias        bool
}

func (tc gemmCase) String() string {
	return fmt.Sprintf("tA=%v tB=%v m=%d n=%d k=%d pad=%d alpha=%g beta=%g bias=%v", tc.tA, tc.tB, tc.m, tc.n, tc.k, tc.pad, tc.alpha, tc.beta, tc.bias)
}

func runGemmCase(t *testing.T, rng *rand.Rand, tc gemmCase, threads ...int) {
	t.Helper()
	rowA, colA := tc.m, tc.k
	if tc.tA {
		rowA, colA = tc.k, tc.m
	}
	rowB, colB := tc.k, tc.n
	if tc.tB {
		rowB, colB = tc.n, tc.k
	}
	lda, ldb, ldc := max(1, colA+tc.pad), max(1, colB+tc.pad), tc.n+tc.pad
	a := randSlice(rng, max(1, rowA*lda))
	b := randSlice(rng, max(1, rowB*ldb))
	c := randSlice(rng, max(1, tc.m*ldc))
	if tc.beta == 0 {
		for i := range c {
			c[i] = float32(math.NaN()) // beta 0 must not read C
		}
	}
	var bias []float32
	if tc.bias {
		bias = randSlice(rng, tc.n)
	}
	c0 := c
	ref, bound := refGemm(tc.tA, tc.tB, tc.m, tc.n, tc.k, tc.alpha, a, lda, b, ldb, tc.beta, c, ldc, bias)
	tr := func(x bool) blas.Transpose {
		if x {
			return blas.Trans
		}
		return blas.NoTrans
	}
	for _, th := range threads {
		got := append([]float32(nil), c0...)
		g := newGemm(tr(tc.tA), tr(tc.tB), tc.m, tc.n, tc.k, tc.alpha, a, lda, b, ldb, tc.beta, got, ldc)
		g.bias = bias
		g.run(th)
		checkGemm(t, tc, th, got, c0, ldc, ref, bound)
	}
}

func checkGemm(t *testing.T, tc gemmCase, threads int, c, c0 []float32, ldc int, ref, bound []float64) {
	t.Helper()
	for i := 0; i < tc.m; i++ {
		for j := 0; j < ldc && i*ldc+j < len(c); j++ {
			got := c[i*ldc+j]
			if j >= tc.n {
				if math.Float32bits(got) != math.Float32bits(c0[i*ldc+j]) {
					t.Fatalf("%v threads=%d: C[%d,%d] outside the product changed from %g to %g", tc, threads, i, j, c0[i*ldc+j], got)
				}
				continue
			}
			want, tol := ref[i*tc.n+j], bound[i*tc.n+j]
			if !(math.Abs(float64(got)-want) <= tol) {
				t.Fatalf("%v threads=%d: C[%d,%d] = %g, want %g ± %.3g", tc, threads, i, j, got, want, tol)
			}
		}
	}
}

// TestSgemm compares every level's product with the float64 reference on
// edge sizes (1, odd, one off the tiles of every level), both transposes,
// padded strides, alpha 0 and ±, beta 0, 1 and other, with and without a
// bias, on 1 to 3 goroutines.
func TestSgemm(t *testing.T) {
	forLevels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, uint64(Current())))
		sizes := []int{1, 2, 3, 5, 8, 11, 12, 13, 16, 17, 31, 32, 33, 47, 65}
		for trial := 0; trial < 300; trial++ {
			tc := gemmCase{
				tA: rng.IntN(2) == 1, tB: rng.IntN(2) == 1,
				m: sizes[rng.IntN(len(sizes))], n: sizes[rng.IntN(len(sizes))], k: sizes[rng.IntN(len(sizes))],
				pad:   []int{0, 0, 1, 7}[rng.IntN(4)],
				alpha: []float32{1, 1, -0.75, 2.5}[rng.IntN(4)],
				beta:  []float32{0, 0, 1, 0.5, -2}[rng.IntN(5)],
				bias:  rng.IntN(3) == 0,
			}
			runGemmCase(t, rng, tc, 1+rng.IntN(3))
		}
		// Larger than one cache block in each direction, and alpha 0.
		for _, tc := range []gemmCase{
			{m: 300, n: 1100, k: 530, alpha: 1, beta: 0, bias: true},
			{tA: true, m: 157, n: 833, k: 600, pad: 3, alpha: -1, beta: 1},
			{tB: true, m: 700, n: 97, k: 257, alpha: 0.5, beta: 0.25},
			{tA: true, tB: true, m: 61, n: 70, k: 1030, pad: 2, alpha: 1, beta: 0},
			{m: 37, n: 41, k: 19, alpha: 0, beta: 0.5, bias: true},
			{m: 37, n: 41, k: 0, alpha: 1, beta: 0},
		} {
			runGemmCase(t, rng, tc, 1, 2, 5)
		}
	})
}

// TestSgemmFewRows checks the few-rows paths (A·Bᵀ on at most dotMaxRows
// rows, the depth a multiple of the lanes: x·Wᵀ on a few inputs; op(A)·B on
// at most rowsMaxRows: gy·W) at many row counts, column counts off their
// groups, each beta, with and without a bias, padded strides, on 1 to 3
// goroutines; and NaN and ±Inf through the first.
func TestSgemmFewRows(t *testing.T) {
	forLevels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(11, uint64(Current())))
		for _, m := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 18, 31, dotMaxRows, dotMaxRows + 1} {
			for _, n := range []int{1, 3, 4, 5, 8, 37, 300} {
				for _, k := range []int{16, 48, 384} {
					tc := gemmCase{tB: true, m: m, n: n, k: k,
						pad:   []int{0, 0, 1, 7}[rng.IntN(4)],
						alpha: []float32{1, 1, -0.75}[rng.IntN(3)],
						beta:  []float32{0, 1, 0.5}[rng.IntN(3)],
						bias:  rng.IntN(2) == 0,
					}
					runGemmCase(t, rng, tc, 1+rng.IntN(3))
				}
			}
		}
		// The few-rows path with op(B) = B (gy·W): every row count to
		// rowsMaxRows + 1, column counts off the panels of both levels,
		// op(A) either way.
		for _, m := range []int{1, 2, 3, 4, 5, 6, 7, 11, 12, 13, 24, 25, rowsMaxRows - 1, rowsMaxRows, rowsMaxRows + 1} {
			for _, n := range []int{1, 15, 16, 17, 64, 65, 200} {
				tc := gemmCase{tA: rng.IntN(2) == 0, m: m, n: n, k: []int{1, 5, 96, 257}[rng.IntN(4)],
					pad:   []int{0, 0, 1, 7}[rng.IntN(4)],
					alpha: []float32{1, 1, -0.75}[rng.IntN(3)],
					beta:  []float32{0, 1, 0.5}[rng.IntN(3)],
					bias:  rng.IntN(2) == 0,
				}
				runGemmCase(t, rng, tc, 1+rng.IntN(3))
			}
		}
		specials := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))}
		for trial := 0; trial < 40; trial++ {
			m, n, k := 1+rng.IntN(dotMaxRows), 1+rng.IntN(70), 16*(1+rng.IntN(4))
			a, b := randSlice(rng, m*k), randSlice(rng, n*k)
			for q := 0; q < 3; q++ {
				a[rng.IntN(len(a))] = specials[rng.IntN(3)]
				b[rng.IntN(len(b))] = specials[rng.IntN(3)]
			}
			c := make([]float32, m*n)
			Sgemm(blas.NoTrans, blas.Trans, m, n, k, 1, a, k, b, k, 0, c, n)
			ref, bound := refGemm(false, true, m, n, k, 1, a, k, b, k, 0, nil, n, nil)
			for i, got := range c {
				want := ref[i]
				if !(math.IsNaN(want) && math.IsNaN(float64(got))) && !(math.IsInf(want, 0) && float64(got) == want) &&
					!(math.Abs(float64(got)-want) <= bound[i]) {
					t.Fatalf("trial %d (m=%d n=%d k=%d): C[%d] = %g, want %g", trial, m, n, k, i, got, want)
				}
			}
		}
	})
}

// TestSgemmEncoderShapes checks the products of the encoders' layers
// (torch.nn.Linear: op(B) = Wᵀ) at batch 1's 128 rows, through Linear and
// the package Sgemm.
func TestSgemmEncoderShapes(t *testing.T) {
	forLevels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(2, 3))
		for _, s := range [][2]int{{384, 1152}, {1536, 384}} { // more than one block of nc columns, of kc depth
			in, out := s[0], s[1]
			runGemmCase(t, rng, gemmCase{tB: true, m: 128, n: out, k: in, alpha: 1, bias: true}, runtime.GOMAXPROCS(0))
		}
		x, w, bias := randSlice(rng, 40*96), randSlice(rng, 72*96), randSlice(rng, 72)
		y := make([]float32, 40*72)
		Linear(y, x, w, bias, 40, 96, 72)
		ref, bound := refGemm(false, true, 40, 72, 96, 1, x, 96, w, 96, 0, nil, 72, bias)
		for i := range y {
			if math.Abs(float64(y[i])-ref[i]) > bound[i] {
				t.Fatalf("Linear y[%d] = %g, want %g ± %.3g", i, y[i], ref[i], bound[i])
			}
		}
	})
}

// TestSgemmNaNInf puts NaN and ±Inf into A and B: each element of C is NaN,
// ±Inf or finite exactly when the float64 reference is (no partial sum
// overflows at these magnitudes, so the order of the sums cannot matter).
func TestSgemmNaNInf(t *testing.T) {
	forLevels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(4, 5))
		specials := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))}
		for trial := 0; trial < 40; trial++ {
			m, n, k := 1+rng.IntN(40), 1+rng.IntN(70), 1+rng.IntN(50)
			a, b := randSlice(rng, m*k), randSlice(rng, k*n)
			for q := 0; q < 3; q++ {
				a[rng.IntN(len(a))] = specials[rng.IntN(3)]
				b[rng.IntN(len(b))] = specials[rng.IntN(3)]
			}
			c := make([]float32, m*n)
			Sgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, a, k, b, n, 0, c, n)
			ref, bound := refGemm(false, false, m, n, k, 1, a, k, b, n, 0, nil, n, nil)
			for i, got := range c {
				want := ref[i]
				switch {
				case math.IsNaN(want):
					if !math.IsNaN(float64(got)) {
						t.Fatalf("trial %d: C[%d] = %g, want NaN", trial, i, got)
					}
				case math.IsInf(want, 0):
					if float64(got) != want {
						t.Fatalf("trial %d: C[%d] = %g, want %g", trial, i, got, want)
					}
				default:
					if !(math.Abs(float64(got)-want) <= bound[i]) {
						t.Fatalf("trial %d: C[%d] = %g, want %g", trial, i, got, want)
					}
				}
			}
		}
	})
}

func TestSgemmPanics(t *testing.T) {
	a := make([]float32, 12)
	for _, tc := range []struct {
		name string
		f    func()
	}{
		{"lda", func() { Sgemm(blas.NoTrans, blas.NoTrans, 3, 4, 4, 1, a, 3, a, 4, 0, a, 4) }},
		{"short a", func() { Sgemm(blas.NoTrans, blas.NoTrans, 4, 3, 4, 1, a, 4, a, 3, 0, a, 3) }},
		{"m", func() { Sgemm(blas.NoTrans, blas.NoTrans, -1, 3, 4, 1, a, 4, a, 3, 0, a, 3) }},
		{"transpose", func() { Sgemm(blas.Transpose('x'), blas.NoTrans, 1, 1, 1, 1, a, 1, a, 1, 0, a, 1) }},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", tc.name)
				}
			}()
			tc.f()
		}()
	}
}

// ulps is the distance between a and b in units in the last place of
// float32 (0 when equal, both NaN, or both zero).
func ulps(a, b float32) float64 {
	if a == b || (a != a && b != b) {
		return 0
	}
	if a != a || b != b {
		return math.Inf(1)
	}
	ord := func(x float32) int64 {
		u := int64(math.Float32bits(x))
		if u&(1<<31) != 0 {
			return -(u &^ (1 << 31))
		}
		return u
	}
	d := ord(a) - ord(b)
	if d < 0 {
		d = -d
	}
	return float64(d)
}

// specialInputs are the edge inputs of every elementwise test.
var specialInputs = []float32{0, float32(math.Copysign(0, -1)), 1, -1, float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)),
	math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32, 1e-30, -1e-30, 88.7, 88.8, -87.4, -103, -104, -110, 13, -13, -13.4, -13.6, 14, -14, 20, -20, 0.5, -0.5, 3, -3, 6, -6}

// unaryInputs is n random inputs spread over [−r, r], denser near 0, then
// the specials.
func unaryInputs(rng *rand.Rand, n int, r float64) []float32 {
	x := make([]float32, 0, n+len(specialInputs))
	for i := 0; i < n; i++ {
		v := rng.Float64() * r
		if i%2 == 0 {
			v = rng.NormFloat64() * 2
		}
		if rng.IntN(2) == 0 {
			v = -v
		}
		x = append(x, float32(v))
	}
	return append(x, specialInputs...)
}

// TestExpSigmoid checks Exp and Sigmoid against float64 rounded once:
// within 2 and 4 ulp in float32's normal range, one subnormal step below.
func TestExpSigmoid(t *testing.T) {
	forLevels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(6, 7))
		src := unaryInputs(rng, 200003, 110)
		for _, c := range []struct {
			name  string
			f     func(dst, src []float32)
			ref   func(float64) float64
			bound float64
		}{{"exp", Exp, math.Exp, 2}, {"sigmoid", Sigmoid, sigmoid64, 4}} {
			dst := make([]float32, len(src))
			c.f(dst, src)
			worst := 0.0
			for i, x := range src {
				want := float32(c.ref(float64(x)))
				if want < math.SmallestNonzeroFloat32*(1<<23) { // subnormal: absolute
					if d := math.Abs(float64(dst[i] - want)); d > math.SmallestNonzeroFloat32 {
						t.Fatalf("%s(%g) = %g, want %g", c.name, x, dst[i], want)
					}
					continue
				}
				u := ulps(dst[i], want)
				worst = math.Max(worst, u)
				if u > c.bound {
					t.Fatalf("%s(%g) = %g, want %g (%g ulp)", c.name, x, dst[i], want, u)
				}
			}
			t.Logf("%s: worst %g ulp over %d inputs", c.name, worst, len(src))
		}
	})
}

func TestGELU(t *testing.T) {
	forLevels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(8, 9))
		src := unaryInputs(rng, 300007, 16)
		for x := float32(-14); x <= 14; x += 1.0 / 1024 { // a fine grid too
			src = append(src, x)
		}
		dst := make([]float32, len(src))
		GELU(dst, src)
		worst, worstAt := 0.0, float32(0)
		for i, x := range src {
			want := gelu(x)
			if x < -13 {
				if d := math.Abs(float64(dst[i] - want)); !(d <= 1e-37) && !(math.IsNaN(float64(want)) && math.IsNaN(float64(dst[i]))) {
					t.Fatalf("gelu(%g) = %g, want %g", x, dst[i], want)
				}
				continue
			}
			u := ulps(dst[i], want)
			if u > worst {
				worst, worstAt = u, x
			}
			if u > 8 {
				t.Fatalf("gelu(%g) = %g, want %g (%g ulp)", x, dst[i], want, u)
			}
		}
		t.Logf("worst %g ulp (at x = %g) over %d inputs", worst, worstAt, len(src))
		// In place and at every offset of a vector: the same values.
		in := append([]float32(nil), src[:37]...)
		GELU(in, in)
		for i := range in {
			if math.Float32bits(in[i]) != math.Float32bits(dst[i]) {
				t.Fatalf("in place gelu(%g) = %g, apart %g", src[i], in[i], dst[i])
			}
		}
	})
}

// refSoftmax is softmax in float64, the reference of Softmax.
func refSoftmax(x []float32) []float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = math.Max(m, float64(v))
	}
	out := make([]float64, len(x))
	if math.IsInf(m, -1) {
		return out
	}
	var s float64
	for i, v := range x {
		out[i] = math.Exp(float64(v) - m)
		s += out[i]
	}
	for i := range out {
		out[i] /= s
	}
	return out
}

func TestSoftmax(t *testing.T) {
	forLevels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(10, 11))
		inf := float32(math.Inf(1))
		worst := 0.0
		for trial := 0; trial < 3000; trial++ {
			n := 1 + rng.IntN(300)
			if trial%3 == 0 {
				n = []int{1, 7, 8, 15, 16, 17, 32, 128, 129}[rng.IntN(9)]
			}
			x := make([]float32, n)
			scale := []float64{0.1, 1, 5, 30}[rng.IntN(4)]
			for i := range x {
				x[i] = float32(rng.NormFloat64() * scale)
				if rng.IntN(6) == 0 {
					x[i] = -inf // masked
				}
			}
			switch trial % 50 {
			case 1:
				for i := range x {
					x[i] = -inf
				}
			case 2:
				x[rng.IntN(n)] = float32(math.NaN())
			case 3:
				x[rng.IntN(n)] = inf
			}
			ref := refSoftmax(x)
			orig := append([]float32(nil), x...)
			Softmax(x)
			for i, want := range ref {
				got := float64(x[i])
				if math.IsNaN(want) {
					if !math.IsNaN(got) {
						t.Fatalf("row %v: softmax[%d] = %g, want NaN", orig, i, got)
					}
					continue
				}
				if orig[i] == -inf && got != 0 {
					t.Fatalf("masked entry %d got %g", i, got)
				}
				err := math.Abs(got - want)
				if err > 8*math.Ldexp(want, -24)+2e-9 {
					t.Fatalf("row of %d: softmax[%d] = %g, want %g", n, i, got, want)
				}
				if want > 1e-3 {
					worst = math.Max(worst, err/math.Ldexp(want, -24))
				}
			}
		}
		t.Logf("worst %.2f ulp where p > 1e-3", worst)
	})
}

// refLayerNorm is LayerNorm's pure-Go arithmetic with the sums taken in the
// plain order.
func TestLayerNorm(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 13))
	type row struct{ src, gamma, beta []float32 }
	var rows []row
	for trial := 0; trial < 500; trial++ {
		d := 1 + rng.IntN(200)
		if trial%4 == 0 {
			d = []int{1, 3, 4, 8, 15, 16, 17, 384, 768, 1024}[rng.IntN(10)]
		}
		r := row{src: randSlice(rng, d), gamma: randSlice(rng, d)}
		shift := float32(rng.NormFloat64() * 10)
		for i := range r.src {
			r.src[i] += shift
		}
		if trial%2 == 0 {
			r.beta = randSlice(rng, d)
		}
		switch trial % 40 {
		case 5:
			r.src[rng.IntN(d)] = float32(math.NaN())
		case 6:
			r.src[rng.IntN(d)] = float32(math.Inf(1))
		}
		rows = append(rows, r)
	}
	want := make([][]float32, len(rows))
	old := SetLevel(Go)
	for i, r := range rows {
		want[i] = make([]float32, len(r.src))
		LayerNorm(want[i], r.src, r.gamma, r.beta, 1e-5)
	}
	SetLevel(old)
	forLevels(t, func(t *testing.T) {
		for i, r := range rows {
			got := append([]float32(nil), r.src...)
			LayerNorm(got, got, r.gamma, r.beta, 1e-5) // in place
			for k := range got {
				if u := ulps(got[k], want[i][k]); u > 1 {
					t.Fatalf("row %d (width %d) element %d: %g, want %g (%g ulp)", i, len(r.src), k, got[k], want[i][k], u)
				}
			}
		}
	})
}

func TestAddMul(t *testing.T) {
	forLevels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(14, 15))
		for _, n := range []int{0, 1, 7, 16, 17, 100, 1003} {
			a, b := unaryInputs(rng, n, 100), unaryInputs(rng, n, 100)
			b = b[:len(a)]
			sum, prod := make([]float32, len(a)), make([]float32, len(a))
			Add(sum, a, b)
			Mul(prod, a, b)
			for i := range a {
				if s := a[i] + b[i]; math.Float32bits(s) != math.Float32bits(sum[i]) && !(s != s && sum[i] != sum[i]) {
					t.Fatalf("%g + %g = %g, want %g", a[i], b[i], sum[i], s)
				}
				if p := a[i] * b[i]; math.Float32bits(p) != math.Float32bits(prod[i]) && !(p != p && prod[i] != prod[i]) {
					t.Fatalf("%g · %g = %g, want %g", a[i], b[i], prod[i], p)
				}
			}
		}
	})
}

// TestPacked packs weights at every level and runs LinearPacked at every
// level (the same level reads the panels in place, another repacks them),
// against the float64 reference, and checks that Unpack gives W back.
func TestPacked(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 17))
	for _, s := range [][3]int{{1, 1, 1}, {7, 33, 5}, {128, 100, 300}, {37, 384, 270}, {200, 65, 1100}} {
		rows, out, in := s[0], s[1], s[2]
		x, w, bias := randSlice(rng, rows*in), randSlice(rng, out*in), randSlice(rng, out)
		ref, bound := refGemm(false, true, rows, out, in, 1, x, in, w, in, 0, nil, out, bias)
		for _, packAt := range Levels() {
			old := SetLevel(packAt)
			p := PackLinear(w, out, in)
			SetLevel(old)
			if k, n := p.Dims(); k != in || n != out {
				t.Fatalf("Dims %d, %d for %d × %d", k, n, in, out)
			}
			back := p.Unpack()
			for i := range w {
				if back[i] != w[i] {
					t.Fatalf("Unpack differs at %d", i)
				}
			}
			forLevels(t, func(t *testing.T) {
				y := make([]float32, rows*out)
				LinearPacked(y, x, p, bias, rows)
				for i := range y {
					if !(math.Abs(float64(y[i])-ref[i]) <= bound[i]) {
						t.Fatalf("%v packed at %v: y[%d] = %g, want %g ± %.3g", s, packAt, i, y[i], ref[i], bound[i])
					}
				}
			})
		}
	}
}

// ulps64 is ulps for float64.
func ulps64(a, b float64) float64 {
	if a == b || (a != a && b != b) {
		return 0
	}
	if a != a || b != b {
		return math.Inf(1)
	}
	ord := func(x float64) int64 {
		u := int64(math.Float64bits(x))
		if u < 0 {
			return -(u & math.MaxInt64)
		}
		return u
	}
	d := ord(a) - ord(b)
	if d < 0 {
		d = -d
	}
	return float64(d)
}

// inputs64 are float64 inputs over [−r, r] and the edges of exp's range.
func inputs64(rng *rand.Rand, n int, r float64) []float64 {
	x := make([]float64, 0, n+40)
	for i := 0; i < n; i++ {
		v := rng.Float64() * r
		if i%2 == 0 {
			v = rng.NormFloat64() * 3
		}
		if rng.IntN(2) == 0 {
			v = -v
		}
		x = append(x, v)
	}
	for _, v := range specialInputs {
		x = append(x, float64(v))
	}
	return append(x, 709.78, 709.79, 710, -708.3, -708.5, -744, -745.1, -745.2, -746, math.SmallestNonzeroFloat64, math.MaxFloat64, -math.MaxFloat64)
}

func TestExp64Sigmoid64(t *testing.T) {
	forLevels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(20, 21))
		src := inputs64(rng, 200003, 760)
		for _, c := range []struct {
			name  string
			f     func(dst, src []float64)
			ref   func(float64) float64
			bound float64
		}{
			{"exp", Exp64, exp64, 2},
			{"sigmoid", Sigmoid64, sigmoid64, 4},
		} {
			dst := make([]float64, len(src))
			c.f(dst, src)
			worst := 0.0
			for i, x := range src {
				want := c.ref(x)
				if math.Abs(want) < 0x1p-1022 { // subnormal: absolute
					if d := math.Abs(dst[i] - want); d > math.SmallestNonzeroFloat64 {
						t.Fatalf("%s(%g) = %g, want %g", c.name, x, dst[i], want)
					}
					continue
				}
				u := ulps64(dst[i], want)
				worst = math.Max(worst, u)
				bound := c.bound
				if math.Abs(x) > 709 { // exp64's own x/2 squaring: 3 ulp more
					bound += 3
				}
				if u > bound {
					t.Fatalf("%s(%g) = %g, want %g (%g ulp)", c.name, x, dst[i], want, u)
				}
			}
			t.Logf("%s: worst %g ulp over %d inputs", c.name, worst, len(src))
		}
	})
}

// TestSgemmChunks checks the products that the parallel split cuts into more
// blocks of columns than goroutines (see chunks) and the last partial tile
// of rows computed in place (as the tile of the last mr rows): rows not a
// multiple of any level's mr, columns not of nr, odd depths, one and several
// depth blocks, beta 0 and 1, op(B) packed ahead and not, on 2 and 3
// goroutines, against the float64 reference and bit for bit against one
// goroutine (a split changes no element's order of sums).
func TestSgemmChunks(t *testing.T) {
	forLevels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(30, uint64(Current())))
		for _, s := range [][3]int{{128, 384, 384}, {128, 384, 1536}, {77, 397, 101}, {133, 95, 777}, {65, 1000, 33}, {200, 129, 385}} {
			m, n, k := s[0], s[1], s[2]
			if tn := chunks(use, m, n, k, 2); tn <= 2 && (n+use.nr-1)/use.nr > 2 && m*k*4 <= chunkMaxA {
				t.Fatalf("%v: %d blocks of columns on 2 goroutines", s, tn)
			}
			x, w, bias := randSlice(rng, m*k), randSlice(rng, n*k), randSlice(rng, n)
			c0 := randSlice(rng, m*n)
			p := PackLinear(w, n, k)
			for _, beta := range []float32{0, 1} {
				ref, bound := refGemm(false, true, m, n, k, 1, x, k, w, k, beta, c0, n, bias)
				var one []float32
				for _, threads := range []int{1, 2, 3} {
					for _, packed := range []bool{false, true} {
						got := append([]float32(nil), c0...)
						g := newGemm(blas.NoTrans, blas.Trans, m, n, k, 1, x, k, w, k, beta, got, n)
						if packed {
							g = newGemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, x, k, nil, n, beta, got, n)
							g.pb = p
						}
						g.bias = bias
						g.run(threads)
						for i := range got {
							if !(math.Abs(float64(got[i])-ref[i]) <= bound[i]) {
								t.Fatalf("%v beta %g, %d goroutines, packed %v: C[%d] = %g, want %g ± %.3g", s, beta, threads, packed, i, got[i], ref[i], bound[i])
							}
						}
						if one == nil {
							one = got
							continue
						}
						for i := range got {
							if math.Float32bits(got[i]) != math.Float32bits(one[i]) {
								t.Fatalf("%v beta %g, %d goroutines, packed %v: C[%d] = %g, on one goroutine unpacked %g", s, beta, threads, packed, i, got[i], one[i])
							}
						}
					}
				}
			}
		}
	})
}
