package irtstat

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/irt"
)

// simulateIRT draws N models θ ~ N(0, 1) answering J items of slope
// slope(rng) and intercept intercept(rng), each cell missing with
// probability missing.
func simulateIRT(seed uint64, N, J int, missing float64, slope, intercept func(*rand.Rand) float64) (*model.Responses, *model.IRT) {
	rng := rand.New(rand.NewPCG(seed, 11))
	truth := &model.IRT{Rank: 1, Sigma: 1, Theta: make([]float64, N), A: make([]float64, J), B: make([]float64, J)}
	r := &model.Responses{}
	for i := range truth.Theta {
		truth.Theta[i] = rng.NormFloat64()
		r.Models = append(r.Models, "m"+itoa(i))
	}
	for j := range truth.A {
		truth.A[j], truth.B[j] = slope(rng), intercept(rng)
		r.Items = append(r.Items, "q"+itoa(j))
	}
	truth.Models, truth.Items = r.Models, r.Items
	for i := 0; i < N; i++ {
		for j := 0; j < J; j++ {
			if rng.Float64() < missing {
				continue
			}
			var y uint8
			if rng.Float64() < truth.Prob(i, j) {
				y = 1
			}
			r.Model, r.Item, r.Label = append(r.Model, int32(i)), append(r.Item, int32(j)), append(r.Label, y)
		}
	}
	return r, truth
}

// zstdMoments are the mean and sd of the infit and outfit ZSTDs of items
// (NaN ones left out) and how many there were.
func zstdMoments(items []ItemDiagnostics) (inMean, inSD, outMean, outSD float64, n int) {
	var in, out []float64
	for _, d := range items {
		if !math.IsNaN(d.InfitZ) && !math.IsNaN(d.OutfitZ) {
			in, out = append(in, d.InfitZ), append(out, d.OutfitZ)
		}
	}
	m := func(v []float64) (mean, sd float64) {
		for _, x := range v {
			mean += x
		}
		mean /= float64(len(v))
		for _, x := range v {
			sd += (x - mean) * (x - mean)
		}
		return mean, math.Sqrt(sd / float64(len(v)-1))
	}
	inMean, inSD = m(in)
	outMean, outSD = m(out)
	return inMean, inSD, outMean, outSD, len(in)
}

// On data simulated from the model, the ZSTDs at the true parameters are
// close to N(0, 1) (mean within ±0.2, sd in 0.8-1.25), in the 1PL and the
// 2PL, with many or few answers per item. With steep items and wide
// intercepts (cells of P near 10⁻⁶, the model sd q of outfit above √2 for
// a third of the items) no function of the mean square is N(0, 1) (it is
// near 1 − 1/n unless a rare surprise makes it huge); there the exact
// form's +q/3 made ZSTD large and positive (mean +1.2, sd 4.9), and the
// test asks that |ZSTD| > 2 be no more common than under N(0, 1). Every
// item's ZSTD has the sign of its mean square minus 1.
func TestZSTDUnderTheModel(t *testing.T) {
	unif := func(lo, hi float64) func(*rand.Rand) float64 {
		return func(rng *rand.Rand) float64 { return lo + (hi-lo)*rng.Float64() }
	}
	normal := func(sd float64) func(*rand.Rand) float64 {
		return func(rng *rand.Rand) float64 { return sd * rng.NormFloat64() }
	}
	for _, tc := range []struct {
		name       string
		N, J       int
		missing    float64
		slope, int func(*rand.Rand) float64
		skewed     bool // outfit's q above √2 for many items: only the tail rate is asked
	}{
		{"1pl", 500, 300, 0, unif(1, 1), normal(1), false},
		{"2pl", 500, 300, 0, unif(0.3, 2), normal(1), false},
		{"2pl few models, 30% missing", 80, 400, 0.3, unif(0.3, 2), normal(1), false},
		{"2pl 134 models, intercepts sd 2", 134, 300, 0, unif(0.3, 2), normal(2), false},
		{"2pl steep, wide intercepts", 300, 300, 0, unif(0.3, 5), normal(3), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, truth := simulateIRT(3, tc.N, tc.J, tc.missing, tc.slope, tc.int)
			items, _ := Diagnose(r, truth, 2)
			im, is, om, os, n := zstdMoments(items)
			t.Logf("%d items: infit ZSTD mean %.3f sd %.3f, outfit ZSTD mean %.3f sd %.3f", n, im, is, om, os)
			tail := 0
			for _, d := range items {
				if math.Abs(d.InfitZ) > 2 || math.Abs(d.OutfitZ) > 2 {
					tail++
				}
			}
			// Two statistics each beyond ±2 with probability 4.6% under
			// N(0, 1): at most 9.1% of the items, with room for the draw.
			if rate := float64(tail) / float64(n); rate > 0.12 {
				t.Errorf("%d of %d items (%.1f%%) have a ZSTD beyond ±2 under the model", tail, n, 100*rate)
			}
			for _, st := range []struct {
				name     string
				mean, sd float64
			}{{"infit", im, is}, {"outfit", om, os}} {
				if tc.skewed && st.name == "outfit" {
					continue
				}
				if math.Abs(st.mean) > 0.2 || st.sd < 0.8 || st.sd > 1.25 {
					t.Errorf("%s ZSTD mean %.3f sd %.3f at the true parameters, want mean within ±0.2 and sd in [0.8, 1.25]", st.name, st.mean, st.sd)
				}
			}
			for j, d := range items {
				if (d.Outfit < 1) != (d.OutfitZ < 0) && d.Outfit != 1 || (d.Infit < 1) != (d.InfitZ < 0) && d.Infit != 1 {
					t.Errorf("item %d: outfit %.4f ZSTD %.3f, infit %.4f ZSTD %.3f: the signs disagree", j, d.Outfit, d.OutfitZ, d.Infit, d.InfitZ)
				}
			}
		})
	}
}

