package fitstat

import (
	"context"
	"math"
	"sort"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/irt"
	"github.com/jeirt/jeirt/train/irt/irttest"
)

// aberrant rewrites the answers of the first n models of simulated 2PL data
// against their ability: each solves the harder half of the items (by the
// true difficulty −d/a) and misses the easier half.
func aberrant(r *model.Responses, truth *synth.Truth, n int) {
	J := r.NumItems()
	b := make([]float64, J)
	for j := range b {
		b[j] = -truth.B[j] / truth.A[j]
	}
	s := append([]float64(nil), b...)
	sort.Float64s(s)
	median := s[J/2]
	for c := range r.Label {
		if int(r.Model[c]) < n {
			r.Label[c] = 0
			if b[r.Item[c]] >= median {
				r.Label[c] = 1
			}
		}
	}
}

// On simulated 2PL rows lz* is about N(0, 1); rows that solve the hard
// items and miss the easy ones are strongly negative and flagged, and the
// consistent rows beside them are not, under the default prior (MAP θ) and
// under joint maximum likelihood.
func TestPersonFitFlagsAberrantRows(t *testing.T) {
	const N, J, bad = 300, 60, 6
	for _, prior := range []model.Prior{model.DefaultPrior, {}} {
		for _, n := range []int{0, bad} {
			r, truth := irttest.Gen(t, synth.Options{Kind: "2pl", Models: N, Items: J, Seed: 21})
			aberrant(r, truth, n)
			fit, err := irt.CBMM{Prior: prior, Accelerate: true}.Fit(context.Background(), r)
			if err != nil {
				t.Fatal(err)
			}
			pf := PersonFits(r, fit, PersonFitOptions{ThetaSD: prior.Theta})
			var z []float64
			for i, f := range pf {
				if i < n {
					if !(f.LZStar < -5) || !(f.Outfit > 1.5) {
						t.Errorf("prior %s: aberrant model %d: lz* %.3f outfit %.3f: want lz* < −5, outfit > 1.5", prior, i, f.LZStar, f.Outfit)
					}
					continue
				}
				if !math.IsNaN(f.LZStar) {
					z = append(z, f.LZStar)
				}
			}
			mean, sd := meanSD(z)
			flagged := 0
			for _, v := range z {
				if v < -PersonMisfitZ {
					flagged++
				}
			}
			t.Logf("prior %s, %d aberrant rows: %d consistent rows: lz* mean %.3f sd %.3f, %d below −%.3f", prior, n, len(z), mean, sd, flagged, PersonMisfitZ)
			if len(z) < N-n-10 || flagged > 6 {
				t.Errorf("prior %s, %d aberrant rows: %d consistent rows with lz*, %d flagged: want at least %d, at most 6 flagged", prior, n, len(z), flagged, N-n-10)
			}
			// Without aberrant rows the items are those of the model, and
			// lz* is about N(0, 1); aberrant rows in the fit flatten the
			// slopes, and the others' lz* shifts up a little.
			if n == 0 && (math.Abs(mean) > 0.15 || sd < 0.85 || sd > 1.15) {
				t.Errorf("prior %s: lz* of consistent rows mean %.3f sd %.3f: want about N(0, 1)", prior, mean, sd)
			}
		}
	}
}

func meanSD(v []float64) (float64, float64) {
	m := 0.0
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	s := 0.0
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	return m, math.Sqrt(s / float64(len(v)-1))
}

