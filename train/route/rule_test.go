package route

import (
	"math"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
)

// Every rule's spec reads back as itself, and equivalent specs read as one
// rule with one spec.
func TestRuleEquivalents(t *testing.T) {
	for in, want := range map[string]string{
		"best-single":                       "best-single",
		"best-single?k=2":                   "best-single",
		"max-p":                             "max-p",
		"max-p?k=1":                         "shortlist?k=1",
		"shortlist":                         "shortlist?k=3",
		"shortlist?k=5":                     "shortlist?k=5",
		"margin?delta=0.05":                 "margin?delta=0.05",
		"margin?default=a%26b&delta=.1&k=2": "margin?delta=0.1&k=2&default=a%26b",
		"min-p":                             "min-p?p=0.7",
		"min-p?k=2&p=0.6":                   "min-p?p=0.6&k=2",
		"lambda?lambda=1e-3":                "lambda?lambda=0.001",
		" margin?delta=0 ":                  "margin?delta=0",
	} {
		r, err := ParseRule(in)
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if r.String() != want {
			t.Errorf("%s reads as %s, want %s", in, r, want)
		}
		back, err := ParseRule(r.String())
		if err != nil || !sameRule(back, r) {
			t.Errorf("%s: %s reads back as %+v (%v)", in, r, back, err)
		}
	}
	for in, want := range map[string]string{
		"router":                    `unknown rule "router"`,
		"margin":                    "needs its delta",
		"lambda":                    "needs its lambda",
		"min-p?p=1.5":               "not in [0, 1]",
		"shortlist?k=0":             "whole number",
		"max-p?k=0":                 "k=0: want a whole number",
		"max-p?default=a":           `has no parameter "default"`,
		"margin?delta=0.1&x=1":      `has no parameter "x" (it takes k, default, delta)`,
		"shortlist?k=1&k=2":         "given 2 times",
		"margin?delta=inf":          "finite",
		"max-p?":                    "not name=value pairs",
		"max-p?%zz":                 "not name=value pairs",
		"best-single?=1":            `has no parameter ""`,
		"margin?delta=0.1&default=": "names no model",
	} {
		if _, err := ParseRule(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: want %q, got %v", in, want, err)
		}
	}
}

func sameRule(a, b Rule) bool {
	return a.Name == b.Name && (a.Param == b.Param || math.IsNaN(a.Param) && math.IsNaN(b.Param)) && a.Among == b.Among && a.Default == b.Default
}

// NewRule checks typed settings as ParseRule checks a spec.
func TestNewRule(t *testing.T) {
	d := 0.05
	r, err := NewRule(RuleMargin, &d, 2, "b")
	if err != nil || r.String() != "margin?delta=0.05&k=2&default=b" {
		t.Errorf("%s, %v", r, err)
	}
	if r, err := NewRule(RuleMaxP, nil, 3, ""); err != nil || r.String() != "shortlist?k=3" {
		t.Errorf("max-p among 3: %s, %v", r, err)
	}
	if r, err := NewRule(RuleMinP, nil, 0, ""); err != nil || r.String() != "min-p?p=0.7" {
		t.Errorf("min-p: %s, %v", r, err)
	}
	for _, c := range []struct {
		name  string
		param *float64
		among int
		def   string
		want  string
	}{
		{RuleMargin, nil, 0, "", "needs its delta"},
		{RuleMaxP, &d, 0, "", "takes no parameter"},
		{RuleMaxP, nil, 0, "b", "belongs to the margin rule"},
		{RuleShortlist, &d, 0, "", "whole number"},
		{"best", nil, 0, "", "unknown rule"},
	} {
		if _, err := NewRule(c.name, c.param, c.among, c.def); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: want %q, got %v", c, c.want, err)
		}
	}
}

// A checkpoint's routing block is read with the one parser: what it
// records, with the errors checkpoint.Load gave before.
func TestRecorded(t *testing.T) {
	two, half, three := 2.5, 0.5, 3.0
	ok := []struct {
		rt   checkpoint.Routing
		want string
	}{
		{checkpoint.Routing{Rule: "best-single"}, "best-single"},
		{checkpoint.Routing{Rule: "shortlist", Param: &three}, "shortlist?k=3"},
		{checkpoint.Routing{Rule: "margin", Param: &half}, "margin?delta=0.5"},
		{checkpoint.Routing{Rule: "min-p", Param: &half, Costs: map[string]float64{"a": 1}}, "min-p?p=0.5"},
		{checkpoint.Routing{Rule: "margin?delta=0.5&k=2"}, "margin?delta=0.5&k=2"},
	}
	for _, c := range ok {
		r, err := Recorded(&c.rt)
		if err != nil || r.String() != c.want {
			t.Errorf("%+v: %s, %v", c.rt, r, err)
		}
		name, param := r.Record()
		if back, err := Recorded(&checkpoint.Routing{Rule: name, Param: param, Costs: c.rt.Costs}); err != nil || !sameRule(back, r) {
			t.Errorf("%s recorded as %s %v reads back as %s, %v", r, name, param, back, err)
		}
	}
	for _, c := range []struct {
		rt   checkpoint.Routing
		want string
	}{
		{checkpoint.Routing{Rule: "best"}, `routing.rule "best"`},
		{checkpoint.Routing{Rule: "shortlist"}, "rule shortlist needs one"},
		{checkpoint.Routing{Rule: "max-p", Param: &three}, "routing.param: rule max-p has none"},
		{checkpoint.Routing{Rule: "shortlist", Param: &two}, "whole number"},
		{checkpoint.Routing{Rule: "lambda", Param: &half}, "rule lambda needs the models' prices"},
	} {
		if _, err := Recorded(&c.rt); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: want %q, got %v", c.rt, c.want, err)
		}
	}
}

