package estimate

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/cat"
	"github.com/jeirt/jeirt/train/irt"
)

// simBank is a rank-1 2PL bank of J items with known parameters.
func simBank(J int, rng *rand.Rand) *model.IRT {
	f := &model.IRT{Rank: 1, Sigma: 1, A: make([]float64, J), B: make([]float64, J), Items: make([]string, J)}
	for j := 0; j < J; j++ {
		f.A[j] = 0.5 + 1.5*rng.Float64()
		f.B[j] = rng.NormFloat64()
		f.Items[j] = "q" + string(rune('a'+j%26)) + string(rune('a'+j/26%26)) + string(rune('a'+j/676))
	}
	return f
}

// simModel draws a model θ ~ N(0, 1) and its answers to every item.
func simModel(f *model.IRT, rng *rand.Rand) (y []float64, full float64) {
	th := rng.NormFloat64()
	y = make([]float64, len(f.B))
	for j := range y {
		if rng.Float64() < model.Sigmoid(th*f.A[j]+f.B[j]) {
			y[j] = 1
		}
		full += y[j] / float64(len(y))
	}
	return y, full
}

// TestRecovery: on models simulated from the bank itself, p-IRT and Blend
// from 50 random answers of 400 land near the true full score, nearer
// than the observed mean, and their 95% intervals cover it about 95% of
// the time.
func TestRecovery(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	f := simBank(400, rng)
	s := &Scorer{Fit: f, Prior: cat.StandardPrior(1), PriorDF: DefaultPriorDF}
	if err := s.Prepare(); err != nil {
		t.Fatal(err)
	}
	const models, K = 400, 50
	mae := map[string]float64{}
	cover := map[string]int{}
	for m := 0; m < models; m++ {
		y, full := simModel(f, rng)
		var a Answers
		for _, j := range rng.Perm(len(y))[:K] {
			a.Items, a.Y = append(a.Items, j), append(a.Y, y[j])
		}
		for _, est := range Estimators {
			sc, err := s.Estimate(est, a, nil)
			if err != nil {
				t.Fatal(err)
			}
			mae[est] += math.Abs(sc[0].Score-full) / models
			if sc[0].Lo <= full && full <= sc[0].Hi {
				cover[est]++
			}
			if sc[0].NAnswered != K || sc[0].N != 400 {
				t.Fatalf("%s: %d answered of %d", est, sc[0].NAnswered, sc[0].N)
			}
		}
	}
	t.Logf("MAE %v, coverage %v of %d", mae, cover, models)
	// The observed mean's error is about 0.8·sqrt(p(1 − p)/K)·sqrt(1 − K/J)
	// ≈ 0.047; p-IRT's is set by θ's posterior sd (≈ 0.25 from 50 answers,
	// ≈ 0.045 of score) and the 350 unanswered items' own noise (≈ 0.02).
	if mae[IRT] > 0.042 || mae[IRT] > 0.85*mae[Mean] {
		t.Errorf("p-IRT MAE %.4f (mean %.4f): want < 0.042 and well below the mean's", mae[IRT], mae[Mean])
	}
	if mae[Blend] > 0.042 || mae[Blend] > 0.85*mae[Mean] {
		t.Errorf("blend MAE %.4f (mean %.4f)", mae[Blend], mae[Mean])
	}
	for _, est := range []string{IRT, Blend, Mean} {
		if c := float64(cover[est]) / models; c < 0.90 || c > 0.99 {
			t.Errorf("%s: 95%% intervals cover %.3f of the true scores", est, c)
		}
	}
}

