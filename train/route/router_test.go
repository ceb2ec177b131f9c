package route

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
)

// handRouter is a checkpoint of d = 2 whose question (1, 0) has ‖q‖ = 1 and
// u = (1, 0), so model i with row (1 + logit(p_i), 0) answers it with
// probability exactly p_i (up to float32 rounding).
func handModel(ps []float64, names []string) *model.JEIRT {
	m := &model.JEIRT{InputDim: 1, Hidden: 1, Dim: 2, W1: []float32{0}, C1: []float32{0}, W2: []float32{0, 0}, C2: []float32{0, 0},
		Models: names}
	for _, p := range ps {
		m.M = append(m.M, float32(1+math.Log(p/(1-p))), 0)
	}
	return m
}

var handQ = []float32{1, 0}

// built is the router the rule of spec makes on m, as Build makes it.
func built(t *testing.T, m *model.JEIRT, spec string, s Setting) *Router {
	t.Helper()
	r, err := ParseRule(spec)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := r.Router(m, s)
	if err != nil {
		t.Fatalf("%s: %v", spec, err)
	}
	return rt
}

func TestRouterRules(t *testing.T) {
	m := handModel([]float64{0.9, 0.75, 0.6}, []string{"a", "b", "c"})
	costs := []float64{10, 3, 1}
	priced := Setting{Costs: costs}
	cases := []struct {
		name     string
		rt       *Router
		want     string
		rule     string
		fallback bool
	}{
		{"max-p", &Router{Model: m}, "a", "max-p", false},
		{"max-p ignores costs", built(t, m, "max-p", priced), "a", "max-p", false},
		{"max-p among candidates", built(t, m, "max-p", Setting{Candidates: []int{1, 2}}), "b", "max-p", false},
		{"min-p 0.7: cheapest with P >= 0.7", built(t, m, "min-p?p=0.7", priced), "b", "min-p?p=0.7", false},
		{"min-p 0.5: cheapest of all", built(t, m, "min-p?p=0.5", priced), "c", "min-p?p=0.5", false},
		{"min-p 0.75 is inclusive", built(t, m, "min-p?p=0.749999", priced), "b", "min-p?p=0.749999", false},
		{"min-p 0.95: none reaches it, highest P", built(t, m, "min-p?p=0.95", priced), "a", "min-p?p=0.95", true},
		// P − λ·cost: λ = 0.02: a 0.70, b 0.69, c 0.58; λ = 0.05: a 0.40, b 0.60, c 0.55; λ = 1: c.
		{"lambda 0.02", built(t, m, "lambda?lambda=0.02", priced), "a", "lambda?lambda=0.02", false},
		{"lambda 0.05", built(t, m, "lambda?lambda=0.05", priced), "b", "lambda?lambda=0.05", false},
		{"lambda 1", built(t, m, "lambda?lambda=1", priced), "c", "lambda?lambda=1", false},
		{"lambda among candidates", built(t, m, "lambda?lambda=1", Setting{Costs: costs, Candidates: []int{0, 1}}), "b", "lambda?lambda=1", false},
	}
	for _, c := range cases {
		if err := c.rt.Check(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		ch := c.rt.Route(handQ)
		if got := m.Models[ch.Model]; got != c.want || ch.Rule != c.rule || ch.Fallback != c.fallback {
			t.Errorf("%s: chose %s (rule %s, fallback %v), want %s (%s, %v)", c.name, got, ch.Rule, ch.Fallback, c.want, c.rule, c.fallback)
		}
		if want := []float64{0.9, 0.75, 0.6}[ch.Model]; math.Abs(ch.P-want) > 1e-6 {
			t.Errorf("%s: P = %v, want %v", c.name, ch.P, want)
		}
		if c.rt.Costs != nil && ch.Cost != costs[ch.Model] {
			t.Errorf("%s: cost %v, want %v", c.name, ch.Cost, costs[ch.Model])
		}
	}
	// Alternatives: the others, highest P first, capped at top.
	ch := built(t, m, "min-p?p=0.7", priced).Route(handQ)
	var alts []string
	for _, a := range ch.Alternatives(3) {
		alts = append(alts, m.Models[a.Model])
	}
	if strings.Join(alts, ",") != "a,c" {
		t.Errorf("alternatives %v, want a,c", alts)
	}
	if n := len(ch.Alternatives(1)); n != 1 {
		t.Errorf("top 1 gave %d alternatives", n)
	}
}

func TestRouterTies(t *testing.T) {
	m := handModel([]float64{0.8, 0.8, 0.8}, []string{"x", "y", "z"})
	// Equal P: max-p takes the cheaper model, then the lower row.
	if ch := built(t, m, "lambda?lambda=0.001", Setting{Costs: []float64{5, 2, 2}}).Route(handQ); m.Models[ch.Model] != "y" {
		t.Errorf("lambda tie chose %s, want y", m.Models[ch.Model])
	}
	if ch := (&Router{Model: m}).Route(handQ); m.Models[ch.Model] != "x" {
		t.Errorf("max-p tie chose %s, want x", m.Models[ch.Model])
	}
	if ch := built(t, m, "min-p?p=0.5", Setting{Costs: []float64{5, 2, 2}}).Route(handQ); m.Models[ch.Model] != "y" {
		t.Errorf("min-p tie chose %s, want y", m.Models[ch.Model])
	}
}

func TestRouterCheck(t *testing.T) {
	m := handModel([]float64{0.9, 0.6}, []string{"a", "b"})
	cases := []struct {
		rt   Router
		want string
	}{
		{Router{Model: m, Candidates: []int{}}, "route: no candidate models"},
		{Router{Model: m, Candidates: []int{2}}, "route: candidate row 2 is not a model of the checkpoint (it has 2)"},
		{Router{Model: m, Costs: []float64{1}}, "route: 1 costs for 2 models"},
		{Router{Model: m, Costs: []float64{1, math.NaN()}}, `route: model "b" has no valid cost (got NaN)`},
		{Router{Model: m, Costs: []float64{1, math.NaN()}, Candidates: []int{0}}, ""},
		{Router{Model: m, MinP: 0.5}, "route: a Router built by hand applies max-p, whatever its MinP, Lambda and Margin; make a rule's router with Rule.Router"},
	}
	for _, c := range cases {
		err := c.rt.Check()
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("Check() = %q, want %q", got, c.want)
		}
	}
	// A rule's parameter is its kind's to check, wherever the rule comes
	// from (a spec, NewRule, or a Rule built by hand as route eval's sweeps).
	for _, c := range []struct {
		r    Rule
		want string
	}{
		{Rule{Name: RuleMinP, Param: 1.5}, "route: rule min-p: p 1.5: not in [0, 1]"},
		{Rule{Name: RuleLambda, Param: -1}, "route: rule lambda: lambda -1: want a finite number >= 0"},
		{Rule{Name: RuleMargin, Param: math.NaN()}, "route: rule margin: delta NaN: want a finite number >= 0 (best-single is the margin without end)"},
		{Rule{Name: RuleMargin, Param: -0.1}, "route: rule margin: delta -0.1: want a finite number >= 0 (best-single is the margin without end)"},
		{Rule{Name: RuleShortlist, Param: 0}, "route: rule shortlist: k 0: want a whole number of models, at least 1"},
	} {
		if _, err := c.r.Router(m, Setting{Costs: []float64{1, 1}}); err == nil || err.Error() != c.want {
			t.Errorf("%+v: %v, want %q", c.r, err, c.want)
		}
	}
}