// lz* of the 2PL at rank 1 by the textbook formula (Snijders 2001 with
// r_j = a_j, w_j = logit P_j), computed here from the cells, matches
// PersonFits; so do infit and outfit.
func TestPersonFitFormula(t *testing.T) {
	r, _ := irttest.Gen(t, synth.Options{Kind: "2pl", Models: 8, Items: 30, Seed: 2})
	fit, err := irt.CBMM{Prior: model.DefaultPrior}.Fit(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	pf := PersonFits(r, fit, PersonFitOptions{ThetaSD: 1})
	bm := r.ByModel()
	for i := 0; i < r.NumModels(); i++ {
		var W, num, den, V, inN, inD, out float64
		row := bm.Row(i)
		for _, c := range row {
			j := int(r.Item[c])
			p := fit.Prob(i, j)
			a := fit.A[j]
			w := math.Log(p / (1 - p))
			y := float64(r.Label[c])
			W += (y - p) * w
			num += a * p * (1 - p) * w
			den += a * a * p * (1 - p)
			inN += (y - p) * (y - p)
			inD += p * (1 - p)
			out += (y - p) * (y - p) / (p * (1 - p))
		}
		cn := num / den
		for _, c := range row {
			j := int(r.Item[c])
			p := fit.Prob(i, j)
			wt := math.Log(p/(1-p)) - cn*fit.A[j]
			V += p * (1 - p) * wt * wt
		}
		want := (W + cn*(-fit.Theta[i])) / math.Sqrt(V)
		if math.Abs(pf[i].LZStar-want) > 1e-9 || math.Abs(pf[i].Infit-inN/inD) > 1e-12 || math.Abs(pf[i].Outfit-out/float64(len(row))) > 1e-12 {
			t.Errorf("model %d: lz* %.12g infit %.12g outfit %.12g, want %.12g %.12g %.12g", i, pf[i].LZStar, pf[i].Infit, pf[i].Outfit, want, inN/inD, out/float64(len(row)))
		}
	}
}

// A model with one answer has no lz* (the correction for its θ takes the
// one degree of freedom), a model answering only right under maximum
// likelihood no person fit at all (no finite θ), and graded scores none.
func TestPersonFitUndefined(t *testing.T) {
	r := irttest.RespFromLabels([][]int{{1, -1, -1, -1}, {1, 1, 1, 1}, {1, 0, 1, 0}, {0, 1, 0, 0}})
	fit := &model.IRT{Rank: 1, Sigma: 1, Theta: []float64{0.5, 2, 0, -1}, A: []float64{1, 1.5, 0.5, 2}, B: []float64{0, -0.5, 0.5, 1}}
	pf := PersonFits(r, fit, PersonFitOptions{ThetaSD: 1})
	if !math.IsNaN(pf[0].LZStar) || math.IsNaN(pf[0].Infit) || math.IsNaN(pf[1].LZStar) || math.IsNaN(pf[2].LZStar) {
		t.Errorf("MAP: %+v", pf)
	}
	ml := PersonFits(r, fit, PersonFitOptions{})
	if !math.IsNaN(ml[1].LZStar) || !math.IsNaN(ml[1].Infit) || !math.IsNaN(ml[1].Outfit) || math.IsNaN(ml[2].LZStar) {
		t.Errorf("ML: %+v", ml)
	}
	r.Successes = []float64{1, 1, 1, 1, 0.5, 1, 0, 1, 0, 0, 1, 0, 0}
	r.Trials = []int32{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}
	for i, p := range PersonFits(r, fit, PersonFitOptions{ThetaSD: 1}) {
		if !math.IsNaN(p.LZStar) || !math.IsNaN(p.Infit) || !math.IsNaN(p.Outfit) {
			t.Errorf("graded: model %d: %+v", i, p)
		}
	}
}

// At rank 2 the correction is taken along both dimensions: on simulated
// two-dimensional data lz* of consistent rows is about N(0, 1), and rows
// that answer the items against both abilities (right where the model
// expects a miss and wrong where it expects a right answer) are strongly
// negative.
func TestPersonFitRank2(t *testing.T) {
	const N, J, bad = 300, 80, 4
	r, truth := irttest.Gen(t, synth.Options{Kind: "mirt", Rank: 2, Models: N, Items: J, Seed: 9})
	for c := range r.Label {
		if i := int(r.Model[c]); i < bad {
			r.Label[c] = 0
			if truth.OracleP(i, int(r.Item[c])) < 0.5 {
				r.Label[c] = 1
			}
		}
	}
	fit, err := irt.CBMM{Rank: 2, Prior: model.DefaultPrior, Accelerate: true}.Fit(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	pf := PersonFits(r, fit, PersonFitOptions{ThetaSD: 1})
	var z []float64
	for i, f := range pf {
		if i < bad {
			if !(f.LZStar < -5) {
				t.Errorf("aberrant model %d: lz* %.3f, want < −5", i, f.LZStar)
			}
			continue
		}
		z = append(z, f.LZStar)
	}
	mean, sd := meanSD(z)
	t.Logf("rank 2: %d consistent rows: lz* mean %.3f sd %.3f", len(z), mean, sd)
	if math.IsNaN(mean) || math.Abs(mean) > 0.35 || sd < 0.75 || sd > 1.25 {
		t.Errorf("rank 2: lz* of consistent rows mean %.3f sd %.3f: want about N(0, 1)", mean, sd)
	}
}

// With few models the items are fitted to those models' own answers, and
// lz* of consistent rows leans positive: conservative, no row flagged.
func TestPersonFitFewModels(t *testing.T) {
	r, _ := irttest.Gen(t, synth.Options{Kind: "2pl", Models: 22, Items: 2000, Seed: 3})
	fit, err := irt.CBMM{Prior: model.DefaultPrior, Accelerate: true}.Fit(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	var z []float64
	for _, f := range PersonFits(r, fit, PersonFitOptions{ThetaSD: 1}) {
		z = append(z, f.LZStar)
		if f.LZStar < -PersonMisfitZ {
			t.Errorf("a consistent row flagged: lz* %.3f", f.LZStar)
		}
	}
	mean, sd := meanSD(z)
	t.Logf("22 models x 2000 items: lz* mean %.3f sd %.3f", mean, sd)
	if !(mean > 0.5) {
		t.Errorf("lz* mean %.3f: want the positive lean of few models (> 0.5)", mean)
	}
}
