package router

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/train/route"
)

// fixture is a checkpoint whose question (1, 0) has ‖q‖ = 1, so model i
// with row (1 + logit(p_i), 0) answers it with probability p_i: a 0.9,
// b 0.75, c 0.6. Its recorded training accuracies rank b, c, a; it
// records margin δ = 0.1 as its default rule and prices a and b only.
func fixture() *checkpoint.Checkpoint {
	m := &model.JEIRT{Dim: 2, Models: []string{"a", "b", "c"}}
	for _, p := range []float64{0.9, 0.75, 0.6} {
		m.M = append(m.M, float32(1+math.Log(p/(1-p))), 0)
	}
	delta := 0.1
	return &checkpoint.Checkpoint{Model: m, Manifest: checkpoint.Manifest{Routing: &checkpoint.Routing{
		Rule: "margin", Param: &delta, Why: "cross-validated",
		TrainAccuracy: map[string]float64{"a": 0.5, "b": 0.9, "c": 0.6},
		Costs:         map[string]float64{"a": 10, "b": 3},
	}}}
}

var q = []float32{1, 0}

func f(v float64) *float64 { return &v }

// Every way of naming a rule gives the router that rule makes: the recorded
// default, a spec, a rule by its settings, with given or recorded prices.
func TestBuildRoutes(t *testing.T) {
	ck := fixture()
	given := []float64{10, 3, 1}
	for _, c := range []struct {
		name      string
		req       Request
		rule, why string
		model     string
	}{
		// The default model is b, the best-ranked; a's P beats it by 0.15.
		{"recorded default", Request{}, "margin?delta=0.1&default=b", "the checkpoint's default rule: cross-validated", "a"},
		{"default by name", Request{Spec: "default", Models: []string{"b", "c"}}, "margin?delta=0.1&default=b", "the checkpoint's default rule: cross-validated", "b"},
		{"spec", Request{Spec: "shortlist?k=2"}, "shortlist?k=2", "given", "b"},
		{"settings", Request{Name: "min-p", Param: f(0.7), Costs: given}, "min-p?p=0.7", "given", "b"},
		{"settings, the default parameter", Request{Name: "min-p", Costs: given}, "min-p?p=0.7", "given", "b"},
		{"margin's default named", Request{Name: "margin", Param: f(0.2), Default: "c"}, "margin?delta=0.2&default=c", "given", "a"},
		// a: 0.9 − 10, b: 0.75 − 3; c has no recorded price and is left out.
		{"recorded prices, the unpriced left out", Request{Name: "lambda", Param: f(1), RecordedCosts: true, PricedOnly: true}, "lambda?lambda=1", "given", "b"},
		{"allowed", Request{Spec: "max-p", Allowed: func(n string) bool { return n != "a" }}, "max-p", "given", "b"},
	} {
		rt, why, err := Build(ck, c.req)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		ch := rt.Route(q)
		if rt.Rule() != c.rule || why != c.why || ck.Model.Models[ch.Model] != c.model {
			t.Errorf("%s: rule %s (%s) chose %s, want %s (%s) choosing %s", c.name, rt.Rule(), why, ck.Model.Models[ch.Model], c.rule, c.why, c.model)
		}
	}
}

