package irtstat

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/eval"
	"github.com/jeirt/jeirt/train/irt"
)

// simulate2PL draws N models θ ~ N(0, 1) answering J items of slope a_j
// (U(0.3, 2) unless slope gives it) and intercept d_j ~ N(0, 1), every
// cell observed unless missing > 0.
func simulate2PL(seed uint64, N, J int, missing float64, slope func(j int, a float64) float64) (*model.Responses, *model.IRT) {
	rng := rand.New(rand.NewPCG(seed, 7))
	truth := &model.IRT{Rank: 1, Sigma: 1, Theta: make([]float64, N), A: make([]float64, J), B: make([]float64, J)}
	r := &model.Responses{}
	for i := 0; i < N; i++ {
		truth.Theta[i] = rng.NormFloat64()
		r.Models = append(r.Models, "m"+itoa(i))
	}
	for j := 0; j < J; j++ {
		truth.A[j] = 0.3 + 1.7*rng.Float64()
		if slope != nil {
			truth.A[j] = slope(j, truth.A[j])
		}
		truth.B[j] = rng.NormFloat64()
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

func itoa(i int) string {
	const digits = "0123456789"
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{digits[i%10]}, b...)
	}
	return string(b)
}

// On data simulated from the model, with the true parameters, infit and
// outfit average 1 and their ZSTDs are about N(0, 1); an item whose answers
// follow a slope of 3 while its parameter says 1 overfits (mean squares well
// below 1), one with answers of slope 0 underfits (well above 1).
func TestInfitOutfitNearOneUnderTheModel(t *testing.T) {
	const N, J = 2000, 40
	r, truth := simulate2PL(1, N, J, 0, func(j int, a float64) float64 {
		switch j {
		case 0:
			return 3
		case 1:
			return 0
		}
		return a
	})
	// The parameters the diagnostics judge against: the truth, except that
	// items 0 and 1 claim slope 1.
	claimed := *truth
	claimed.A = append([]float64(nil), truth.A...)
	claimed.A[0], claimed.A[1] = 1, 1
	items, _ := Diagnose(r, &claimed, 2)
	var in, out, zin, zout []float64
	for j := 2; j < J; j++ {
		in, out = append(in, items[j].Infit), append(out, items[j].Outfit)
		zin, zout = append(zin, items[j].InfitZ), append(zout, items[j].OutfitZ)
	}
	mean := func(v []float64) float64 {
		s := 0.0
		for _, x := range v {
			s += x
		}
		return s / float64(len(v))
	}
	sd := func(v []float64) float64 {
		m, s := mean(v), 0.0
		for _, x := range v {
			s += (x - m) * (x - m)
		}
		return math.Sqrt(s / float64(len(v)-1))
	}
	if m := mean(in); math.Abs(m-1) > 0.02 {
		t.Errorf("mean infit %.4f under the model, want 1 ± 0.02", m)
	}
	if m := mean(out); math.Abs(m-1) > 0.04 {
		t.Errorf("mean outfit %.4f under the model, want 1 ± 0.04", m)
	}
	for name, z := range map[string][]float64{"infit": zin, "outfit": zout} {
		if m, s := mean(z), sd(z); math.Abs(m) > 0.5 || s < 0.6 || s > 1.5 {
			t.Errorf("%s ZSTD mean %.3f sd %.3f under the model, want about N(0, 1)", name, m, s)
		}
	}
	if d := items[0]; !(d.Infit < 0.8 && d.Outfit < 0.8 && d.InfitZ < -3) {
		t.Errorf("slope 3 judged as slope 1: infit %.3f (z %.2f), outfit %.3f (z %.2f); want well below 1", d.Infit, d.InfitZ, d.Outfit, d.OutfitZ)
	}
	if d := items[1]; !(d.Infit > 1.15 && d.Outfit > 1.2 && d.InfitZ > 3) {
		t.Errorf("slope 0 judged as slope 1: infit %.3f (z %.2f), outfit %.3f (z %.2f); want well above 1", d.Infit, d.InfitZ, d.Outfit, d.OutfitZ)
	}
	if f := DiagnosticFlags(items[1]); len(f) != 0 && f[0] == FlagMisfit && items[1].Outfit < MisfitHigh {
		t.Errorf("flagged misfit at outfit %.3f", items[1].Outfit)
	}
	for j := 2; j < J; j++ {
		if f := DiagnosticFlags(items[j]); len(f) > 0 {
			t.Errorf("item %d of the model flagged %v (infit %.3f, outfit %.3f)", j, f, items[j].Infit, items[j].Outfit)
		}
	}
}

