package irtrun

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/irtfit"
	"github.com/jeirt/jeirt/train/eval"
	"github.com/jeirt/jeirt/train/irt/irttest"
)

// Two benchmark files of the same models (in another order, with colliding
// item ids): the joint signed fit finds that the second loads negatively on
// the second ability.
func TestFitJointRecoversBenchmarkLoadings(t *testing.T) {
	full, truth := irttest.SignedTruth(300, 5)
	// Benchmark "ab": items 0-79 (groups alpha, beta); "g": items 80-119,
	// renamed i000-i039 and with the models listed in reverse.
	split := func(lo, hi int, rename, reverse bool) *model.Responses {
		r := &model.Responses{}
		N := full.NumModels()
		for i := 0; i < N; i++ {
			src := i
			if reverse {
				src = N - 1 - i
			}
			r.Models = append(r.Models, full.Models[src])
		}
		for j := lo; j < hi; j++ {
			id := full.Items[j]
			if rename {
				id = fmt.Sprintf("i%03d", j-lo)
			}
			r.Items = append(r.Items, id)
		}
		for c := range full.Label {
			j := int(full.Item[c])
			if j < lo || j >= hi {
				continue
			}
			m := full.Model[c]
			if reverse {
				m = int32(N-1) - m
			}
			r.Model, r.Item, r.Label = append(r.Model, m), append(r.Item, int32(j-lo)), append(r.Label, full.Label[c])
		}
		return r
	}
	rs := []*model.Responses{split(0, 80, false, false), split(80, 120, true, true)}
	job := FitJob{Settings: irtfit.Settings{Method: "cbmm", Rank: 2, Signed: true, Sigma: 1, Tol: 1e-6, MaxIter: 1000,
		Accelerate: true, Level: 0.95}, Data: []string{"ab.csv", "g.csv"}}
	fit, r, err := FitJoint(context.Background(), job, []string{"ab", "g"}, rs)
	if err != nil {
		t.Fatal(err)
	}
	if r.NumModels() != 300 || r.NumItems() != 120 || r.Items[0] != "ab/i000" || r.Items[80] != "g/i000" || r.Items[79] != "i079" {
		t.Fatalf("joined: %d models, %d items, ids %s %s %s", r.NumModels(), r.NumItems(), r.Items[0], r.Items[79], r.Items[80])
	}
	doc := fit.Folder.Doc
	// Paths are recorded absolute (a relative one named another file from another folder).
	absAB, _ := filepath.Abs("ab.csv")
	absG, _ := filepath.Abs("g.csv")
	if !doc.Settings.Joint || doc.Settings.Data != absAB+","+absG || len(doc.GroupLoadings) != 2 {
		t.Fatalf("fit.json: settings %+v, group loadings %+v", doc.Settings, doc.GroupLoadings)
	}
	for _, g := range doc.GroupLoadings {
		t.Logf("benchmark %s (%d items): mean loading %.3f", g.Group, g.Items, g.MeanLoading)
	}
	if g := doc.GroupLoadings[1]; g.Group != "g" || !(g.MeanLoading[1] < -0.3) {
		t.Errorf("benchmark g: %+v, want a clearly negative mean loading on dimension 2", g)
	}
	// The joined item order is the simulation's, so the loadings compare directly.
	for d := 0; d < 2; d++ {
		if rho := eval.Spearman(irttest.Column(fit.Fit.A, 2, d), irttest.Column(truth, 2, d)); rho < 0.9 {
			t.Errorf("dimension %d: Spearman %.4f < 0.9", d+1, rho)
		}
	}
	if _, _, err := FitJoint(context.Background(), job, []string{"ab"}, rs[:1]); err == nil {
		t.Error("one file: no error")
	}
}