// Every check is made once, here, and names the setting at fault.
func TestBuildErrors(t *testing.T) {
	ck := fixture()
	none := func(string) bool { return false }
	for _, c := range []struct {
		name  string
		req   Request
		field string
		index int // of the model named, -1 for none
		msg   string
	}{
		{"min-p's range", Request{Name: "min-p", Param: f(1.5), Costs: []float64{1, 1, 1}}, "MinP", -1, "rule min-p: min-p 1.5: not in [0, 1]"},
		{"lambda's range", Request{Name: "lambda", Param: f(math.Inf(1)), Costs: []float64{1, 1, 1}}, "Lambda", -1, "rule lambda: lambda +Inf: want a finite number >= 0"},
		{"a negative shortlist", Request{Name: "max-p", Among: -1}, "Shortlist", -1, "shortlist -1 must not be negative"},
		{"an unknown rule", Request{Spec: "best"}, "Rule", -1, `rule: rule "best": unknown rule "best": want ` + route.RuleNames() + ` (or default: the checkpoint's)`},
		{"an unknown model", Request{Models: []string{"a", "zz"}}, "Models", 1, `models: "zz" is not a model of the checkpoint (it has 3: a, b, c)`},
		{"no model", Request{Models: []string{}}, "Models", -1, "models names no model"},
		{"a model not allowed", Request{Spec: "max-p", Models: []string{"a", "b"}, Allowed: func(n string) bool { return n == "a" }, AllowedWhy: "has no upstream"}, "Models", 1, `model "b" has no upstream`},
		{"none allowed", Request{Spec: "max-p", Allowed: none}, "Models", -1, "no model of the checkpoint can be routed to with rule max-p (costs or upstreams missing)"},
		{"no prices", Request{Name: "lambda", Param: f(0.1)}, "Costs", -1, "rule lambda?lambda=0.1 weighs cost; give the prices with costs"},
		{"a recorded price missing", Request{Name: "lambda", Param: f(0.1), RecordedCosts: true}, "Costs", -1, `the checkpoint records no price for model "c" (give costs, or choose the models with models)`},
		{"a given price missing", Request{Name: "min-p", Costs: []float64{1, 1, math.NaN()}, Models: []string{"c"}}, "Models", 0, `model "c" has no cost for rule min-p?p=0.7`},
		{"a default model outside the candidates", Request{Name: "margin", Param: f(0.1), Default: "a", Models: []string{"b", "c"}}, "Default", -1, `default: "a" is not one of the candidates (models, shortlist)`},
		{"a default model outside the shortlist", Request{Spec: "margin?delta=0.1&k=1&default=c"}, "Rule", -1, `rule: "c" is not one of the candidates (models, shortlist)`},
		{"a default that is no model", Request{Spec: "margin?delta=0.1&default=zz"}, "Rule", -1, `rule: "zz" is not a model of the checkpoint (it has 3: a, b, c)`},
	} {
		_, _, err := Build(ck, c.req)
		var fe *model.FieldError
		if err == nil || !errors.As(err, &fe) || fe.Field != c.field || err.Error() != c.msg {
			t.Errorf("%s: %v (%+v), want %s: %q", c.name, err, fe, c.field, c.msg)
			continue
		}
		var me *ModelError
		if got := -1; errors.As(err, &me) && me.Index != c.index || !errors.As(err, &me) && got != c.index {
			t.Errorf("%s: model index %+v, want %d", c.name, me, c.index)
		}
	}
	// A checkpoint whose recorded rule cannot be applied names its file.
	bad := fixture()
	bad.Manifest.Routing.Rule, bad.Manifest.Routing.Param = "best", nil
	if _, _, err := Build(bad, Request{}); err == nil || err.Error() != `the checkpoint: routing.rule "best": want `+route.RuleNames() {
		t.Errorf("a broken recorded rule: %v", err)
	}
}

// A checkpoint's recorded calibration and ranking: a model the routing
// block does not know (added later) takes its mean predicted P as its
// accuracy, and ranks last.
func TestCalibrationAndReference(t *testing.T) {
	ck := fixture()
	ck.Model.Items, ck.Model.Q = []string{"q1"}, q // P on its one question: a 0.9, b 0.75, c 0.6
	if c := CalibrationOf(ck); c != nil {
		t.Errorf("a checkpoint without a calibration has one: %+v", c)
	}
	rec := ck.Manifest.Routing
	delete(rec.TrainAccuracy, "c")
	rec.Calibration = &checkpoint.Calibration{JEIRT: 0.5, Accuracy: 1}
	c := CalibrationOf(ck)
	if want := route.AccuracyLogit(route.MeanPredictedP(ck.Model)[2]); c.Prior[2] != want || c.Prior[0] != route.AccuracyLogit(0.5) || c.JEIRT != 0.5 {
		t.Errorf("priors %v, want c's %v", c.Prior, want)
	}
	if ref := Reference(ck); ref[0] != 0.5 || ref[1] != 0.9 || !math.IsInf(ref[2], -1) {
		t.Errorf("reference %v, want 0.5 0.9 -Inf", ref)
	}
	rec.TrainAccuracy = nil
	if ref, want := Reference(ck), route.MeanPredictedP(ck.Model); !slices.Equal(ref, want) || math.Abs(want[0]-0.9) > 1e-6 {
		t.Errorf("reference without accuracies %v, want the mean predicted P %v", ref, want)
	}
}
