package route

import (
	"math"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
)

// A Router with a Domain sends an out-of-domain question to Best, or keeps
// the rule's choice when told to, and flags it either way.
func TestRouteChecked(t *testing.T) {
	m := &model.JEIRT{Dim: 2, Models: []string{"a", "b"}, M: []float32{3, 0, 1, 0}}
	x := []float32{1, 0, 0, 0, 1, 0, 0, 0.1}
	dom, err := checkpoint.NewDomain(x, 4, nil, 0.5) // two questions: a rate of 1/3 or more flags anything
	if err != nil {
		t.Fatal(err)
	}
	q := []float32{1, 0}
	rt := &Router{Model: m, Domain: dom, Best: 1}
	in := rt.RouteChecked(q, []float32{2, 0, 0, 0})
	if in.OutOfDomain || in.Model != 0 || in.Rule != "max-p" || in.Distance > 1e-6 {
		t.Errorf("in domain: %+v", in)
	}
	far := []float32{0, 0, 1, 0}
	out := rt.RouteChecked(q, far)
	if !out.OutOfDomain || out.Model != 1 || out.Rule != "out-of-domain" || math.Abs(out.Distance-1) > 1e-6 {
		t.Errorf("out of domain: %+v", out)
	}
	rt.KeepOutOfDomain = true
	if kept := rt.RouteChecked(q, far); !kept.OutOfDomain || kept.Model != 0 || kept.Rule != "max-p" {
		t.Errorf("kept: %+v", kept)
	}
	rt.Domain = nil
	if plain := rt.RouteChecked(q, far); plain.OutOfDomain || !math.IsNaN(plain.Distance) {
		t.Errorf("without a domain: %+v", plain)
	}
}