// A negative slope judged against a positive one is far outside the
// productive range and flagged, with a negative item-total correlation.
func TestMisfitFlagsAWrongSign(t *testing.T) {
	r, truth := simulate2PL(2, 500, 30, 0, func(j int, a float64) float64 {
		if j == 0 {
			return -1.5
		}
		return a
	})
	claimed := *truth
	claimed.A = append([]float64(nil), truth.A...)
	claimed.A[0] = 1.5
	items, _ := Diagnose(r, &claimed, 1)
	d := items[0]
	f := DiagnosticFlags(d)
	if !(d.Outfit > 2 && d.OutfitZ > 2 && len(f) == 2 && f[0] == FlagMisfit && f[1] == FlagNegativeItemTotal) {
		t.Errorf("slope −1.5 judged as +1.5: infit %.3f, outfit %.3f (z %.2f), rest r %.3f, flags %v; want misfit and negative_item_total",
			d.Infit, d.Outfit, d.OutfitZ, d.RestScore, f)
	}
	if !(d.PointBiserial < -0.2 && d.RestScore < d.PointBiserial) {
		t.Errorf("point-biserial %.3f, rest %.3f: want negative, rest below (the item's own answer is out of its total)", d.PointBiserial, d.RestScore)
	}
}

// On complete data the item-total and rest-score correlations and α are the
// textbook ones, computed here from the dense matrix.
func TestItemTotalAndAlphaDense(t *testing.T) {
	r, truth := simulate2PL(3, 60, 12, 0, nil)
	items, td := Diagnose(r, truth, 1)
	N, J := r.NumModels(), r.NumItems()
	y := make([][]float64, N)
	for i := range y {
		y[i] = make([]float64, J)
	}
	for c := range r.Label {
		y[r.Model[c]][r.Item[c]] = float64(r.Label[c])
	}
	sum := make([]float64, N)
	for i := range y {
		for j := range y[i] {
			sum[i] += y[i][j]
		}
	}
	var itemVar float64
	for j := 0; j < J; j++ {
		col, rest := make([]float64, N), make([]float64, N)
		for i := range y {
			col[i], rest[i] = y[i][j], sum[i]-y[i][j]
		}
		if got, want := items[j].PointBiserial, eval.Pearson(col, sum); math.Abs(got-want) > 1e-12 {
			t.Errorf("item %d: point-biserial %v, want %v", j, got, want)
		}
		if got, want := items[j].RestScore, eval.Pearson(col, rest); math.Abs(got-want) > 1e-12 {
			t.Errorf("item %d: rest-score r %v, want %v", j, got, want)
		}
		itemVar += variance(col)
	}
	want := float64(J) / float64(J-1) * (1 - itemVar/variance(sum))
	if math.Abs(td.Alpha-want) > 1e-12 {
		t.Errorf("alpha %v, want %v", td.Alpha, want)
	}
}

func variance(x []float64) float64 {
	m, s := 0.0, 0.0
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	for _, v := range x {
		s += (v - m) * (v - m)
	}
	return s / float64(len(x))
}

