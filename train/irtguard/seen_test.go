package irtguard

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/jeirt/jeirt/internal/stress"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/train/irt"
	"github.com/jeirt/jeirt/train/irt/irttest"
	"github.com/jeirt/jeirt/train/irtlbfgs"
	"github.com/jeirt/jeirt/train/irtmml"
)

// What was seen: on a multiple-choice benchmark of 101 models x 1,000
// items, a third answered right, 10% of the cells held out, `irt fit
// --model 2pl` stopped with a training loss above the 1PL's and said
// converged; --method lbfgs and --accelerate=false landed in the same
// place, --model 3pl was as bad, and --method mml stopped with "diverged".
// Here on the simulated trap of that shape (runs of at most 300 iterations:
// the inequalities hold at any iteration).
func TestSeen2PLBelow1PLSimulated(t *testing.T) {
	train, test, _ := traps[0].gen()
	checkSeen(t, "simulated", train, test, 300)
}

// The same on a split of a shipped multiple-choice benchmark (MMLU-Pro,
// 48 models x 12,257 items), with short runs; a long test (half a minute),
// run with JEIRT_STRESS=full.
func TestSeen2PLBelow1PLShipped(t *testing.T) {
	stress.Long(t, "TestSeen2PLBelow1PLSimulated checks the same on the simulated trap of that shape")
	r, _, err := read.File(filepath.Join(sharedData(t), "mmlupro-partial", "response_matrix.csv"), read.Options{NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	train, test, _ := splitCells(r, 0.1, 1)
	checkSeen(t, "mmlupro-partial", train, test, 100)
}

func checkSeen(t *testing.T, what string, train, test *model.Responses, maxIter int) {
	one := fit(t, irt.CBMM{Model: "1pl", Accelerate: true, MaxIter: maxIter}, train)[0]
	checkNested(t, what+" 1pl", one)
	for _, v := range []struct {
		name   string
		c      irt.CBMM
		method string
	}{
		{"2pl", irt.CBMM{Accelerate: true, MaxIter: maxIter}, "cbmm"},
		{"2pl --accelerate=false", irt.CBMM{MaxIter: maxIter}, "cbmm"},
		{"2pl --method lbfgs", irt.CBMM{MaxIter: maxIter}, "lbfgs"},
		{"3pl", irt.CBMM{Model: "3pl", Accelerate: true, MaxIter: maxIter}, "cbmm"},
	} {
		var res *Result
		if v.method == "lbfgs" {
			var err error
			if unguarded() {
				f, e := irtlbfgs.LBFGS2PL{MaxIter: maxIter}.Fit(context.Background(), train)
				res, err = &Result{Fit: f, GradTol: DefaultGradTol, Certificate: Certify(train, f, v.c)}, e
			} else {
				res, err = Guard{CBMM: v.c, Method: "lbfgs"}.Fit(context.Background(), train)
			}
			if err != nil {
				t.Fatal(err)
			}
		} else {
			res = fit(t, v.c, train)[0]
		}
		checkNested(t, what+" "+v.name, res)
		loss := final(res.Fit)
		if v.c.Model != "3pl" && loss > final(one.Fit) {
			t.Errorf("%s %s: training loss %.10g, above the 1pl's %.10g", what, v.name, loss, final(one.Fit))
		}
		h, h1 := logLoss(res.Fit, test), logLoss(one.Fit, test)
		t.Logf("%s %s: loss %.2f (1pl %.2f), %d iterations, converged %v, certificate %.2g, held-out %.4f (1pl %.4f)",
			what, v.name, loss, final(one.Fit), res.Fit.Iterations, res.Fit.Converged, res.Certificate.MaxGradient, h, h1)
	}
	// mml: no "diverged"; the marginal loss never rises and stays finite.
	m, err := irtmml.MML2PL{MaxIter: 20}.Fit(context.Background(), train)
	if err != nil {
		t.Fatalf("%s mml: %v", what, err)
	}
	irttest.AssertMonotone(t, what+" mml", m.LossHistory)
	for j, a := range m.A {
		if math.IsNaN(a) || math.IsInf(a, 0) || math.IsNaN(m.B[j]) || math.IsInf(m.B[j], 0) {
			t.Fatalf("%s mml: item %d: a %v, d %v", what, j, a, m.B[j])
		}
	}
}