// Rule.Router makes every rule's choice and reports, for each, the rule
// that chose (the spec, the margin's default named) with a reason.
func TestRuleRouterReportsTheRule(t *testing.T) {
	// P(correct) for q = (1, 0): σ(m_i·q/‖q‖ − ‖q‖) = σ(M_i0 − 1).
	m := &model.JEIRT{Dim: 2, Models: []string{"big", "mid", "small"}, M: []float32{4, 0, 2.5, 0, 1.8, 0}}
	ref := []float64{0.6, 0.9, 0.5} // mid is the best-ranked
	costs := []float64{10, 3, 1}
	q := []float32{1, 0}
	for _, c := range []struct {
		spec, model, rule, why string
	}{
		{"max-p", "big", "max-p", "highest P"},
		{"best-single", "mid", "best-single", "best-ranked"},
		{"shortlist?k=2", "big", "shortlist?k=2", "2 best-ranked"},
		{"shortlist?k=1", "mid", "shortlist?k=1", "1 best-ranked"},
		{"margin?delta=0.5", "mid", "margin?delta=0.5&default=mid", "kept the default model mid"},
		{"margin?delta=0.05", "big", "margin?delta=0.05&default=mid", "big's P beats the default model mid's"},
		{"margin?delta=0.05&default=small", "big", "margin?delta=0.05&default=small", "big's P beats"},
		{"margin?delta=0.9&default=small", "small", "margin?delta=0.9&default=small", "kept the default model small"},
		{"min-p?p=0.6", "small", "min-p?p=0.6", "cheapest"},
		{"min-p?p=0.99", "big", "min-p?p=0.99", "no candidate reached"},
		{"min-p?p=0.6&k=2", "mid", "min-p?p=0.6&k=2", "cheapest"},
		{"lambda?lambda=0.001", "big", "lambda?lambda=0.001", "P - 0.001 x cost"},
		{"lambda?lambda=1", "small", "lambda?lambda=1", "P - 1 x cost"},
	} {
		r, err := ParseRule(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		rt, err := r.Router(m, Setting{Reference: ref, Costs: costs})
		if err != nil {
			t.Fatalf("%s: %v", c.spec, err)
		}
		ch := rt.Route(q)
		if got := m.Models[ch.Model]; got != c.model || ch.Rule != c.rule || rt.Rule() != c.rule || !strings.Contains(ch.Reason, c.why) {
			t.Errorf("%s: chose %s by %q (router %q) because %q; want %s by %q because ...%q...", c.spec, got, ch.Rule, rt.Rule(), ch.Reason, c.model, c.rule, c.why)
		}
	}
	if _, err := (Rule{Name: RuleLambda, Param: 1}).Router(m, Setting{Reference: ref}); err == nil || !strings.Contains(err.Error(), "prices") {
		t.Errorf("lambda without costs: %v", err)
	}
	if _, err := (Rule{Name: RuleMinP, Param: 0.5}).Router(m, Setting{Reference: ref, Costs: []float64{1, math.NaN(), 1}}); err == nil || !strings.Contains(err.Error(), `"mid" has no price`) {
		t.Errorf("min-p with a model unpriced: %v", err)
	}
	if _, err := (Rule{Name: RuleMargin, Param: 0.1, Default: "mid"}).Router(m, Setting{Candidates: []int{0, 2}, Reference: ref}); err == nil || !strings.Contains(err.Error(), "not one of the candidates") {
		t.Errorf("margin default outside the candidates: %v", err)
	}
}

// An out-of-domain query reports rule out-of-domain and says which rule it
// overrode.
func TestRuleRouterOutOfDomainReason(t *testing.T) {
	m := &model.JEIRT{Dim: 2, Models: []string{"a", "b"}, M: []float32{3, 0, 1, 0}}
	dom, err := checkpoint.NewDomain([]float32{1, 0, 0, 0, 1, 0, 0, 0.1}, 4, nil, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := Rule{Name: RuleShortlist, Param: 2}.Router(m, Setting{Reference: []float64{0.1, 0.9}, Domain: dom})
	if err != nil {
		t.Fatal(err)
	}
	ch := rt.RouteChecked([]float32{1, 0}, []float32{0, 0, 1, 0})
	if ch.Rule != RuleOutOfDomain || m.Models[ch.Model] != "b" || !strings.Contains(ch.Reason, "instead of rule shortlist?k=2's choice a") {
		t.Errorf("%+v", ch)
	}
}

// Every spec ParseRule accepts is written back as a spec that reads as the
// same rule, and writing is stable.
func FuzzRuleSpec(f *testing.F) {
	for _, s := range []string{"best-single", "max-p?k=2", "shortlist?k=3", "margin?delta=0.05&default=a%20b&k=2", "min-p?p=0.7", "lambda?lambda=1e-9", "margin?delta=1e308", "x?y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRule(s)
		if err != nil {
			if len(err.Error()) > 4096 {
				t.Errorf("error of %d bytes", len(err.Error()))
			}
			return
		}
		spec := r.String()
		back, err := ParseRule(spec)
		if err != nil {
			t.Fatalf("%q reads as %+v, written %q, which does not read: %v", s, r, spec, err)
		}
		if !sameRule(back, r) || back.String() != spec {
			t.Fatalf("%q reads as %+v, written %q, read back as %+v (%q)", s, r, spec, back, back.String())
		}
	})
}