func TestRouterMargin(t *testing.T) {
	// P: a 0.9, b 0.75, c 0.6.
	m := handModel([]float64{0.9, 0.75, 0.6}, []string{"a", "b", "c"})
	ref := []float64{0, 0, 1} // c is the best-ranked: the default unless named
	cases := []struct {
		name string
		rt   *Router
		want string
		rule string
	}{
		{"margin 0 is max-p", built(t, m, "margin?delta=0", Setting{Reference: ref}), "a", "margin?delta=0&default=c"},
		{"tiny margin: a beats c by 0.3", built(t, m, "margin?delta=1e-9", Setting{Reference: ref}), "a", "margin?delta=1e-09&default=c"},
		{"margin 0.29 < 0.3: a", built(t, m, "margin?delta=0.29", Setting{Reference: ref}), "a", "margin?delta=0.29&default=c"},
		{"margin 0.31 > 0.3: stay on c", built(t, m, "margin?delta=0.31", Setting{Reference: ref}), "c", "margin?delta=0.31&default=c"},
		{"margin inf is best-single: always the default", built(t, m, "best-single", Setting{Reference: ref}), "c", "best-single"},
		{"default b, margin 0.14 < 0.15: a", built(t, m, "margin?delta=0.14&default=b", Setting{Reference: ref}), "a", "margin?delta=0.14&default=b"},
		{"default b, margin 0.16 > 0.15: b", built(t, m, "margin?delta=0.16&default=b", Setting{Reference: ref}), "b", "margin?delta=0.16&default=b"},
		{"default is the top: a", built(t, m, "margin?delta=1e308&default=a", Setting{Reference: ref}), "a", "margin?delta=1e308&default=a"},
		{"default c among b, c, margin 0.16 > 0.15: c", built(t, m, "margin?delta=0.16", Setting{Reference: ref, Candidates: []int{1, 2}}), "c", "margin?delta=0.16&default=c"},
	}
	// Route eval sets the candidates per question: a default that did not
	// answer is not a candidate, and the rule takes the highest P.
	gone := built(t, m, "margin?delta=1e308&default=a", Setting{Reference: ref})
	gone.Candidates = []int{1, 2}
	cases = append(cases, struct {
		name string
		rt   *Router
		want string
		rule string
	}{"default not a candidate: max-p", gone, "b", "margin?delta=1e308&default=a"})
	for _, c := range cases {
		if err := c.rt.Check(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		ch := c.rt.Route(handQ)
		if got := m.Models[ch.Model]; got != c.want || ch.Rule != c.rule {
			t.Errorf("%s: chose %s (rule %s), want %s (%s)", c.name, got, ch.Rule, c.want, c.rule)
		}
	}
	for _, c := range []struct {
		rt   Router
		want string
	}{
		{Router{Model: m, Margin: 0.1, Default: 3}, "route: default row 3 is not a model of the checkpoint (it has 3)"},
		{Router{Model: m, Margin: 0.1, Costs: []float64{1, 1, 1}}, "route: the margin rule does not weigh cost; use it without costs"},
	} {
		if err := c.rt.Check(); err == nil || err.Error() != c.want {
			t.Errorf("Check() = %v, want %q", err, c.want)
		}
	}
}

// On random maps and questions, a tiny margin chooses exactly as max-P and an
// infinite one exactly the default model; in between, the choice leaves the
// default exactly when the top P beats the default's by at least δ.
func TestRouterMarginRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, d = 7, 4
	m := &model.JEIRT{Dim: d}
	for i := 0; i < n; i++ {
		m.Models = append(m.Models, string(rune('a'+i)))
		for k := 0; k < d; k++ {
			m.M = append(m.M, float32(rng.NormFloat64()))
		}
	}
	for trial := 0; trial < 200; trial++ {
		q := make([]float32, d)
		for k := range q {
			q[k] = float32(rng.NormFloat64())
		}
		def := rng.IntN(n)
		maxP := (&Router{Model: m}).Route(q)
		ref := make([]float64, n)
		ref[def] = 1
		ps := map[int]float64{}
		for _, mp := range maxP.Ranked {
			ps[mp.Model] = mp.P
		}
		margin := func(delta string) *Router {
			return built(t, m, "margin?delta="+delta+"&default="+m.Models[def], Setting{Reference: ref})
		}
		if ch := margin("1e-12").Route(q); ch.Model != maxP.Model {
			t.Fatalf("trial %d: tiny margin chose %d, max-P %d", trial, ch.Model, maxP.Model)
		}
		if ch := built(t, m, "best-single", Setting{Reference: ref}).Route(q); ch.Model != def {
			t.Fatalf("trial %d: infinite margin chose %d, default %d", trial, ch.Model, def)
		}
		delta := 0.2 * rng.Float64()
		want := def
		if ps[maxP.Model]-ps[def] >= delta {
			want = maxP.Model
		}
		if ch := margin(strconv.FormatFloat(delta, 'g', -1, 64)).Route(q); ch.Model != want {
			t.Fatalf("trial %d: margin %v chose %d (P %v), want %d (top %v, default %v)", trial, delta, ch.Model, ch.P, want, ps[maxP.Model], ps[def])
		}
	}
}