// α with missing cells equals α of the matrix with each gap filled by the
// model's proportion correct, as AlphaMissing says.
func TestAlphaMissingIsPersonMeanImputation(t *testing.T) {
	r, truth := simulate2PL(4, 50, 10, 0.3, nil)
	_, td := Diagnose(r, truth, 1)
	N, J := r.NumModels(), r.NumItems()
	acc := r.ModelAccuracy()
	y := make([][]float64, N)
	for i := range y {
		y[i] = make([]float64, J)
		for j := range y[i] {
			y[i][j] = acc[i]
		}
	}
	for c := range r.Label {
		y[r.Model[c]][r.Item[c]] = float64(r.Label[c])
	}
	sum := make([]float64, N)
	var itemVar float64
	for j := 0; j < J; j++ {
		col := make([]float64, N)
		for i := range y {
			col[i] = y[i][j]
			sum[i] += y[i][j]
		}
		itemVar += variance(col)
	}
	want := float64(J) / float64(J-1) * (1 - itemVar/variance(sum))
	if math.Abs(td.Alpha-want) > 1e-12 {
		t.Errorf("alpha with 30%% missing %v, want %v (person-mean imputation)", td.Alpha, want)
	}
}

// Marginal reliability of a Rasch test of K items at b = 0 against the
// quadrature written out, and its limits: more items, higher reliability.
func TestMarginalReliability(t *testing.T) {
	one := marginalReliability([]float64{1}, []float64{0}, nil, nil, 1)
	// ∫ I/(I+1) φ with I = p(1−p) ≤ 1/4: below 0.2 = 0.25/1.25.
	if !(one > 0.1 && one < 0.2) {
		t.Errorf("one Rasch item: %v, want in (0.1, 0.2)", one)
	}
	a, d := make([]float64, 200), make([]float64, 200)
	for j := range a {
		a[j], d[j] = 1.5, -2+4*float64(j)/199
	}
	if many := marginalReliability(a, d, nil, nil, 1); !(many > 0.95 && many < 1) {
		t.Errorf("200 items: %v, want in (0.95, 1)", many)
	}
	// σ = 2 halves every slope: the same as a/2 at σ = 1.
	if x, y := marginalReliability([]float64{2}, []float64{0.6}, nil, nil, 2), marginalReliability([]float64{1}, []float64{0.3}, nil, nil, 1); math.Abs(x-y) > 1e-15 {
		t.Errorf("σ = 2: %v, want %v", x, y)
	}
}

// On data simulated from a 2PL (500 models, 400 items, slopes U(0.3, 2)) in
// which 5% of the items have a negative slope (half of them) or none (pure
// noise), a cBMM fit flags at least 90% of those items and at most 5% of the
// others, over five seeds (docs/irt.md gives the figures).
func TestDiagnosticsFindBrokenItems(t *testing.T) {
	const N, J = 500, 400
	bad := map[int]string{}
	for j := 0; j < J; j += 20 { // 5%: 20 items, half of each kind
		bad[j] = []string{"negative", "noise"}[(j/20)%2]
	}
	caught, falseFlags := map[string]int{}, 0
	const seeds = 5
	for seed := uint64(1); seed <= seeds; seed++ {
		r, _ := simulate2PL(seed, N, J, 0, func(j int, a float64) float64 {
			switch bad[j] {
			case "negative":
				return -a
			case "noise":
				return 0
			}
			return a
		})
		fit, err := irt.CBMM{Accelerate: true}.Fit(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		an := Analyze(r, fit, AnalysisOptions{})
		for j, f := range an.ItemFlags {
			kind, broken := bad[j]
			switch {
			case broken && f != "":
				caught[kind]++
			case !broken && f != "":
				falseFlags++
			}
			if kind == "negative" && !strings.Contains(f, FlagNegativeItemTotal) {
				t.Errorf("seed %d: negative-slope item %d flagged %q, want negative_item_total among them", seed, j, f)
			}
		}
	}
	nBad, nGood := seeds*len(bad), seeds*(J-len(bad))
	hit := float64(caught["negative"]+caught["noise"]) / float64(nBad)
	fa := float64(falseFlags) / float64(nGood)
	t.Logf("flagged %d/%d negative-slope and %d/%d noise items (%.1f%%); %d/%d false flags (%.2f%%)",
		caught["negative"], nBad/2, caught["noise"], nBad/2, 100*hit, falseFlags, nGood, 100*fa)
	if hit < 0.9 || fa > 0.05 {
		t.Errorf("flagged %.1f%% of the broken items with %.2f%% false flags; want ≥ 90%% and ≤ 5%%", 100*hit, 100*fa)
	}
}
