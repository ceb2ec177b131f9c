package cat

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/jeirt/jeirt/model"
)

// randomBank draws a rank-r bank of J items: slopes U(0.3, 2.5) (of either
// sign when signed), intercepts N(0, 1.5²), σ = sigma.
func randomBank(seed uint64, J, r int, sigma float64, signed bool) *Bank {
	rng := rand.New(rand.NewPCG(seed, 1))
	b := &Bank{Rank: r, Sigma: sigma, A: make([]float64, J*r), D: make([]float64, J)}
	for j := 0; j < J; j++ {
		for k := 0; k < r; k++ {
			a := 0.3 + 2.2*rng.Float64()
			if signed && rng.Float64() < 0.3 {
				a = -a
			}
			b.A[j*r+k] = a
		}
		b.D[j] = 1.5 * rng.NormFloat64()
	}
	return b
}

// answerAt draws the answer of a model of ability theta to item j.
func answerAt(b *Bank, j int, theta []float64, rng *rand.Rand) uint8 {
	if rng.Float64() < model.Sigmoid(b.logit(j, theta)) {
		return 1
	}
	return 0
}

// The information of a 2PL item as a function of θ peaks where θ = b = −d/a,
// at a²/(4σ²): 0.25 for the Rasch item (a = 1, σ = 1).
func TestInformationPeaksAtDifficulty(t *testing.T) {
	for _, tc := range []struct{ a, d, sigma float64 }{{1, 0, 1}, {1, -0.7, 1}, {2.5, 1.5, 1}, {0.8, -2, 2}, {-1.5, 0.6, 1}} {
		b := &Bank{Rank: 1, Sigma: tc.sigma, A: []float64{tc.a}, D: []float64{tc.d}}
		diff := -tc.d / tc.a
		bestT, bestI := 0.0, -1.0
		for k := -60000; k <= 60000; k++ {
			th := float64(k) / 10000
			if v := (fisher1{b: b, theta: th}).value(0); v > bestI {
				bestT, bestI = th, v
			}
		}
		if math.Abs(bestT-diff) > 1e-4 {
			t.Errorf("a %v d %v σ %v: information peaks at θ = %v, want b = %v", tc.a, tc.d, tc.sigma, bestT, diff)
		}
		if want := tc.a * tc.a / (4 * tc.sigma * tc.sigma); math.Abs(bestI-want) > 1e-9 {
			t.Errorf("a %v d %v σ %v: peak information %v, want a²/4σ² = %v", tc.a, tc.d, tc.sigma, bestI, want)
		}
	}
	rasch := &Bank{Rank: 1, A: []float64{1}, D: []float64{0.4}}
	if v := (fisher1{b: rasch, theta: -0.4}).value(0); v != 0.25 {
		t.Errorf("Rasch item at θ = b: information %v, want 0.25", v)
	}
}

// The indexed search returns the exhaustive search's item (ties to the
// lower index) for both rank-1 criteria, on banks with zero and negative
// slopes, tied items and most items unavailable.
func TestIndexMatchesExhaustive(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for trial := 0; trial < 300; trial++ {
		J := 1 + rng.IntN(3000)
		b := randomBank(uint64(trial), J, 1, []float64{1, 1.7}[trial%2], false)
		for j := 0; j < J; j++ {
			switch rng.IntN(10) {
			case 0:
				b.A[j] = 0
			case 1:
				b.A[j] = -b.A[j]
			case 2:
				if j > 0 {
					b.A[j], b.D[j] = b.A[j-1], b.D[j-1] // a tie
				}
			}
		}
		idx := make([]int, J)
		for j := range idx {
			idx[j] = j
		}
		ix := newIndex1(b, idx)
		avail := make([]bool, J)
		keep := rng.Float64()
		for j := range avail {
			avail[j] = rng.Float64() < keep
		}
		theta := 3 * rng.NormFloat64()
		for _, c := range []criterion1{fisher1{b: b, theta: theta}, kl1{b: b, theta: theta, delta: 3 / math.Sqrt(float64(1+rng.IntN(50)))}} {
			want, wantV := -1, math.Inf(-1)
			for j := 0; j < J; j++ {
				if avail[j] {
					if v := c.value(j); v > wantV {
						want, wantV = j, v
					}
				}
			}
			got, gotV := ix.best(theta, c, avail)
			if got != want || gotV != wantV {
				t.Fatalf("trial %d (%T, J %d, θ %.3f): index gives item %d (%v), exhaustive %d (%v)", trial, c, J, theta, got, gotV, want, wantV)
			}
		}
	}
}

