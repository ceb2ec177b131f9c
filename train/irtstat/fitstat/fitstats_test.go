package fitstat

import (
	"context"
	"math"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/irt"
	"github.com/jeirt/jeirt/train/irt/irttest"
	"github.com/jeirt/jeirt/train/irtmml"
)

// The log-likelihood equals a direct sum over the cells, and the fit's own
// objective (its last loss) is −(log-likelihood + log-prior), for every
// family, with and without the default prior, with 0/1 answers and with
// trials; AIC and BIC are the textbook formulas with the documented k.
func TestStatsDecomposeTheLoss(t *testing.T) {
	const N, J = 30, 40
	for _, trials := range []int{0, 4} {
		r, _ := irttest.Gen(t, synth.Options{Kind: "2pl", Models: N, Items: J, Seed: 5, Guess: 0.2, Trials: trials, Missing: 0.1})
		for _, fam := range []model.Family{model.OnePL, model.TwoPL, model.ThreePL} {
			for _, prior := range []model.Prior{{}, model.DefaultPrior} {
				c := irt.CBMM{Model: fam, Prior: prior, Accelerate: true, MaxIter: 300}
				fit, err := c.Fit(context.Background(), r)
				if err != nil {
					t.Fatal(err)
				}
				direct := 0.0
				for cell := range r.Label {
					p := fit.Prob(int(r.Model[cell]), int(r.Item[cell]))
					k, n := r.SuccessesAt(cell), float64(r.TrialsAt(cell))
					direct += k*math.Log(p) + (n-k)*math.Log(1-p)
				}
				lk := Likelihood{Prior: prior, FitGuess: fam.HasAsymptote()}
				st := lk.Statistics(r, fit)
				name := fam.String() + " prior " + prior.String()
				if math.Abs(st.LogLikelihood-direct) > 1e-9*math.Abs(direct) {
					t.Errorf("trials %d %s: log-likelihood %.12g, direct sum %.12g", trials, name, st.LogLikelihood, direct)
				}
				loss := fit.LossHistory[len(fit.LossHistory)-1]
				if got := -(st.LogLikelihood + st.LogPrior); math.Abs(got-loss) > 1e-8*math.Abs(loss) {
					t.Errorf("trials %d %s: −(log-likelihood %.10g + log-prior %.10g) = %.10g, the fit's loss %.10g", trials, name, st.LogLikelihood, st.LogPrior, got, loss)
				}
				if (st.LogPrior == 0) != (!prior.On() && !fam.HasAsymptote()) {
					t.Errorf("trials %d %s: log-prior %v", trials, name, st.LogPrior)
				}
				// k: the items' parameters, the abilities, less the gauge
				// (2 directions at rank 1) without a prior on θ.
				items := map[model.Family]int{model.OnePL: J + 1, model.TwoPL: 2 * J, model.ThreePL: 3 * J}[fam]
				want := items + N
				if !prior.On() {
					want -= 2
				}
				if st.Parameters != want {
					t.Errorf("trials %d %s: k = %d, want %d", trials, name, st.Parameters, want)
				}
				n := int(r.TotalTrials())
				if st.N != n || st.AIC != -2*st.LogLikelihood+2*float64(want) || st.BIC != -2*st.LogLikelihood+float64(want)*math.Log(float64(n)) {
					t.Errorf("trials %d %s: n %d AIC %v BIC %v (log-likelihood %v, k %d, answers %d)", trials, name, st.N, st.AIC, st.BIC, st.LogLikelihood, want, n)
				}
			}
		}
	}
}