// TestGPIRT checks gp-IRT against its definition: λ = b²/(b² + v/n) (v/(4n)
// with anchor weights) and the score λ·(observed mean) + (1 − λ)·p-IRT.
func TestGPIRT(t *testing.T) {
	if got, want := GPLambda(0.03, 0.2/100), 0.0009/(0.0009+0.002); math.Abs(got-want) > 1e-15 {
		t.Errorf("GPLambda(0.03, 0.002) = %v, want %v", got, want)
	}
	if GPLambda(0, 0) != 0 || GPLambda(0, 1) != 0 || GPLambda(1, 0) != 1 {
		t.Error("GPLambda's limits")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	f := simBank(200, rng)
	s := &Scorer{Fit: f, Prior: cat.StandardPrior(1), GPBias: 0.04, GPVar: 0.21}
	if err := s.Prepare(); err != nil {
		t.Fatal(err)
	}
	y, _ := simModel(f, rng)
	a := Answers{Items: []int{0, 3, 7, 9, 12, 40, 41, 42, 100, 150}}
	for _, j := range a.Items {
		a.Y = append(a.Y, y[j])
	}
	for _, weighted := range []bool{false, true} {
		div := 10.0
		if weighted {
			a.Weight = []float64{0.2, 0.1, 0.1, 0.1, 0.05, 0.05, 0.1, 0.1, 0.1, 0.1}
			div = 40
		}
		gp, _ := s.Estimate(GPIRT, a, nil)
		pirt, _ := s.Estimate(IRT, a, nil)
		mean, _ := s.Estimate(Mean, a, nil)
		lam := 0.04 * 0.04 / (0.04*0.04 + 0.21/div)
		if math.Abs(gp[0].Lambda-lam) > 1e-12 {
			t.Errorf("weighted %v: λ = %v, want %v", weighted, gp[0].Lambda, lam)
		}
		if want := lam*mean[0].Score + (1-lam)*pirt[0].Score; math.Abs(gp[0].Score-want) > 1e-12 {
			t.Errorf("weighted %v: gp-IRT %v, want %v", weighted, gp[0].Score, want)
		}
		var wm, ws float64
		for k, v := range a.Y {
			wk := 1.0
			if weighted {
				wk = a.Weight[k]
			}
			wm, ws = wm+wk*v, ws+wk
		}
		if math.Abs(mean[0].Score-wm/ws) > 1e-12 {
			t.Errorf("weighted %v: mean %v, want %v", weighted, mean[0].Score, wm/ws)
		}
	}
}

// TestCategories: per-category estimates use only the category's items,
// and an explicit target gives the same estimate as the whole bank.
func TestCategories(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	f := simBank(300, rng)
	group := make([]int, 300)
	for j := range group {
		group[j] = j % 3
	}
	s := &Scorer{Fit: f, Prior: cat.StandardPrior(1), Group: group, Groups: []string{"x", "y", "z"}}
	if err := s.Prepare(); err != nil {
		t.Fatal(err)
	}
	y, _ := simModel(f, rng)
	var a Answers
	for j := 0; j < 300; j += 7 {
		a.Items, a.Y = append(a.Items, j), append(a.Y, y[j])
	}
	sc, err := s.Estimate(IRT, a, nil)
	if err != nil {
		t.Fatal(err)
	}
	all := make([]int, 300)
	for j := range all {
		all[j] = j
	}
	sc2, err := s.Estimate(IRT, a, all)
	if err != nil {
		t.Fatal(err)
	}
	if len(sc) != 4 || sc[1].Group != "x" || sc[1].N != 100 {
		t.Fatalf("categories: %+v", sc)
	}
	var sum float64
	n := 0
	for g := 1; g < 4; g++ {
		sum += sc[g].Score * float64(sc[g].N)
		n += sc[g].NAnswered
		if math.Abs(sc[g].Score-sc2[g].Score) > 1e-9 {
			t.Errorf("category %d: %v with the precomputed sums, %v with a target", g, sc[g].Score, sc2[g].Score)
		}
	}
	if math.Abs(sum/300-sc[0].Score) > 1e-9 || n != sc[0].NAnswered {
		t.Errorf("categories' scores average to %v, the whole bank's is %v", sum/300, sc[0].Score)
	}
	if _, err := s.Estimate(IRT, Answers{Items: []int{1, 1}, Y: []float64{0, 1}}, nil); err == nil {
		t.Error("an item answered twice was accepted")
	}
}

// TestAnchors: three separated clusters of sizes 10, 20 and 30 give one
// anchor in each, weighted by its cluster's share.
func TestAnchors(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var X []float64
	for c, n := range []int{10, 20, 30} {
		for i := 0; i < n; i++ {
			X = append(X, 10*float64(c)+0.1*rng.NormFloat64(), 0.1*rng.NormFloat64())
		}
	}
	anchors, w, err := Anchors(X, 60, 2, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int]float64{}
	for k, i := range anchors {
		c := 0
		if i >= 10 {
			c = 1
		}
		if i >= 30 {
			c = 2
		}
		got[c] += w[k]
	}
	want := map[int]float64{0: 10.0 / 60, 1: 20.0 / 60, 2: 30.0 / 60}
	for c := range want {
		if math.Abs(got[c]-want[c]) > 1e-12 {
			t.Errorf("cluster %d: weight %v, want %v (anchors %v, weights %v)", c, got[c], want[c], anchors, w)
		}
	}
	if _, _, err := Anchors(X, 60, 2, 61, 1); err == nil {
		t.Error("61 anchors of 60 items accepted")
	}
}

// BenchmarkEstimate1000x100000 estimates 1,000 new models, 100 answers
// each, on the items of a 1,000 x 100,000 fit (one op: the thousand models;
// Prepare, once per fit, is timed apart in BenchmarkPrepare100000).
func BenchmarkEstimate1000x100000(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 10))
	f := simBank(100000, rng)
	// ResidSD as irt estimate takes it from the fitted models: blend's
	// residual under its Student-t prior, as by default.
	s := &Scorer{Fit: f, Prior: cat.StandardPrior(1), PriorDF: DefaultPriorDF, ResidSD: 0.05}
	if err := s.Prepare(); err != nil {
		b.Fatal(err)
	}
	answers := make([]Answers, 1000)
	for m := range answers {
		for _, j := range rng.Perm(100000)[:100] {
			answers[m].Items, answers[m].Y = append(answers[m].Items, j), append(answers[m].Y, float64(rng.IntN(2)))
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, a := range answers {
			if _, err := s.Estimate(Default, a, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkPrepare100000(b *testing.B) {
	f := simBank(100000, rand.New(rand.NewPCG(9, 10)))
	for i := 0; i < b.N; i++ {
		s := &Scorer{Fit: f, Prior: cat.StandardPrior(1), PriorDF: DefaultPriorDF}
		if err := s.Prepare(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestFromDraws: with every draw the same, FromDraws is the observed sum
// plus the unanswered items' P over J, and its interval is the Bernoulli
// noise of the unanswered items alone; spread draws widen it.
func TestFromDraws(t *testing.T) {
	J := 4
	P := []float64{0.5, 0.2, 0.9, 0.4, 0.5, 0.2, 0.9, 0.4}
	ans := map[int]float64{0: 1}
	score, lo, hi := FromDraws(P, J, ans, 0.95)
	want := (1 + 0.2 + 0.9 + 0.4) / 4
	sd := math.Sqrt(0.2*0.8+0.9*0.1+0.4*0.6) / 4
	z := math.Sqrt2 * math.Erfinv(0.95)
	if math.Abs(score-want) > 1e-12 || math.Abs(lo-math.Max(0.25, want-z*sd)) > 1e-12 || math.Abs(hi-(want+z*sd)) > 1e-12 {
		t.Errorf("FromDraws = %v [%v, %v], want %v ± %v", score, lo, hi, want, z*sd)
	}
	P2 := []float64{0.5, 0.1, 0.8, 0.3, 0.5, 0.3, 1.0, 0.5}
	s2, lo2, hi2 := FromDraws(P2, J, ans, 0.95)
	if math.Abs(s2-want) > 1e-12 || !(hi2-lo2 > hi-lo) {
		t.Errorf("spread draws: %v [%v, %v]", s2, lo2, hi2)
	}
}

// TestRankEmbedding: each coordinate becomes its rank in (0, 1), tied
// values (the two a = 2, the two d = 0) sharing their mean rank, and on a
// bank where a tenth of the items ran off (d = ±25, as an item every
// fitted model got right or wrong, whose answer is then nearly certain)
// the anchors on the ranks give those items one or two anchors and no
// anchor more than about twice an equal share, where the anchors on (a, d)
// spend more of the budget on them.
func TestRankEmbedding(t *testing.T) {
	f := &model.IRT{Rank: 1, Sigma: 1, A: []float64{1, 2, 2, 0.5}, B: []float64{0, -1, 3, 0}}
	X, dim := RankEmbedding(f)
	// a: 0.5 < 1 < 2 = 2, d: −1 < 0 = 0 < 3 (item by item: a, d)
	want := []float64{0.375, 0.5, 0.75, 0.125, 0.75, 0.875, 0.125, 0.5}
	if dim != 2 || len(X) != len(want) {
		t.Fatalf("dim %d, %d values", dim, len(X))
	}
	for i := range want {
		if math.Abs(X[i]-want[i]) > 1e-12 {
			t.Fatalf("RankEmbedding = %v, want %v", X, want)
		}
	}
	rng := rand.New(rand.NewPCG(11, 12))
	const J, K = 1000, 50
	g := simBank(J, rng)
	for j := 0; j < J/10; j++ {
		g.B[j] = 25 * float64(2*(j%2)-1)
	}
	for _, c := range []struct {
		name         string
		emb          func(*model.IRT) ([]float64, int)
		maxW, runOff [2]float64 // the range each must fall in
	}{
		{"rank", RankEmbedding, [2]float64{0, 2.5 / K}, [2]float64{1, 2}},
		{"raw", IRTEmbedding, [2]float64{0, 1}, [2]float64{5, 10}},
	} {
		X, dim := c.emb(g)
		anchors, w, err := Anchors(X, J, dim, K, 3)
		if err != nil {
			t.Fatal(err)
		}
		var sum, top float64
		runOff := 0.0
		for k, j := range anchors {
			sum += w[k]
			top = math.Max(top, w[k])
			if j < J/10 {
				runOff++
			}
		}
		t.Logf("%s: largest weight %.4f, %v of %d anchors among the run-off items", c.name, top, runOff, K)
		if math.Abs(sum-1) > 1e-12 || top < c.maxW[0] || top > c.maxW[1] || runOff < c.runOff[0] || runOff > c.runOff[1] {
			t.Errorf("%s: weights sum to %v, largest %v (want in %v), %v run-off anchors (want in %v)", c.name, sum, top, c.maxW, runOff, c.runOff)
		}
	}
}

// TestStudentPrior: for models far beyond the fitted population (θ = 3.5
// against a N(0, 1) prior) answering 20 items, Blend under the Student-t
// priors (on θ and on the residual, of scale 0.03) lands nearer their
// full score than under the normal priors; for models drawn from the
// population it is about as good.
func TestStudentPrior(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	f := simBank(400, rng)
	normal := &Scorer{Fit: f, Prior: cat.StandardPrior(1), ResidSD: 0.03}
	robust := &Scorer{Fit: f, Prior: cat.StandardPrior(1), ResidSD: 0.03, PriorDF: DefaultPriorDF}
	for _, s := range []*Scorer{normal, robust} {
		if err := s.Prepare(); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name  string
		theta func() float64
		ratio [2]float64 // the range of MAE(t)/MAE(normal)
	}{
		{"beyond", func() float64 { return 3.5 }, [2]float64{0, 0.9}},
		{"population", rng.NormFloat64, [2]float64{0.95, 1.05}},
	} {
		var errN, errT float64
		for m := 0; m < 300; m++ {
			th := c.theta()
			var a Answers
			var full float64
			pick := map[int]bool{}
			for _, j := range rng.Perm(len(f.B))[:20] {
				pick[j] = true
			}
			for j := range f.B {
				y := 0.0
				if rng.Float64() < model.Sigmoid(th*f.A[j]+f.B[j]) {
					y = 1
				}
				full += y / float64(len(f.B))
				if pick[j] {
					a.Items, a.Y = append(a.Items, j), append(a.Y, y)
				}
			}
			for _, s := range []*Scorer{normal, robust} {
				sc, err := s.Estimate(Blend, a, nil)
				if err != nil {
					t.Fatal(err)
				}
				if s == normal {
					errN += math.Abs(sc[0].Score - full)
				} else {
					errT += math.Abs(sc[0].Score - full)
				}
			}
		}
		r := errT / errN
		t.Logf("%s: MAE %.4f under the t prior, %.4f under the normal (ratio %.3f)", c.name, errT/300, errN/300, r)
		if r < c.ratio[0] || r > c.ratio[1] {
			t.Errorf("%s: MAE ratio t/normal %.3f, want in %v", c.name, r, c.ratio)
		}
	}
	bad := &Scorer{Fit: f, Prior: cat.StandardPrior(1), PriorDF: -1}
	if err := bad.Prepare(); err == nil {
		t.Error("PriorDF -1 accepted")
	}
}

// TestResidPosterior: under the Student-t prior the residual's posterior
// is about the normal's shrinkage β·res near 0, lets a residual far beyond
// τ through nearly whole with a wider posterior, is the observation itself
// when there is no noise, and follows it closely when the noise is tiny.
func TestResidPosterior(t *testing.T) {
	const tau, nv, df = 0.05, 0.0025, 4
	beta := tau * tau / (tau*tau + nv) // 0.5
	if m, v := residPosterior(0, nv, tau, df); math.Abs(m) > 1e-12 || !(v > 0 && v < nv) {
		t.Errorf("res 0: posterior %v, %v", m, v)
	}
	m, v := residPosterior(0.02, nv, tau, df)
	if math.Abs(m/0.02-beta) > 0.1 || math.Abs(v/(beta*nv)-1) > 0.25 {
		t.Errorf("res 0.02: mean %v (normal %v), var %v (normal %v)", m, beta*0.02, v, beta*nv)
	}
	m, v = residPosterior(0.4, nv, tau, df)
	if !(m > 0.35 && m < 0.4 && v > beta*nv) {
		t.Errorf("res 0.4 (8τ): mean %v (normal %v), var %v (normal %v)", m, beta*0.4, v, beta*nv)
	}
	if m, v := residPosterior(-0.3, 0, tau, df); m != -0.3 || v != 0 {
		t.Errorf("no noise: %v, %v", m, v)
	}
	// Noise far below the prior's scale (sd 1e-4, as from many trials): the
	// posterior is the observation, to well within its own sd.
	if m, v := residPosterior(0.0123, 1e-8, 0.5, df); math.Abs(m-0.0123) > 1e-5 || math.Abs(v/1e-8-1) > 0.1 {
		t.Errorf("tiny noise: posterior %v, %v; want about 0.0123, 1e-8", m, v)
	}
}

// TestRank2Posterior: at rank 2 with items that load on both dimensions
// alike, the answers fix θ1 + θ2 and leave θ1 − θ2 to the prior, so the
// posterior is strongly correlated; p-IRT's draws follow that correlation,
// and its score and interval agree with a brute-force grid posterior
// (here ±0.048 against the grid's ±0.054; draws from the standard
// deviations alone gave ±0.090).
func TestRank2Posterior(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	const J = 300
	f := &model.IRT{Rank: 2, Sigma: 1, A: make([]float64, 2*J), B: make([]float64, J), Items: make([]string, J)}
	for j := 0; j < J; j++ {
		a := 0.6 + rng.Float64()
		f.A[2*j], f.A[2*j+1], f.B[j] = a, a*(0.9+0.2*rng.Float64()), rng.NormFloat64()
		f.Items[j] = fmt.Sprintf("q%d", j)
	}
	s := &Scorer{Fit: f, Prior: cat.StandardPrior(2)}
	if err := s.Prepare(); err != nil {
		t.Fatal(err)
	}
	var a Answers
	for j := 0; j < 40; j++ {
		y := 0.0
		if rng.Float64() < model.Sigmoid(0.5*f.A[2*j]+0.5*f.A[2*j+1]+f.B[j]) {
			y = 1
		}
		a.Items, a.Y = append(a.Items, j), append(a.Y, y)
	}
	sc, err := s.Estimate(IRT, a, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The grid: θ on [−5, 5]² in steps of 0.05, prior N(0, I).
	var wsum, m1, m2, bern, obs float64
	for _, y := range a.Y {
		obs += y
	}
	for x1 := -5.0; x1 <= 5; x1 += 0.05 {
		for x2 := -5.0; x2 <= 5; x2 += 0.05 {
			lw := -(x1*x1 + x2*x2) / 2
			for k, j := range a.Items {
				p := model.Sigmoid(x1*f.A[2*j] + x2*f.A[2*j+1] + f.B[j])
				lw += a.Y[k]*math.Log(p) + (1-a.Y[k])*math.Log(1-p)
			}
			w := math.Exp(lw)
			var u, v float64
			for j := 40; j < J; j++ {
				p := model.Sigmoid(x1*f.A[2*j] + x2*f.A[2*j+1] + f.B[j])
				u += p
				v += p * (1 - p)
			}
			wsum += w
			m1 += w * u
			m2 += w * u * u
			bern += w * v
		}
	}
	m1, m2, bern = m1/wsum, m2/wsum, bern/wsum
	score := (obs + m1) / J
	sd := math.Sqrt(m2-m1*m1+bern) / J
	got := (sc[0].Hi - sc[0].Lo) / 2 / s.z()
	t.Logf("p-IRT %.4f ± %.4f, grid %.4f ± %.4f (sd of θ: %v)", sc[0].Score, got, score, sd, sc[0].SE)
	if math.Abs(sc[0].Score-score) > 0.01 || math.Abs(got/sd-1) > 0.2 {
		t.Errorf("p-IRT %.4f ± %.4f, the grid posterior %.4f ± %.4f", sc[0].Score, got, score, sd)
	}
}

// TestValidationBias: on models simulated from a 2PL bank, p-IRT's error on
// the fifth of the models held out of a refit, from half of the 300 items,
// is about the Bernoulli noise of the other half (sd √(Σp(1−p))/150 ≈ 0.03),
// its root mean square above its mean absolute value; two models are too
// few to hold a fifth out.
func TestValidationBias(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	f := simBank(300, rng)
	r := &model.Responses{Items: f.Items}
	for m := 0; m < 100; m++ {
		y, _ := simModel(f, rng)
		r.Models = append(r.Models, fmt.Sprintf("m%d", m))
		for j, v := range y {
			r.AppendCell(int32(m), int32(j), v, 1)
		}
	}
	fitter := irt.CBMM{Rank: 1, MaxIter: 300}
	mae, rms, err := ValidationBias(context.Background(), fitter, r, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("held-out p-IRT error: MAE %.4f, RMS %.4f", mae, rms)
	if !(mae > 0.01 && mae < 0.05 && rms >= mae && rms < 2*mae) {
		t.Errorf("MAE %v, RMS %v", mae, rms)
	}
	two := ModelsOf(r, []int{0, 1})
	if _, _, err := ValidationBias(context.Background(), fitter, two, 0.95); err == nil {
		t.Error("two models: no error")
	}
}
