package irt

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/irtfit"
	"github.com/jeirt/jeirt/model/read"
)

// guttman returns responses where model i answers item j right iff
// i > 2j+jitter: the items separate the models perfectly.
func guttman(n, m int) *model.Responses {
	r := &model.Responses{}
	for i := 0; i < n; i++ {
		r.Models = append(r.Models, fmt.Sprintf("m%d", i))
	}
	for j := 0; j < m; j++ {
		r.Items = append(r.Items, fmt.Sprintf("q%d", j))
	}
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			var y uint8
			if i > 2*j {
				y = 1
			}
			r.Model, r.Item, r.Label = append(r.Model, int32(i)), append(r.Item, int32(j)), append(r.Label, y)
		}
	}
	return r
}

// On perfectly separating data MML's discriminations run off; Fit used to
// report convergence with a loss of 1e149. It must fail or return a finite
// fit whose loss did not grow.
func TestMMLDivergenceDetected(t *testing.T) {
	fit, err := MML2PL{}.Fit(context.Background(), guttman(40, 15))
	if err != nil {
		if !strings.Contains(err.Error(), "diverged") {
			t.Errorf("error does not say diverged: %v", err)
		}
		return
	}
	h := fit.LossHistory
	last := h[len(h)-1]
	if math.IsNaN(last) || math.IsInf(last, 0) || last > h[0]*1.01 {
		t.Errorf("loss went from %v to %v, converged %v", h[0], last, fit.Converged)
	}
	for j, a := range fit.A {
		if math.IsNaN(a) || math.IsInf(a, 0) || math.IsNaN(fit.B[j]) || math.IsInf(fit.B[j], 0) {
			t.Errorf("item %d: a %v b %v", j, a, fit.B[j])
		}
	}
}

func TestCheckSettingsRefusesNaN(t *testing.T) {
	base := irtfit.Settings{Rank: 1, Sigma: 1, Method: "cbmm", MaxIter: 10, Level: 0.95, MinA: 0.1}
	if err := CheckSettings(base); err != nil {
		t.Fatal(err)
	}
	for _, s := range []func(*irtfit.Settings){
		func(s *irtfit.Settings) { s.MinA = math.NaN() },
		func(s *irtfit.Settings) { s.MinA = math.Inf(1) },
		func(s *irtfit.Settings) { s.Tol = math.NaN() },
		func(s *irtfit.Settings) { s.Level = math.NaN() },
		func(s *irtfit.Settings) { s.Sigma = math.NaN() },
	} {
		c := base
		s(&c)
		if err := CheckSettings(c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

// --rank 5 on 2 x 2 data is refused before fitting.
func TestFitJobRankAboveData(t *testing.T) {
	r := guttman(2, 2)
	job := FitJob{Settings: irtfit.Settings{Rank: 5, Sigma: 1, Method: "cbmm", MaxIter: 10, Level: 0.95}, Data: []string{"r.csv"}}
	if _, _, err := job.Run(context.Background(), []*model.Responses{r}); err == nil || !strings.Contains(err.Error(), "--rank 5") {
		t.Errorf("got %v", err)
	}
}

// On SWE-bench Verified (LLM-shaped: few models, many items, many items
// solved by none or all) MML diverged to a loss near 1e148 and reported
// convergence.
func TestMMLDivergesOnSWEBench(t *testing.T) {
	r, _, err := read.File("../../configs/data/swebench-verified/response_matrix.csv", read.Options{NoCache: true})
	if err != nil {
		t.Skip(err)
	}
	fit, err := MML2PL{MaxIter: 300}.Fit(context.Background(), r)
	if err == nil {
		h := fit.LossHistory
		t.Fatalf("no error: loss %v -> %v, converged %v", h[0], h[len(h)-1], fit.Converged)
	}
	if !strings.Contains(err.Error(), "diverged") {
		t.Errorf("error does not say diverged: %v", err)
	}
}