// A marginal fit's log-likelihood is its EM objective at the estimate, its
// k the items' 2J (mirt's count), its n the models; graded scores have no
// AIC or BIC.
func TestStatsMarginalAndGraded(t *testing.T) {
	r, _ := irttest.Gen(t, synth.Options{Kind: "2pl", Models: 200, Items: 10, Seed: 3})
	fit, err := irtmml.MML2PL{}.Fit(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	st := Likelihood{Marginal: true}.Statistics(r, fit)
	loss := fit.LossHistory[len(fit.LossHistory)-1]
	if math.Abs(-st.LogLikelihood-loss) > 1e-6*math.Abs(loss) || st.LogPrior != 0 {
		t.Errorf("marginal log-likelihood %.10g (log-prior %v), EM's last loss %.10g", st.LogLikelihood, st.LogPrior, loss)
	}
	if st.Parameters != 20 || st.N != 200 || st.BIC != -2*st.LogLikelihood+20*math.Log(200) {
		t.Errorf("marginal k %d n %d BIC %v", st.Parameters, st.N, st.BIC)
	}
	if joint := LogLikelihood(r, fit); !(joint > st.LogLikelihood) {
		t.Errorf("the joint log-likelihood at the EAPs %v should exceed the marginal %v on 10 items", joint, st.LogLikelihood)
	}

	g, _ := irttest.Gen(t, synth.Options{Kind: "2pl", Models: 20, Items: 20, Seed: 4, Levels: 4})
	gf, err := irt.CBMM{}.Fit(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	gs := Likelihood{Prior: model.DefaultPrior}.Statistics(g, gf)
	if !gs.Quasi || !math.IsNaN(gs.AIC) || !math.IsNaN(gs.BIC) || math.IsNaN(gs.LogLikelihood) {
		t.Errorf("graded: quasi %v AIC %v BIC %v log-likelihood %v: want quasi, no AIC or BIC, a finite quasi-log-likelihood", gs.Quasi, gs.AIC, gs.BIC, gs.LogLikelihood)
	}
}

// The test information of a 2PL at a grid point is Σ_j (a_j/σ)²p_j(1 − p_j),
// computed here from the items, and its SE 1/√I; with trials each item's
// information counts its trials per answer; the 3PL's is Lord's.
func TestTestInformation(t *testing.T) {
	fit := &model.IRT{Rank: 1, Sigma: 1.5, A: []float64{0.5, 1, 2}, B: []float64{-1, 0, 1.5}}
	pts, err := TestInformation(fit, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 121 || pts[0].Theta != -6 || pts[120].Theta != 6 || pts[75].Theta != 1.5 {
		t.Fatalf("grid: %d points, %v .. %v, point 75 at %v", len(pts), pts[0].Theta, pts[len(pts)-1].Theta, pts[75].Theta)
	}
	for _, g := range []int{30, 60, 75} {
		th, want := pts[g].Theta, 0.0
		for j, a := range fit.A {
			p := 1 / (1 + math.Exp(-(th*a+fit.B[j])/1.5))
			want += a * a / (1.5 * 1.5) * p * (1 - p)
		}
		if math.Abs(pts[g].Information-want) > 1e-14 || math.Abs(pts[g].SE-1/math.Sqrt(want)) > 1e-12 {
			t.Errorf("θ %v: information %v se %v, want %v %v", th, pts[g].Information, pts[g].SE, want, 1/math.Sqrt(want))
		}
	}
	twice, _ := TestInformation(fit, []float64{2, 2, 2})
	if twice[60].Information != 2*pts[60].Information {
		t.Errorf("two trials per answer: information %v, want twice %v", twice[60].Information, pts[60].Information)
	}
	fit.C = []float64{0.25, 0, 0}
	three, _ := TestInformation(fit, nil)
	th := three[60].Theta
	s := 1 / (1 + math.Exp(-(th*0.5-1)/1.5))
	P := 0.25 + 0.75*s
	lord := 0.25 / (1.5 * 1.5) * (P - 0.25) * (P - 0.25) * (1 - P) / (0.75 * 0.75 * P)
	if got := three[60].Information - (pts[60].Information - ItemInformation(&model.IRT{Rank: 1, Sigma: 1.5, A: fit.A, B: fit.B}, 0, th, nil)); math.Abs(got-lord) > 1e-14 {
		t.Errorf("3PL item information at θ %v: %v, Lord's %v", th, got, lord)
	}
	if _, err := TestInformation(&model.IRT{Rank: 2, A: []float64{1, 1}, B: []float64{0}}, nil); err == nil {
		t.Error("rank 2: no error")
	}
}
