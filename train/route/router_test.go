package route

import (
	"math"
	"math/rand/v2"
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

func TestRouterRules(t *testing.T) {
	m := handModel([]float64{0.9, 0.75, 0.6}, []string{"a", "b", "c"})
	costs := []float64{10, 3, 1}
	cases := []struct {
		name     string
		rt       Router
		want     string
		rule     string
		fallback bool
	}{
		{"max-p", Router{Model: m}, "a", "max-p", false},
		{"max-p ignores min-p without costs", Router{Model: m, MinP: 0.99}, "a", "max-p", false},
		{"max-p among candidates", Router{Model: m, Candidates: []int{1, 2}}, "b", "max-p", false},
		{"min-p 0.7: cheapest with P >= 0.7", Router{Model: m, Costs: costs, MinP: 0.7}, "b", "min-p", false},
		{"min-p 0.5: cheapest of all", Router{Model: m, Costs: costs, MinP: 0.5}, "c", "min-p", false},
		{"min-p 0.75 is inclusive", Router{Model: m, Costs: costs, MinP: 0.75 - 1e-6}, "b", "min-p", false},
		{"min-p 0.95: none reaches it, highest P", Router{Model: m, Costs: costs, MinP: 0.95}, "a", "min-p", true},
		// P − λ·cost: λ = 0.02: a 0.70, b 0.69, c 0.58; λ = 0.05: a 0.40, b 0.60, c 0.55; λ = 1: c.
		{"lambda 0.02", Router{Model: m, Costs: costs, Lambda: 0.02}, "a", "lambda", false},
		{"lambda 0.05", Router{Model: m, Costs: costs, Lambda: 0.05}, "b", "lambda", false},
		{"lambda 1", Router{Model: m, Costs: costs, Lambda: 1}, "c", "lambda", false},
		{"lambda among candidates", Router{Model: m, Costs: costs, Lambda: 1, Candidates: []int{0, 1}}, "b", "lambda", false},
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
	ch := (&Router{Model: m, Costs: costs, MinP: 0.7}).Route(handQ)
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
	if ch := (&Router{Model: m, Costs: []float64{5, 2, 2}, Lambda: 0.001}).Route(handQ); m.Models[ch.Model] != "y" {
		t.Errorf("lambda tie chose %s, want y", m.Models[ch.Model])
	}
	if ch := (&Router{Model: m}).Route(handQ); m.Models[ch.Model] != "x" {
		t.Errorf("max-p tie chose %s, want x", m.Models[ch.Model])
	}
	if ch := (&Router{Model: m, Costs: []float64{5, 2, 2}, MinP: 0.5}).Route(handQ); m.Models[ch.Model] != "y" {
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
		{Router{Model: m, MinP: 1.5}, "route: min-p 1.5 is not in [0, 1]"},
		{Router{Model: m, Lambda: -1}, "route: lambda -1 must be a non-negative number"},
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
}

func TestRouterMargin(t *testing.T) {
	// P: a 0.9, b 0.75, c 0.6.
	m := handModel([]float64{0.9, 0.75, 0.6}, []string{"a", "b", "c"})
	inf := math.Inf(1)
	cases := []struct {
		name   string
		rt     Router
		want   string
		rule   string
		wantOK bool
	}{
		{"margin 0 is max-p", Router{Model: m, Default: 2}, "a", "max-p", true},
		{"tiny margin: a beats c by 0.3", Router{Model: m, Default: 2, Margin: 1e-9}, "a", "margin", true},
		{"margin 0.29 < 0.3: a", Router{Model: m, Default: 2, Margin: 0.29}, "a", "margin", true},
		{"margin 0.31 > 0.3: stay on c", Router{Model: m, Default: 2, Margin: 0.31}, "c", "margin", true},
		{"margin inf: always the default", Router{Model: m, Default: 2, Margin: inf}, "c", "margin", true},
		{"default b, margin 0.14 < 0.15: a", Router{Model: m, Default: 1, Margin: 0.14}, "a", "margin", true},
		{"default b, margin 0.16 > 0.15: b", Router{Model: m, Default: 1, Margin: 0.16}, "b", "margin", true},
		{"default is the top: a", Router{Model: m, Default: 0, Margin: inf}, "a", "margin", true},
		{"default not a candidate: max-p", Router{Model: m, Default: 0, Margin: inf, Candidates: []int{1, 2}}, "b", "margin", true},
		{"default c among b, c, margin 0.16 > 0.15: c", Router{Model: m, Default: 2, Margin: 0.16, Candidates: []int{1, 2}}, "c", "margin", true},
	}
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
		{Router{Model: m, Margin: math.NaN()}, "route: margin NaN must be a non-negative number (or +Inf)"},
		{Router{Model: m, Margin: -0.1}, "route: margin -0.1 must be a non-negative number (or +Inf)"},
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
		ps := map[int]float64{}
		for _, mp := range maxP.Ranked {
			ps[mp.Model] = mp.P
		}
		if ch := (&Router{Model: m, Default: def, Margin: 1e-12}).Route(q); ch.Model != maxP.Model {
			t.Fatalf("trial %d: tiny margin chose %d, max-P %d", trial, ch.Model, maxP.Model)
		}
		if ch := (&Router{Model: m, Default: def, Margin: math.Inf(1)}).Route(q); ch.Model != def {
			t.Fatalf("trial %d: infinite margin chose %d, default %d", trial, ch.Model, def)
		}
		delta := 0.2 * rng.Float64()
		want := def
		if ps[maxP.Model]-ps[def] >= delta {
			want = maxP.Model
		}
		if ch := (&Router{Model: m, Default: def, Margin: delta}).Route(q); ch.Model != want {
			t.Fatalf("trial %d: margin %v chose %d (P %v), want %d (top %v, default %v)", trial, delta, ch.Model, ch.P, want, ps[maxP.Model], ps[def])
		}
	}
}
