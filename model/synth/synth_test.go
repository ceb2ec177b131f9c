package synth

import (
	"math"
	"reflect"
	"slices"
	"testing"
)

func TestGenerateDeterministic(t *testing.T) {
	for _, kind := range []string{"2pl", "mirt", "jeirt"} {
		opt := Options{Kind: kind, Models: 20, Items: 150, Rank: 0, Missing: 0.2, Seed: 7}
		r1, t1, err := Generate(opt)
		if err != nil {
			t.Fatal(err)
		}
		r2, t2, err := Generate(opt)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(r1.Label, r2.Label) || !reflect.DeepEqual(r1.Item, r2.Item) || !reflect.DeepEqual(r1.ItemText, r2.ItemText) {
			t.Errorf("%s: same seed gave different responses", kind)
		}
		if !reflect.DeepEqual(t1.Theta, t2.Theta) || !reflect.DeepEqual(t1.Features, t2.Features) || !reflect.DeepEqual(t1.Q, t2.Q) {
			t.Errorf("%s: same seed gave different truth", kind)
		}
		opt.Seed = 8
		r3, _, _ := Generate(opt)
		if reflect.DeepEqual(r1.Label, r3.Label) {
			t.Errorf("%s: seeds 7 and 8 gave the same labels", kind)
		}
		if err := r1.Validate(); err != nil {
			t.Errorf("%s: %v", kind, err)
		}
	}
}

// The labels of observed cells do not depend on the missing rate, so a
// missing-data experiment compares like with like.
func TestMissingIsMCAR(t *testing.T) {
	full, _, _ := Generate(Options{Kind: "2pl", Models: 50, Items: 400, Seed: 3})
	part, _, _ := Generate(Options{Kind: "2pl", Models: 50, Items: 400, Seed: 3, Missing: 0.3})
	if full.Len() != 50*400 {
		t.Fatalf("full: %d cells, want %d", full.Len(), 50*400)
	}
	frac := float64(part.Len()) / float64(full.Len())
	if math.Abs(frac-0.7) > 0.02 {
		t.Errorf("observed fraction %.4f, want 0.7 ± 0.02", frac)
	}
	for c := range part.Label {
		f := int(part.Model[c])*400 + int(part.Item[c])
		if full.Label[f] != part.Label[c] {
			t.Fatalf("cell %d: label differs between missing rates", c)
		}
	}
}

// The empirical mean of the labels agrees with the mean oracle probability,
// and for each kind the truth has the documented shape.
func TestOracleAgreesWithLabels(t *testing.T) {
	cases := []struct {
		opt      Options
		lo, hi   float64 // bounds on the mean accuracy
		theta, a int
	}{
		{Options{Kind: "2pl", Models: 60, Items: 500, Seed: 1}, 0.4, 0.65, 60, 500},
		{Options{Kind: "mirt", Models: 60, Items: 500, Rank: 3, Seed: 1}, 0.4, 0.65, 180, 1500},
		{Options{Kind: "jeirt", Models: 60, Items: 500, FeatureDim: 16, EmbedDim: 4, Seed: 1}, 0.4, 0.7, 0, 0},
	}
	for _, c := range cases {
		r, tr, err := Generate(c.opt)
		if err != nil {
			t.Fatal(err)
		}
		p := 0.0
		for k := range r.Label {
			p += tr.OracleP(int(r.Model[k]), int(r.Item[k]))
		}
		p /= float64(r.Len())
		m := r.MeanCorrect()
		se := math.Sqrt(0.25 / float64(r.Len()))
		if math.Abs(m-p) > 4*se {
			t.Errorf("%s: mean label %.4f, mean oracle %.4f (4 se = %.4f)", c.opt.Kind, m, p, 4*se)
		}
		if m < c.lo || m > c.hi {
			t.Errorf("%s: mean accuracy %.3f outside [%.2f, %.2f]", c.opt.Kind, m, c.lo, c.hi)
		}
		if len(tr.Theta) != c.theta || len(tr.A) != c.a {
			t.Errorf("%s: theta %d, a %d; want %d, %d", c.opt.Kind, len(tr.Theta), len(tr.A), c.theta, c.a)
		}
	}
}