// The sign of ZSTD is that of ms − 1 whatever the model variance, and the
// model sd is capped at √2: on the shipped SWE-bench fit an item with
// outfit 0.456 had ZSTD +20.8 (q ≈ 62) and one with 0.283 had +3,733.
func TestZSTDSignAndCap(t *testing.T) {
	for _, tc := range []struct {
		ms, q2, want float64
	}{
		{1, 0.01, 0},
		{0.456, 62 * 62, (math.Cbrt(0.456) - 1) * 3 / math.Sqrt2},
		{0.283, 1e8, (math.Cbrt(0.283) - 1) * 3 / math.Sqrt2},
		{0.975, 0.1, (math.Cbrt(0.975) - 1) * 3 / math.Sqrt(0.1)}, // Winsteps' example: -0.08 (exact form: +0.03)
		{8, 0.04, (2 - 1) * 3 / 0.2},
		{math.Inf(1), 1, math.Inf(1)},
		{0, 1, -3},
	} {
		got := ZSTD(tc.ms, tc.q2)
		if !(math.Abs(got-tc.want) <= 1e-12*math.Max(1, math.Abs(tc.want))) && got != tc.want {
			t.Errorf("ZSTD(%g, %g) = %g, want %g", tc.ms, tc.q2, got, tc.want)
		}
	}
	for _, q2 := range []float64{1e-6, 1e-3, 0.01, 0.1, 1, 2, 10, 1e4, 1e300} {
		for _, ms := range []float64{0, 1e-9, 0.2, 0.5, 0.9, 0.99, 0.999999, 1.000001, 1.01, 1.5, 3, 1e6} {
			if z := ZSTD(ms, q2); (z < 0) != (ms < 1) || math.IsNaN(z) {
				t.Errorf("ZSTD(%g, %g) = %g: the sign is not that of ms − 1", ms, q2, z)
			}
		}
	}
	for _, q2 := range []float64{0, -1, math.NaN()} {
		if z := ZSTD(1.2, q2); !math.IsNaN(z) {
			t.Errorf("ZSTD(1.2, %g) = %g, want NaN (no model variance)", q2, z)
		}
	}
}

// ZSTDs taken at parameters estimated from the same data are narrower
// than N(0, 1): the fit has already spent degrees of freedom on the
// residuals. This measures by how much (docs/irt.md quotes it): go test
// -run TestZSTDNarrowsAtTheEstimates -v ./train/irtstat.
func TestZSTDNarrowsAtTheEstimates(t *testing.T) {
	const N, J = 500, 300
	var ratio []float64
	for _, tc := range []struct {
		name  string
		slope func(*rand.Rand) float64
	}{
		{"1pl", func(*rand.Rand) float64 { return 1 }},
		{"2pl", func(rng *rand.Rand) float64 { return 0.3 + 1.7*rng.Float64() }},
	} {
		r, truth := simulateIRT(5, N, J, 0, tc.slope, func(rng *rand.Rand) float64 { return rng.NormFloat64() })
		fit, err := irt.CBMM{Model: model.Family(tc.name), Accelerate: true}.Fit(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		ti, _ := Diagnose(r, truth, 2)
		ei, _ := Diagnose(r, fit, 2)
		_, tis, _, tos, _ := zstdMoments(ti)
		em, eis, om, eos, n := zstdMoments(ei)
		t.Logf("%s, %d models x %d items (%d judged): ZSTD sd at the truth infit %.3f outfit %.3f; at the estimates infit %.3f (mean %.3f) outfit %.3f (mean %.3f): %.0f%% and %.0f%% of the truth's",
			tc.name, N, J, n, tis, tos, eis, em, eos, om, 100*eis/tis, 100*eos/tos)
		if !(eis < tis && eos < tos) {
			t.Errorf("%s: ZSTD sd at the estimates infit %.3f outfit %.3f, at the truth %.3f %.3f: want narrower", tc.name, eis, eos, tis, tos)
		}
		ratio = append(ratio, eis/tis)
	}
	// The 2PL's own slope absorbs what infit measures (a slope unlike the
	// claimed one): its infit ZSTD narrows far more than the 1PL's.
	if !(ratio[1] < ratio[0]/2) {
		t.Errorf("infit ZSTD sd at the estimates over at the truth: 1PL %.2f, 2PL %.2f; want the 2PL's under half the 1PL's", ratio[0], ratio[1])
	}
}