// Chang and Ying's KL information tends to I(θ)·δ³/3 as the interval
// shrinks, and never exceeds the bound the index prunes with.
func TestKLIsFisherForSmallIntervals(t *testing.T) {
	b := randomBank(4, 50, 1, 1, false)
	for j := 0; j < 50; j++ {
		th := 0.3
		fi := (fisher1{b: b, theta: th}).value(j)
		const delta = 1e-3
		kl := (kl1{b: b, theta: th, delta: delta}).value(j)
		if want := fi * delta * delta * delta / 3; math.Abs(kl-want) > 1e-3*want {
			t.Errorf("item %d: KL %v, want I δ³/3 = %v", j, kl, want)
		}
		big := kl1{b: b, theta: th, delta: 2}
		alpha, dist := math.Abs(b.A[j]), math.Abs(th+b.D[j]/b.A[j])
		if v := big.value(j); v > big.bound(alpha, alpha, dist)*(1+1e-12) {
			t.Errorf("item %d: KL %v above its bound %v", j, v, big.bound(alpha, alpha, dist))
		}
	}
}

// simulate runs one test to its end for a model of ability theta and
// returns the session.
func simulate(t *testing.T, pool *Pool, prior Prior, theta []float64, eligible []bool, seed uint64) *Session {
	t.Helper()
	s, err := pool.Start(prior, eligible, seed)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 99))
	for {
		p, ok := s.Next()
		if !ok {
			break
		}
		if err := s.Answer(p.Item, answerAt(pool.Bank(), p.Item, theta, rng)); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// Every rule: no item asked twice, never more than the budget, only eligible
// items (a model's missing answers are skipped), and the stop reason right.
func TestRulesRespectBudgetEligibilityAndNoRepeat(t *testing.T) {
	for _, r := range []int{1, 2} {
		b := randomBank(5, 400, r, 1, r == 2)
		prior := StandardPrior(r)
		for _, rule := range []string{Fisher, KL, DOptimal, Random} {
			if rule == KL && r > 1 {
				continue
			}
			for _, est := range []string{MAP, EAP} {
				if est == EAP && r > 1 {
					continue
				}
				pool, err := Test{Rule: rule, Estimator: est, Budget: 40}.Prepare(b)
				if err != nil {
					t.Fatal(err)
				}
				eligible := make([]bool, 400)
				for j := range eligible {
					eligible[j] = j%3 != 0
				}
				s := simulate(t, pool, prior, []float64{0.7, -0.4}[:r], eligible, 11)
				seen := map[int]bool{}
				for _, j := range s.Asked() {
					if seen[j] {
						t.Errorf("rank %d %s/%s: item %d asked twice", r, rule, est, j)
					}
					seen[j] = true
					if !eligible[j] {
						t.Errorf("rank %d %s/%s: item %d asked but the model has no answer to it", r, rule, est, j)
					}
				}
				if len(s.Asked()) != 40 || s.Stop() != StopBudget {
					t.Errorf("rank %d %s/%s: %d items, stop %q; want the budget of 40", r, rule, est, len(s.Asked()), s.Stop())
				}
				if err := s.Answer(s.Asked()[0], 1); err == nil {
					t.Errorf("rank %d %s: answering an item again is accepted", r, rule)
				}
				if err := s.Answer(0, 1); err == nil {
					t.Errorf("rank %d %s: answering an ineligible item is accepted", r, rule)
				}
			}
		}
	}
	// Without a budget a test runs until the items run out.
	b := randomBank(6, 30, 1, 1, false)
	pool, _ := Test{}.Prepare(b)
	eligible := make([]bool, 30)
	for j := 0; j < 12; j++ {
		eligible[j*2] = true
	}
	if s := simulate(t, pool, StandardPrior(1), []float64{0}, eligible, 1); len(s.Asked()) != 12 || s.Stop() != StopExhausted {
		t.Errorf("no budget: %d items, stop %q; want all 12 eligible, exhausted", len(s.Asked()), s.Stop())
	}
}

// The standard error falls as items are added: at every step for the
// Fisher rule on a bank with items everywhere, and from the prior sd to
// well below it for every rule.
func TestSEFalls(t *testing.T) {
	b := randomBank(7, 2000, 1, 1, false)
	for _, est := range []string{MAP, EAP} {
		for _, rule := range []string{Fisher, KL, Random} {
			pool, _ := Test{Rule: rule, Estimator: est, Budget: 60}.Prepare(b)
			s, _ := pool.Start(StandardPrior(1), nil, 3)
			rng := rand.New(rand.NewPCG(3, 3))
			prev := s.SE()[0]
			if prev != 1 && est == MAP {
				t.Fatalf("SE before any answer %v, want the prior sd 1", prev)
			}
			start := prev
			rises := 0
			for {
				p, ok := s.Next()
				if !ok {
					break
				}
				s.Answer(p.Item, answerAt(b, p.Item, []float64{1.2}, rng))
				se := s.SE()[0]
				if se > prev*(1+1e-9) {
					rises++
				}
				prev = se
			}
			if rule != Random && rises > 0 {
				t.Errorf("%s/%s: SE rose at %d of 60 steps", rule, est, rises)
			}
			if prev > start/3 {
				t.Errorf("%s/%s: SE %v after 60 items from %v; want below a third", rule, est, prev, start)
			}
		}
	}
}

// Simulated models of known ability: with 25 items the Fisher and KL rules
// land closer to the truth than random items do, and stop at a target SE
// of 0.3 with fewer items.
func TestAdaptiveBeatsRandom(t *testing.T) {
	b := randomBank(8, 1500, 1, 1, false)
	rng := rand.New(rand.NewPCG(8, 8))
	const models = 200
	truth := make([]float64, models)
	for i := range truth {
		truth[i] = rng.NormFloat64()
	}
	rmse := map[string]float64{}
	used := map[string]float64{}
	for _, rule := range []string{Fisher, KL, Random} {
		pool, _ := Test{Rule: rule, Budget: 25}.Prepare(b)
		target, _ := Test{Rule: rule, TargetSE: 0.3}.Prepare(b)
		for i, th := range truth {
			s := simulate(t, pool, StandardPrior(1), []float64{th}, nil, uint64(i))
			d := s.Theta()[0] - th
			rmse[rule] += d * d / models
			s = simulate(t, target, StandardPrior(1), []float64{th}, nil, uint64(i))
			if s.Stop() != StopTargetSE || s.SE()[0] > 0.3 {
				t.Fatalf("%s: stopped %q at SE %v", rule, s.Stop(), s.SE()[0])
			}
			used[rule] += float64(len(s.Asked())) / models
		}
		rmse[rule] = math.Sqrt(rmse[rule])
	}
	t.Logf("RMSE after 25 items: fisher %.3f, kl %.3f, random %.3f; items to SE 0.3: fisher %.1f, kl %.1f, random %.1f",
		rmse[Fisher], rmse[KL], rmse[Random], used[Fisher], used[KL], used[Random])
	for _, rule := range []string{Fisher, KL} {
		if rmse[rule] > 0.8*rmse[Random] {
			t.Errorf("%s RMSE %.3f, random %.3f: want at most 0.8 of random", rule, rmse[rule], rmse[Random])
		}
		if used[rule] > 0.7*used[Random] {
			t.Errorf("%s needs %.1f items for SE 0.3, random %.1f: want at most 0.7 of random", rule, used[rule], used[Random])
		}
	}
}

// MAP is the mode of the posterior and its SE the curvature there; EAP is
// the posterior mean and sd; both checked against a fine grid.
func TestEstimatorsAgainstAGrid(t *testing.T) {
	b := randomBank(9, 30, 1, 1.3, false)
	rng := rand.New(rand.NewPCG(9, 9))
	var items []int
	var y []uint8
	for j := 0; j < 30; j += 2 {
		items = append(items, j)
		y = append(y, answerAt(b, j, []float64{0.8}, rng))
	}
	prior := Prior{Mean: []float64{0.2}, Cov: []float64{1.44}}
	logPost := func(th float64) float64 {
		s := -(th - 0.2) * (th - 0.2) / (2 * 1.44)
		for k, j := range items {
			x := b.logit(j, []float64{th})
			if y[k] == 1 {
				s -= model.Softplus(-x)
			} else {
				s -= model.Softplus(x)
			}
		}
		return s
	}
	mode, top := 0.0, math.Inf(-1)
	var w0, w1, w2 float64
	for k := -400000; k <= 400000; k++ {
		th := float64(k) / 50000
		l := logPost(th)
		if l > top {
			mode, top = th, l
		}
		w := math.Exp(l)
		w0, w1, w2 = w0+w, w1+w*th, w2+w*th*th
	}
	mean := w1 / w0
	sd := math.Sqrt(w2/w0 - mean*mean)
	info := 1 / 1.44
	for _, j := range items {
		a := b.A[j] / 1.3
		info += a * a * psi(b.logit(j, []float64{mode}))
	}
	th, se, err := Estimate(b, prior, MAP, items, y)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(th[0]-mode) > 3e-5 || math.Abs(se[0]-1/math.Sqrt(info)) > 1e-4 {
		t.Errorf("MAP %v (SE %v), want the mode %v (SE %v)", th[0], se[0], mode, 1/math.Sqrt(info))
	}
	th, se, _ = Estimate(b, prior, EAP, items, y)
	if math.Abs(th[0]-mean) > 1e-3 || math.Abs(se[0]-sd) > 1e-3 {
		t.Errorf("EAP %v (SE %v), want the posterior mean %v (sd %v)", th[0], se[0], mean, sd)
	}
	// No answers: the prior.
	th, se, _ = Estimate(b, prior, MAP, nil, nil)
	if th[0] != 0.2 || math.Abs(se[0]-1.2) > 1e-12 {
		t.Errorf("no answers: %v ± %v, want the prior 0.2 ± 1.2", th[0], se[0])
	}
}

// Content balancing keeps each group at its share of the bank: after 20
// items of a bank split 50/30/20, 10, 6 and 4 items, whatever the rule.
func TestContentBalancing(t *testing.T) {
	b := randomBank(10, 600, 1, 1, false)
	b.Groups = []string{"a", "b", "c"}
	b.Group = make([]int, 600)
	for j := range b.Group {
		switch {
		case j%10 < 5:
			b.Group[j] = 0
		case j%10 < 8:
			b.Group[j] = 1
		default:
			b.Group[j] = 2
		}
	}
	for _, rule := range []string{Fisher, KL, Random} {
		pool, err := Test{Rule: rule, Budget: 20, Balance: true}.Prepare(b)
		if err != nil {
			t.Fatal(err)
		}
		s := simulate(t, pool, StandardPrior(1), []float64{0.5}, nil, 2)
		n := make([]int, 3)
		for k, j := range s.Asked() {
			n[b.Group[j]]++
			// At every step each group is within one item of its share.
			for g, share := range []float64{0.5, 0.3, 0.2} {
				cnt := 0
				for _, i := range s.Asked()[:k+1] {
					if b.Group[i] == g {
						cnt++
					}
				}
				if math.Abs(float64(cnt)-share*float64(k+1)) > 1 {
					t.Errorf("%s: after %d items group %s has %d", rule, k+1, b.Groups[g], cnt)
				}
			}
		}
		if n[0] != 10 || n[1] != 6 || n[2] != 4 {
			t.Errorf("%s: groups %v after 20 items, want [10 6 4]", rule, n)
		}
	}
	if _, err := (Test{Balance: true}).Prepare(randomBank(1, 5, 1, 1, false)); err == nil {
		t.Error("balancing a bank without groups is accepted")
	}
}

// Plan gives distinct items, starting with Next's, leaves the session
// unchanged and stops at the budget; at rank 2 the D-optimal plan spreads
// over both dimensions.
func TestPlan(t *testing.T) {
	b := randomBank(11, 500, 1, 1, false)
	pool, _ := Test{Budget: 12}.Prepare(b)
	s, _ := pool.Start(StandardPrior(1), nil, 1)
	s.Answer(3, 1)
	s.Answer(7, 0)
	before := s.Theta()[0]
	plan := s.Plan(20)
	if len(plan) != 10 {
		t.Fatalf("plan of %d items with 10 of the budget left", len(plan))
	}
	next, _ := s.Next()
	seen := map[int]bool{3: true, 7: true}
	for _, p := range plan {
		if seen[p.Item] {
			t.Errorf("plan repeats item %d", p.Item)
		}
		seen[p.Item] = true
	}
	// Fisher plans are the most informative items at θ̂, in order.
	if plan[0] != next {
		t.Errorf("plan starts with %v, Next gives %v", plan[0], next)
	}
	for k := 1; k < len(plan); k++ {
		if plan[k].Value > plan[k-1].Value {
			t.Errorf("plan values rise at %d: %v", k, plan)
		}
	}
	if s.Theta()[0] != before || len(s.Asked()) != 2 || !s.Available(plan[0].Item) {
		t.Error("Plan changed the session")
	}

	// Rank 2, signed loadings: half the items measure dimension 1 only,
	// half dimension 2 only (some negatively). After answers to
	// dimension-1 items, the D-optimal plan turns to dimension 2 first.
	b2 := &Bank{Rank: 2, A: make([]float64, 2*200), D: make([]float64, 200)}
	for j := 0; j < 200; j++ {
		a := []float64{1.5 + float64(j%7)/10, 0}
		if j%2 == 1 {
			a = []float64{0, -1.5 - float64(j%5)/10}
		}
		copy(b2.A[2*j:], a)
		b2.D[j] = float64(j%11)/5 - 1
	}
	pool2, err := Test{Rule: DOptimal}.Prepare(b2)
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := pool2.Start(StandardPrior(2), nil, 1)
	for j := 0; j < 20; j += 2 {
		s2.Answer(j, uint8(j/2%2))
	}
	p2 := s2.Plan(20)
	if len(p2) != 20 || p2[0].Item%2 != 1 {
		t.Errorf("rank 2 plan after ten dimension-1 answers starts with item %d: %v", p2[0].Item, p2)
	}
	dims := map[int]int{}
	for _, p := range p2 {
		dims[p.Item%2]++
	}
	if dims[0] == 0 || dims[1] == 0 {
		t.Errorf("rank 2 plan stays on one dimension: %v", p2)
	}
}

// Errors name what is wrong.
func TestPrepareErrors(t *testing.T) {
	b2 := randomBank(1, 10, 2, 1, false)
	for _, tc := range []struct {
		test  Test
		bank  *Bank
		want  string
		field string // the setting a FieldError names
	}{
		{Test{Rule: "max"}, randomBank(1, 10, 1, 1, false), `rule "max"`, "Rule"},
		{Test{Rule: KL}, b2, "kl is rank 1 only", "Rule"},
		{Test{Estimator: EAP}, b2, "eap is rank 1 only", "Estimator"},
		{Test{Budget: -1}, b2, "budget -1", "Budget"},
		{Test{TargetSE: math.NaN()}, b2, "target-se", "TargetSE"},
	} {
		_, err := tc.test.Prepare(tc.bank)
		var fe *model.FieldError
		if err == nil || !contains(err.Error(), tc.want) || !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%+v: %v (field %v), want %q on %s", tc.test, err, fe, tc.want, tc.field)
		}
	}
	bad := randomBank(1, 10, 1, 1, false)
	bad.D[3] = math.Inf(1)
	if _, err := (Test{}).Prepare(bad); err == nil || !contains(err.Error(), "item 3 has intercept +Inf") {
		t.Errorf("infinite intercept: %v", err)
	}
	pool, _ := Test{}.Prepare(randomBank(1, 10, 1, 1, false))
	if _, err := pool.Start(Prior{Mean: []float64{0}, Cov: []float64{-1}}, nil, 1); err == nil {
		t.Error("a prior of negative variance is accepted")
	}
}