func TestJEIRTTruth(t *testing.T) {
	r, tr, err := Generate(Options{Kind: "jeirt", Models: 40, Items: 300, FeatureDim: 12, EmbedDim: 5, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Features) != 300 || len(tr.Features[0]) != 12 || len(tr.Q) != 300 || len(tr.Q[0]) != 5 || len(tr.M) != 40 || len(tr.M[0]) != 5 {
		t.Fatalf("shapes: features %dx%d q %dx%d m %dx%d", len(tr.Features), len(tr.Features[0]), len(tr.Q), len(tr.Q[0]), len(tr.M), len(tr.M[0]))
	}
	// OracleP is the JE-IRT link of Q and M.
	q, m := tr.Q[17], tr.M[3]
	dot, nq := 0.0, 0.0
	for k := range q {
		dot += q[k] * m[k]
		nq += q[k] * q[k]
	}
	nq = math.Sqrt(nq)
	want := 1 / (1 + math.Exp(-(dot/nq - nq)))
	if got := tr.OracleP(3, 17); math.Abs(got-want) > 1e-12 {
		t.Errorf("OracleP(3,17) = %v, want %v", got, want)
	}
	// Item difficulty (‖q‖) varies.
	lo, hi := math.Inf(1), 0.0
	for _, q := range tr.Q {
		n := 0.0
		for _, v := range q {
			n += v * v
		}
		lo, hi = math.Min(lo, math.Sqrt(n)), math.Max(hi, math.Sqrt(n))
	}
	if lo > 0.4 || hi < 1.5 {
		t.Errorf("‖q‖ ranges over [%.2f, %.2f], want a spread covering [0.4, 1.5]", lo, hi)
	}
	if r.ItemText == nil || r.ItemText[0] == "" || r.ItemGroup[0] == "" {
		t.Errorf("jeirt items have no text or group")
	}
	if r.Models[0] != "model_001" || r.Items[299] != "item_00300" {
		t.Errorf("names %q %q", r.Models[0], r.Items[299])
	}
}

func TestGenerateErrors(t *testing.T) {
	cases := []struct {
		opt  Options
		want string
	}{
		{Options{Kind: "3pl", Models: 2, Items: 2}, `synth: unknown kind "3pl" (want 2pl, mirt or jeirt)`},
		{Options{Kind: "2pl", Models: 0, Items: 2}, "synth: need at least one model and one item (got 0 models, 2 items)"},
		{Options{Kind: "2pl", Models: 2, Items: 2, Missing: 1}, "synth: missing rate 1 is not in [0, 1)"},
		{Options{Kind: "2pl", Models: 2, Items: 2, Rank: 3}, "synth: kind 2pl has rank 1 (use kind mirt for rank 3)"},
	}
	for _, c := range cases {
		_, _, err := Generate(c.opt)
		if err == nil || err.Error() != c.want {
			t.Errorf("%+v: error %v, want %q", c.opt, err, c.want)
		}
	}
}

// In the jeirt generator ‖q‖ is the difficulty: items with larger norms are
// answered correctly less often, and the model rows spread abilities.
func TestJEIRTNormIsDifficulty(t *testing.T) {
	r, tr, err := Generate(Options{Kind: "jeirt", Models: 100, Items: 800, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	acc := r.ItemAccuracy()
	norms := make([]float64, len(tr.Q))
	for j, q := range tr.Q {
		for _, v := range q {
			norms[j] += v * v
		}
		norms[j] = math.Sqrt(norms[j])
	}
	if c := corr(norms, acc); c > -0.6 {
		t.Errorf("corr(‖q‖, item accuracy) = %.3f, want < -0.6", c)
	}
	ma := r.ModelAccuracy()
	lo, hi := 1.0, 0.0
	for _, a := range ma {
		lo, hi = math.Min(lo, a), math.Max(hi, a)
	}
	if hi-lo < 0.25 {
		t.Errorf("model accuracies span [%.3f, %.3f], want a spread of at least 0.25", lo, hi)
	}
}

func corr(x, y []float64) float64 {
	n := float64(len(x))
	var mx, my float64
	for i := range x {
		mx += x[i] / n
		my += y[i] / n
	}
	var sxy, sxx, syy float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
		syy += (y[i] - my) * (y[i] - my)
	}
	return sxy / math.Sqrt(sxx*syy)
}

// A graded or several-trial jeirt benchmark has the same item texts as the
// 0/1 one of the same seed (the next step trains on text, not on ids), and
// its cells do not change with them.
func TestJEIRTGradedHasTexts(t *testing.T) {
	base, _, err := Generate(Options{Kind: "jeirt", Models: 6, Items: 12, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, opt := range []Options{{Levels: 11}, {Trials: 5}} {
		opt.Kind, opt.Models, opt.Items, opt.Seed = "jeirt", 6, 12, 3
		r, _, err := Generate(opt)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.ItemText) != 12 || r.ItemText[0] == "" || !slices.Equal(r.ItemText, base.ItemText) || !slices.Equal(r.ItemGroup, base.ItemGroup) {
			t.Errorf("%+v: texts %q, want %q", opt, r.ItemText, base.ItemText)
		}
	}
}
