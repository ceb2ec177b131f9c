//go:build cgo

package cuda

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/cuda/internal/gpu"
	"github.com/jeirt/jeirt/encoder"
)

// TestRoundMantissa checks the TF32 and bfloat16 rounding against values
// worked by hand: ties go to the even neighbour, carries reach the
// exponent, infinities and NaN stay.
func TestRoundMantissa(t *testing.T) {
	for _, c := range []struct {
		x, tf32, bf16 float32
	}{
		{1, 1, 1},
		{1 + 1.0/256, 1 + 1.0/256, 1},               // bf16: a tie, to even (1)
		{1 + 3.0/256, 1 + 3.0/256, 1 + 4.0/256},     // bf16: a tie, to even (1 + 2⁻⁶)
		{1 + 1.0/2048, 1, 1},                        // tf32: a tie, to even
		{1 + 3.0/2048, 1 + 4.0/2048, 1},             // tf32: a tie, to even (up)
		{1 + 1.0/2048 + 1.0/65536, 1 + 2.0/2048, 1}, // tf32: above the tie
		{-(2 - 1.0/4096), -2, -2},                   // carry into the exponent
		{float32(math.Inf(1)), float32(math.Inf(1)), float32(math.Inf(1))},
	} {
		if got := roundTF32(c.x); got != c.tf32 {
			t.Errorf("roundTF32(%v) = %v, want %v", c.x, got, c.tf32)
		}
		if got := roundBF16(c.x); got != c.bf16 {
			t.Errorf("roundBF16(%v) = %v, want %v", c.x, got, c.bf16)
		}
	}
	if nan := float32(math.NaN()); !math.IsNaN(float64(roundBF16(nan))) || !math.IsNaN(float64(roundTF32(nan))) {
		t.Error("NaN did not stay NaN")
	}
}

// TestHarnessToBF16 runs the to_bf16 kernel on an odd count of values (ties,
// carries, subnormals, infinities, NaN and random values) and compares each
// bfloat16 with roundBF16, bit for bit.
func TestHarnessToBF16(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	x := []float32{1 + 1.0/256, 1 + 3.0/256, -(2 - 1.0/4096), 1e-40, -1e-45, 0, float32(math.Inf(-1)), float32(math.NaN())}
	for len(x) < 1001 {
		x = append(x, float32(rng.NormFloat64()*math.Pow(10, rng.Float64()*8-4)))
	}
	bufs := gpu.Buffers{G: host}
	var got []float32
	err := host.Do(func() error {
		src, dst := bufs.Alloc("src", len(x), 4), bufs.Alloc("dst", (len(x)+1)/2, 4)
		if bufs.Err != nil {
			return bufs.Err
		}
		d := newBF16Dense(host, hostBF16{})
		if err := gpu.FirstErr(host.HtoD(src, x), d.toBF16(dst, src, len(x))); err != nil {
			return err
		}
		var err error
		got, err = hostBF16s(dst, len(x))
		return gpu.FirstErr(err, bufs.Free())
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range x {
		want := roundBF16(x[i])
		if math.Float32bits(got[i]) != math.Float32bits(want) && !(math.IsNaN(float64(got[i])) && math.IsNaN(float64(want))) {
			t.Errorf("to_bf16(%g) = %g (%#08x), want %g (%#08x)", x[i], got[i], math.Float32bits(got[i]), want, math.Float32bits(want))
		}
	}
}

// precisionTolerance is the stated tolerance of each reduced precision:
// the largest absolute difference, over the three fixtures' normalised
// vectors, from the float64 references (float32 keeps 2e-6).
var precisionTolerance = map[Precision]float64{TF32: 1e-3, BF16: 5e-3}

// TestHarnessEncoderPrecision runs the three fixtures through the GPU
// forward with TF32- and bfloat16-rounded dense products (the rounding the
// tensor cores apply to their inputs, emulated on the harness; for bf16 the
// to_bf16 kernel itself): within the stated tolerance of the float64
// references, farther from them than float32 (so the fingerprint must
// differ, and does), and (tiny-bert) back within 2e-6 after
// SetPrecision("fp32"). Measured on every sentence (JEIRT_STRESS=full;
// by default harnessSentences): TF32 1.9e-4, 1.6e-4 and 2.8e-4 (bert,
// mpnet, modernbert), bf16 1.6e-3, 9.4e-4 and 2.2e-3.
func TestHarnessEncoderPrecision(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"tiny-bert", "tiny-mpnet", "tiny-modernbert"} {
		t.Run(name, func(t *testing.T) {
			dir, exp := openFixture(t, name)
			cpu, err := encoder.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			dev, err := newEncoder(host, hostDense{}, cpu)
			if err != nil {
				t.Fatal(err)
			}
			defer dev.Close()
			dev.reduced = func(p Precision) (dense, error) { return hostReduced(host, p) }
			exp = harnessFixture(exp)
			texts := make([]string, len(exp.Sentences))
			for i, s := range exp.Sentences {
				texts[i] = s.Text
			}
			worst := func() float64 {
				got, err := dev.Encode(ctx, texts)
				if err != nil {
					t.Fatal(err)
				}
				var w float64
				for i := range texts {
					w = math.Max(w, maxDiff64(got[i], exp.Sentences[i].PooledNormalized))
				}
				return w
			}
			ps := []Precision{TF32, BF16}
			if name == "tiny-bert" {
				ps = append(ps, FP32)
			}
			for _, p := range ps {
				if err := dev.SetPrecision(string(p)); err != nil {
					t.Fatal(err)
				}
				w := worst()
				fp := dev.Fingerprint()
				t.Logf("%s: max |diff| from the float64 reference %.2g over %d texts; fingerprint …%s", p, w, len(texts), fp[max(0, len(fp)-30):])
				if p == FP32 {
					if fp != cpu.Fingerprint() || !(w <= 2e-6) {
						t.Errorf("back in fp32: fingerprint %s, off by %.3g", fp, w)
					}
					continue
				}
				if !strings.HasSuffix(fp, "/precision="+string(p)) || strings.TrimSuffix(fp, "/precision="+string(p)) != cpu.Fingerprint() {
					t.Errorf("%s fingerprint %s (CPU %s)", p, fp, cpu.Fingerprint())
				}
				if !(w <= precisionTolerance[p]) {
					t.Errorf("%s: off by %.3g, tolerance %g", p, w, precisionTolerance[p])
				}
				if !(w > 2e-6) {
					t.Errorf("%s: off by only %.3g, within float32's tolerance: is the rounding applied?", p, w)
				}
			}
		})
	}
}

// TestHarnessEncoderPrecisionErrors: an unknown precision, and a reduced one
// where the device has none, are refused and leave float32 in place.
func TestHarnessEncoderPrecisionErrors(t *testing.T) {
	dir, _ := openFixture(t, "tiny-bert")
	cpu, err := encoder.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	dev, err := newEncoder(host, hostDense{}, cpu)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	if err := dev.SetPrecision("fp16"); err == nil || !strings.Contains(err.Error(), "want fp32, tf32 or bf16") {
		t.Errorf("fp16: %v", err)
	}
	if err := dev.SetPrecision("tf32"); err == nil {
		t.Error("tf32 without reduced-precision products: no error")
	}
	if err := dev.SetPrecision("fp32"); err != nil || dev.Fingerprint() != cpu.Fingerprint() {
		t.Errorf("fp32: %v, fingerprint %s", err, dev.Fingerprint())
	}
}