func contains(s, sub string) bool {
	return len(sub) == 0 || len(s) >= len(sub) && (s[:len(sub)] == sub || contains(s[1:], sub))
}

// The population prior is the mean and population covariance of the fit's
// abilities.
func TestPopulationPrior(t *testing.T) {
	th := []float64{1, 0, -1, 2, 0, -2}
	p, err := PopulationPrior(th, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{2.0 / 3, -2.0 / 3, -2.0 / 3, 8.0 / 3}
	if p.Mean[0] != 0 || p.Mean[1] != 0 {
		t.Errorf("mean %v", p.Mean)
	}
	for k := range want {
		if math.Abs(p.Cov[k]-want[k]) > 1e-12 {
			t.Errorf("cov %v, want %v", p.Cov, want)
		}
	}
	if _, err := PopulationPrior([]float64{1, 2, 2, 4, 3, 6}, 2); err == nil {
		t.Error("a singular population covariance is accepted")
	}
}

// The pruned D-optimal search at rank 2 and 3 (signed loadings) finds the
// item of largest log(1 + w αᵀP⁻¹α) that an exhaustive search finds.
func TestDOptimalMatchesExhaustive(t *testing.T) {
	for trial := 0; trial < 60; trial++ {
		r := 2 + trial%2
		b := randomBank(uint64(100+trial), 700, r, []float64{1, 1.4}[trial%2], true)
		pool, err := Test{Rule: DOptimal}.Prepare(b)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(uint64(trial), 5))
		s, _ := pool.Start(StandardPrior(r), nil, 1)
		for k := 0; k < trial%9; k++ {
			j := rng.IntN(700)
			if s.Available(j) {
				s.Answer(j, uint8(rng.IntN(2)))
			}
		}
		got, _ := s.Next()
		C, _ := invertSPD(s.est.precision(s.theta), r)
		want, wantV := -1, math.Inf(-1)
		for j := 0; j < 700; j++ {
			if !s.Available(j) {
				continue
			}
			q := 0.0
			for k := 0; k < r; k++ {
				for l := 0; l < r; l++ {
					q += b.A[j*r+k] * C[k*r+l] * b.A[j*r+l]
				}
			}
			sig := b.sigma()
			if v := math.Log1p(psi(b.logit(j, s.theta)) * q / (sig * sig)); v > wantV {
				want, wantV = j, v
			}
		}
		if got.Item != want || math.Abs(got.Value-wantV) > 1e-12 {
			t.Fatalf("trial %d (rank %d): pruned search gives %d (%v), exhaustive %d (%v)", trial, r, got.Item, got.Value, want, wantV)
		}
	}
}
