package irtguard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/internal/stress"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/train/irt"
)

// sharedData is ../shared/data from the repository root, or the test is
// skipped when it is absent.
func sharedData(t *testing.T) string {
	t.Helper()
	dir := filepath.Join("..", "..", "..", "shared", "data")
	if _, err := os.Stat(dir); err != nil {
		t.Skip("../shared/data is absent")
	}
	return dir
}

// shipped are the files of ../shared/data, with the number of random 10%
// cell splits the corpus fits of each (splitsOf): with JEIRT_STRESS=full
// (CI), 100 of the sets of up to 70,000 cells and 5 of the larger ones; by
// default 5 and 1; under -short 3 and 1.
var shipped = []struct {
	file  string
	large bool
}{
	{"swebench-verified/response_matrix.csv", false},
	{"chembench/binary_matrix.csv", false},
	{"lsat/LSAT7.csv", false},
	{"lsat/LSAT6.csv", false},
	{"tumlu/response_matrix.csv", true},
	{"rewardbench/response_matrix.csv", true},
	{"mmlupro-partial/response_matrix.csv", true},
}

func splitsOf(large bool) int {
	switch {
	case large && stress.Full():
		return 5
	case large:
		return 1
	case stress.Full():
		return 100
	case testing.Short():
		return 3
	}
	return 5
}

// corpusIters caps each start of the shipped corpus: the nested
// inequalities hold at any iteration (every start is monotone, one starts
// at the nested fit), so the corpus checks them on short runs.
const corpusIters = 100

// Every shipped data set, on random splits of its cells (10% held out):
// 1PL >= 2PL >= its starts' best on the training cells, converged only with
// the certificate, starts that disagree say so, and (with at least 100
// models and 100 items, where joint ML's extra parameters have the data to
// support them) held-out log loss within heldOutMargin of the 1PL's. On
// the other sets the held-out comparison is logged: joint 2PL fits overfit
// 22 or 30 models, or abilities from 5 answers (LSAT), whatever the
// optimiser.
func TestShippedCorpus(t *testing.T) {
	dir := sharedData(t)
	for _, s := range shipped {
		t.Run(s.file, func(t *testing.T) {
			r, _, err := read.File(filepath.Join(dir, s.file), read.Options{NoCache: true})
			if err != nil {
				t.Fatal(err)
			}
			n := splitsOf(s.large)
			trains, tests := make([]*model.Responses, n), make([]*model.Responses, n)
			for k := range trains {
				trains[k], tests[k], _ = splitCells(r, 0.1, uint64(k+1))
			}
			res := fit(t, irt.CBMM{Accelerate: true, MaxIter: corpusIters}, trains...)
			worse, disagree := 0, 0
			for k, g := range res {
				checkNested(t, s.file, g)
				if !g.Agree {
					disagree++
					if !strings.Contains(g.Note, "different optima") {
						t.Errorf("split %d: starts disagree without saying so: %q", k, g.Note)
					}
				}
				h2, h1 := logLoss(g.Fit, tests[k]), logLoss(g.NestedResult.Fit, tests[k])
				if h2 > h1+heldOutMargin {
					worse++
					if r.NumModels() >= 100 && r.NumItems() >= 100 {
						t.Errorf("split %d: held-out log loss 2pl %.4f, 1pl %.4f (margin %g)", k, h2, h1, heldOutMargin)
					}
				}
			}
			t.Logf("%s: %d splits, %d with starts that disagree, %d with a held-out loss worse than the 1pl's by more than %g", s.file, n, disagree, worse, heldOutMargin)
		})
	}
}

// rank 2 >= ... and the 3PL against its 2PL on the smaller sets' splits:
// 5 of each with JEIRT_STRESS=full (CI), 1 by default.
func TestShippedCorpusRankAnd3PL(t *testing.T) {
	dir := sharedData(t)
	n := 1
	if stress.Full() {
		n = 5
	}
	for _, file := range []string{"swebench-verified/response_matrix.csv", "chembench/binary_matrix.csv"} {
		r, _, err := read.File(filepath.Join(dir, file), read.Options{NoCache: true})
		if err != nil {
			t.Fatal(err)
		}
		trains := make([]*model.Responses, n)
		for k := range trains {
			trains[k], _, _ = splitCells(r, 0.1, uint64(k+1))
		}
		for _, c := range []irt.CBMM{{Rank: 2, Accelerate: true, MaxIter: 100}, {Model: "3pl", Accelerate: true, MaxIter: 100}} {
			for _, g := range fit(t, c, trains...) {
				checkNested(t, file+" "+c.Model.String(), g)
			}
		}
	}
}
