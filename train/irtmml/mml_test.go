package irtmml

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/limits"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/eval"
	"github.com/jeirt/jeirt/train/irt/irttest"
)

// mmlRecovery is the correlation and RMSE of fit's a and b with the truth's.
func mmlRecovery(fit *model.IRT, truth *synth.Truth) (corrA, corrB, rmseA, rmseB float64) {
	J := len(truth.A)
	for j := 0; j < J; j++ {
		rmseA += (fit.A[j] - truth.A[j]) * (fit.A[j] - truth.A[j])
		rmseB += (fit.B[j] - truth.B[j]) * (fit.B[j] - truth.B[j])
	}
	return eval.Pearson(fit.A[:J], truth.A), eval.Pearson(fit.B[:J], truth.B),
		math.Sqrt(rmseA / float64(J)), math.Sqrt(rmseB / float64(J))
}

// mmlNegLogPosterior is the items' negative log posterior of a rank-1 2PL
// computed directly: per model, −log Σ_q π_q Π_cells P(y | θ_q) on MML2PL's
// default grid, plus the prior's penalties. It shares no code with Fit.
func mmlNegLogPosterior(r *model.Responses, a, b []float64, p model.Prior) float64 {
	const Q, limit = 61, 6.0
	grid, w := make([]float64, Q), make([]float64, Q)
	norm := 0.0
	for q := range grid {
		grid[q] = -limit + 2*limit*float64(q)/(Q-1)
		w[q] = math.Exp(-grid[q] * grid[q] / 2)
		norm += w[q]
	}
	ll := make([][]float64, r.NumModels())
	for i := range ll {
		ll[i] = make([]float64, Q)
		for q := range ll[i] {
			ll[i][q] = math.Log(w[q] / norm)
		}
	}
	for c, y := range r.Label {
		i, j := r.Model[c], r.Item[c]
		for q, th := range grid {
			pr := 1 / (1 + math.Exp(-(a[j]*th + b[j])))
			if y == 1 {
				ll[i][q] += math.Log(pr)
			} else {
				ll[i][q] += math.Log(1 - pr)
			}
		}
	}
	nlp := 0.0
	for _, l := range ll {
		mx := math.Inf(-1)
		for _, v := range l {
			mx = math.Max(mx, v)
		}
		s := 0.0
		for _, v := range l {
			s += math.Exp(v - mx)
		}
		nlp -= mx + math.Log(s)
	}
	for j := range a {
		if p.A > 0 {
			nlp += (a[j] - p.AMean) * (a[j] - p.AMean) / (2 * p.A * p.A)
		}
		if p.D > 0 {
			nlp += (b[j] - p.DMean) * (b[j] - p.DMean) / (2 * p.D * p.D)
		}
	}
	return nlp
}

// (a) With the default prior MML recovers simulated 2PL items about as well
// as without (500 models: the prior's pull is small), converges, and its
// estimate is a stationary point of the directly computed negative log
// posterior (central differences per item), which the prior-free estimate
// is not.
func TestMMLPriorRecovery(t *testing.T) {
	r, truth := irttest.Gen(t, synth.Options{Kind: "2pl", Models: 500, Items: 20, Seed: 21})
	ctx := context.Background()
	none, err := MML2PL{}.Fit(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	with, err := MML2PL{Prior: model.DefaultPrior}.Fit(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	ca0, cb0, ra0, rb0 := mmlRecovery(none, truth)
	ca1, cb1, ra1, rb1 := mmlRecovery(with, truth)
	t.Logf("no prior: %d iterations, converged %v; corr a %.4f b %.4f, RMSE a %.4f b %.4f", none.Iterations, none.Converged, ca0, cb0, ra0, rb0)
	t.Logf("prior %v: %d iterations, converged %v; corr a %.4f b %.4f, RMSE a %.4f b %.4f", model.DefaultPrior, with.Iterations, with.Converged, ca1, cb1, ra1, rb1)
	if !with.Converged || !none.Converged {
		t.Errorf("converged: prior %v (%s), none %v (%s)", with.Converged, with.Note, none.Converged, none.Note)
	}
	if ca1 < 0.9 || cb1 < 0.98 || ca1 < ca0-0.01 || cb1 < cb0-0.005 || ra1 > ra0+0.02 || rb1 > rb0+0.02 {
		t.Errorf("recovery with the prior: corr a %.4f b %.4f, RMSE a %.4f b %.4f; without: %.4f %.4f, %.4f %.4f", ca1, cb1, ra1, rb1, ca0, cb0, ra0, rb0)
	}
	irttest.AssertMonotone(t, "mml prior", with.LossHistory)

	// Stationarity of the negative log posterior at the prior's estimate:
	// |∂/∂a_j|, |∂/∂b_j| per answer well below GradTol's 1e-3, where the
	// prior-free estimate's gradient is the prior's pull.
	grad := func(fit *model.IRT, p model.Prior) float64 {
		worst := 0.0
		a, b := append([]float64(nil), fit.A...), append([]float64(nil), fit.B...)
		const h = 1e-5
		for j := 0; j < len(a); j += 4 { // 5 of the 20 items: the sum costs |Ω| x 61 log-sigmoids
			for _, v := range []*float64{&a[j], &b[j]} {
				v0 := *v
				*v = v0 + h
				up := mmlNegLogPosterior(r, a, b, p)
				*v = v0 - h
				down := mmlNegLogPosterior(r, a, b, p)
				*v = v0
				worst = math.Max(worst, math.Abs(up-down)/(2*h)/500)
			}
		}
		return worst
	}
	gWith, gNone := grad(with, model.DefaultPrior), grad(none, model.DefaultPrior)
	t.Logf("largest |gradient| per answer of the negative log posterior: %.2g at the prior's estimate, %.2g at the prior-free one", gWith, gNone)
	if gWith > 1e-4 || gNone < 10*gWith {
		t.Errorf("negative log posterior's gradient %.3g at the MAP estimate, %.3g at the ML one", gWith, gNone)
	}
	// The recorded loss is that negative log posterior (at the parameters of
	// the last E step).
	if d := with.LossHistory[len(with.LossHistory)-1] - mmlNegLogPosterior(r, with.A, with.B, model.DefaultPrior); math.Abs(d) > 1e-6 {
		t.Errorf("last loss differs from the negative log posterior at the estimate by %.3g", d)
	}
}

// (c) With the prior, EM accelerated by SQUAREM (the default) and plain EM
// reach the same estimate (to the tolerance), the accelerated one in fewer
// M steps, and neither loss history ever rises, also where extrapolations
// were rejected (the separated data). One goroutine gives the same bits.
func TestMMLPriorSquarem(t *testing.T) {
	sim, _ := irttest.Gen(t, synth.Options{Kind: "2pl", Models: 500, Items: 20, Seed: 21})
	ctx := context.Background()
	for _, d := range []struct {
		name string
		r    *model.Responses
	}{{"simulated", sim}, {"separated", separatedData(t)}} {
		fast, err := MML2PL{Prior: model.DefaultPrior}.Fit(ctx, d.r)
		if err != nil {
			t.Fatal(err)
		}
		plain, err := MML2PL{Prior: model.DefaultPrior, PlainEM: true}.Fit(ctx, d.r)
		if err != nil {
			t.Fatal(err)
		}
		diff := 0.0
		for j := range fast.A {
			diff = math.Max(diff, math.Max(math.Abs(fast.A[j]-plain.A[j]), math.Abs(fast.B[j]-plain.B[j])))
		}
		hf, hp := fast.LossHistory, plain.LossHistory
		t.Logf("%s: SQUAREM %d M steps (%d E steps), plain EM %d; loss %.9f vs %.9f; largest parameter difference %.2g",
			d.name, fast.Iterations, len(hf), plain.Iterations, hf[len(hf)-1], hp[len(hp)-1], diff)
		one, err := MML2PL{Prior: model.DefaultPrior, Threads: 1}.Fit(ctx, d.r)
		if err != nil {
			t.Fatal(err)
		}
		for j := range one.A { // the goroutines change nothing
			if math.Float64bits(one.A[j]) != math.Float64bits(fast.A[j]) || math.Float64bits(one.B[j]) != math.Float64bits(fast.B[j]) {
				t.Fatalf("%s: item %d differs on one goroutine: a %v vs %v, b %v vs %v", d.name, j, one.A[j], fast.A[j], one.B[j], fast.B[j])
			}
		}
		irttest.AssertMonotone(t, d.name+" squarem", hf)
		irttest.AssertMonotone(t, d.name+" plain", hp)
		if !fast.Converged || !plain.Converged || fast.Iterations >= plain.Iterations || diff > 1e-5 || math.Abs(hf[len(hf)-1]-hp[len(hp)-1]) > 1e-8*math.Abs(hp[0]) {
			t.Errorf("%s: converged %v/%v, %d vs %d M steps, parameters differ by %.3g, losses %.12g vs %.12g",
				d.name, fast.Converged, plain.Converged, fast.Iterations, plain.Iterations, diff, hf[len(hf)-1], hp[len(hp)-1])
		}
	}
}

// separatedData is a simulated 2PL (200 models, 10 items) with an item every
// model got right ("all-right") and one answered right exactly by the models
// whose score on the others is above the median ("separated").
func separatedData(t *testing.T) *model.Responses {
	r, _ := irttest.Gen(t, synth.Options{Kind: "2pl", Models: 200, Items: 10, Seed: 5})
	y := irttest.DenseFrom(r)
	scores := make([]int, len(y))
	for i, row := range y {
		for _, v := range row {
			scores[i] += v
		}
	}
	sorted := append([]int(nil), scores...)
	for i := range sorted { // insertion sort: 200 values
		for k := i; k > 0 && sorted[k] < sorted[k-1]; k-- {
			sorted[k], sorted[k-1] = sorted[k-1], sorted[k]
		}
	}
	median := sorted[len(sorted)/2]
	for i := range y {
		sep := 0
		if scores[i] > median {
			sep = 1
		}
		y[i] = append(y[i], 1, sep)
	}
	out := irttest.RespFromLabels(y)
	out.Items[10], out.Items[11] = "all-right", "separated"
	return out
}

// (b) An item every model got right and a perfectly separated one: with the
// default prior the fit converges and every parameter is finite and modest.
// Without it (today's behaviour, as before the prior) the separated item's
// slope runs off to about 500 (the marginal likelihood has no maximum) and
// EM stops there when the step is below Tol, calling that converged: the
// certificate's gradient is ~0 along the run-off ray. (c) The loss with the
// prior never rises.
func TestMMLPriorSeparated(t *testing.T) {
	r := separatedData(t)
	ctx := context.Background()
	with, err := MML2PL{Prior: model.DefaultPrior}.Fit(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("prior: %d iterations, converged %v; all-right a %.4f b %.4f; separated a %.4f b %.4f; loss %.6f -> %.6f",
		with.Iterations, with.Converged, with.A[10], with.B[10], with.A[11], with.B[11], with.LossHistory[0], with.LossHistory[len(with.LossHistory)-1])
	if !with.Converged {
		t.Errorf("not converged: %s", with.Note)
	}
	for _, v := range append(append(append([]float64(nil), with.A...), with.B...), with.Theta...) {
		if !model.Finite(v) {
			t.Fatalf("a parameter is %v", v)
		}
	}
	for j, a := range with.A {
		if math.Abs(a) >= 20 || math.Abs(with.B[j]) >= 20 {
			t.Errorf("item %s: a %.4g b %.4g", r.Items[j], a, with.B[j])
		}
	}
	if with.A[11] < 2 { // the separated item is the most discriminating
		t.Errorf("separated item's a %.4g", with.A[11])
	}
	irttest.AssertMonotone(t, "mml prior, separated", with.LossHistory)

	none, err := MML2PL{}.Fit(ctx, r)
	if err != nil {
		t.Fatalf("no prior: %v", err)
	}
	t.Logf("no prior: %d iterations, converged %v; all-right a %.4g b %.4g; separated a %.4g b %.4g", none.Iterations, none.Converged, none.A[10], none.B[10], none.A[11], none.B[11])
	if none.A[11] < 100 || math.Abs(none.B[11]) < 30 {
		t.Errorf("without a prior the separated item's a %.4g, b %.4g: want them run off (> 100, > 30)", none.A[11], none.B[11])
	}
	// Guttman data (every item separates): diverged without a prior (see
	// TestMMLDivergenceDetected), a converged finite fit with it.
	g, err := MML2PL{Prior: model.DefaultPrior}.Fit(ctx, irttest.Guttman(40, 15))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Guttman 40 x 15 with the prior: %d iterations, converged %v, max |a| %.4g", g.Iterations, g.Converged, maxAbs(g.A))
	if !g.Converged || maxAbs(g.A) >= 20 || maxAbs(g.B) >= 20 {
		t.Errorf("Guttman with the prior: converged %v (%s), max |a| %.4g, max |b| %.4g", g.Converged, g.Note, maxAbs(g.A), maxAbs(g.B))
	}
	irttest.AssertMonotone(t, "mml prior, Guttman", g.LossHistory)
}

func maxAbs(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = math.Max(m, math.Abs(x))
	}
	return m
}

// (d) Prior{} reproduces the pre-prior MML2PL (mmlReference, below) bit for
// bit, whatever the number of goroutines: on simulated data with missing
// cells stored in shuffled order, and with an item answered only right (its
// certificate left out).
func TestMMLNoPriorMatchesReference(t *testing.T) {
	r, _ := irttest.Gen(t, synth.Options{Kind: "2pl", Models: 200, Items: 12, Missing: 0.2, Seed: 8})
	rng := rand.New(rand.NewPCG(3, 4))
	rng.Shuffle(r.Len(), func(x, y int) {
		r.Model[x], r.Model[y] = r.Model[y], r.Model[x]
		r.Item[x], r.Item[y] = r.Item[y], r.Item[x]
		r.Label[x], r.Label[y] = r.Label[y], r.Label[x]
	})
	r.Invalidate()
	sep := separatedData(t)
	ctx := context.Background()
	for _, d := range []struct {
		name string
		r    *model.Responses
		c    MML2PL
	}{{"shuffled", r, MML2PL{}}, {"all-right", sep, MML2PL{MaxIter: 60}}, {"few points", r, MML2PL{Points: 21, Limit: 4, MaxIter: 30}}} {
		want, err := mmlReference(ctx, d.c, d.r)
		if err != nil {
			t.Fatal(err)
		}
		for _, threads := range []int{1, 3} {
			c := d.c
			c.Threads = threads
			got, err := c.Fit(ctx, d.r)
			if err != nil {
				t.Fatal(err)
			}
			same := got.Iterations == want.Iterations && got.Converged == want.Converged && got.Note == want.Note
			for _, p := range [][2][]float64{{got.A, want.A}, {got.B, want.B}, {got.Theta, want.Theta}, {got.LossHistory, want.LossHistory}} {
				if len(p[0]) != len(p[1]) {
					same = false
					continue
				}
				for k := range p[0] {
					if math.Float64bits(p[0][k]) != math.Float64bits(p[1][k]) {
						same = false
					}
				}
			}
			if !same {
				t.Errorf("%s, %d threads: differs from the reference: %d vs %d iterations, converged %v vs %v, a[0] %.17g vs %.17g, b[0] %.17g vs %.17g",
					d.name, threads, got.Iterations, want.Iterations, got.Converged, want.Converged, got.A[0], want.A[0], got.B[0], want.B[0])
			}
		}
		t.Logf("%s: %d iterations, converged %v, identical to the reference bit for bit", d.name, want.Iterations, want.Converged)
	}
}

// mmlSharedData is ../shared/data next to the repository root, or "".
func mmlSharedData() string {
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "data")
	if _, err := os.Stat(dir); err != nil {
		return ""
	}
	return dir
}

// BenchmarkMMLShared times MML2PL on ChemBench (22 x 2854) and SWE-bench
// Verified (134 x 500) of ../shared/data, with and without the default
// prior (the budget: 2 s each with the prior). go test -run X
// -bench MMLShared -benchtime 1x ./train/irt
func BenchmarkMMLShared(b *testing.B) {
	dir := mmlSharedData()
	if dir == "" {
		b.Skip("../shared/data is absent")
	}
	for _, f := range []struct{ name, path string }{
		{"chembench", "chembench/binary_matrix.csv"},
		{"swebench", "swebench-verified/response_matrix.csv"},
	} {
		r, _, err := read.File(filepath.Join(dir, f.path), read.Options{})
		if err != nil {
			b.Fatal(err)
		}
		for _, p := range []model.Prior{model.DefaultPrior, {}} {
			b.Run(fmt.Sprintf("%s/prior=%v", f.name, p), func(b *testing.B) {
				for k := 0; k < b.N; k++ {
					start := time.Now()
					fit, err := MML2PL{Prior: p}.Fit(context.Background(), r)
					if err != nil {
						b.Fatal(err)
					}
					b.Logf("%s %dx%d prior %v: %d iterations, converged %v, loss %.6f, %.3fs", f.name, r.NumModels(), r.NumItems(), p, fit.Iterations, fit.Converged, fit.LossHistory[len(fit.LossHistory)-1], time.Since(start).Seconds())
					b.ReportMetric(float64(fit.Iterations), "iterations")
				}
			})
		}
	}
}

// mmlReference is MML2PL.Fit as it was before the item prior and the
// E step's tables, kept verbatim (bar the receiver) as the reference the
// prior-free fit must match bit for bit: a softplus per (cell, point),
// one goroutine.
func mmlReference(ctx context.Context, c MML2PL, r *model.Responses) (*model.IRT, error) {
	if c.Points == 0 {
		c.Points = 61
	}
	if c.Limit == 0 {
		c.Limit = 6
	}
	if c.Tol == 0 {
		c.Tol = 1e-7
	}
	if c.MaxIter == 0 {
		c.MaxIter = 5000
	}
	if c.GradTol == 0 {
		c.GradTol = 1e-3
	}
	if r.Len() == 0 || c.Points < 2 {
		return nil, fmt.Errorf("mml: no observed cells")
	}
	Q, N, J := c.Points, r.NumModels(), r.NumItems()
	grid, logPrior := make([]float64, Q), make([]float64, Q)
	norm := 0.0
	for q := range grid {
		grid[q] = -c.Limit + 2*c.Limit*float64(q)/float64(Q-1)
		norm += math.Exp(-grid[q] * grid[q] / 2)
	}
	for q := range grid {
		logPrior[q] = -grid[q]*grid[q]/2 - math.Log(norm)
	}
	a, b := make([]float64, J), make([]float64, J)
	for j, p := range r.ItemAccuracy() {
		a[j] = 1
		if !math.IsNaN(p) {
			p = math.Min(math.Max(p, 0.01), 0.99)
			b[j] = math.Log(p / (1 - p))
		}
	}
	answered, right := make([]float64, J), make([]float64, J)
	for cell, y := range r.Label {
		answered[r.Item[cell]]++
		right[r.Item[cell]] += float64(y)
	}
	lastGrad := math.NaN()
	byModel := r.ByModel()
	n, k := make([]float64, J*Q), make([]float64, J*Q) // expected answers and corrects per item and point
	logL := make([]float64, Q)
	theta := make([]float64, N)
	var hist []float64
	converged := false
	iter := 0
	for iter = 1; iter <= c.MaxIter; iter++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// E step: posterior over the grid for each respondent.
		clear(n)
		clear(k)
		nll := 0.0
		for i := 0; i < N; i++ {
			copy(logL, logPrior)
			row := byModel.Row(i)
			for _, cell := range row {
				j := r.Item[cell]
				y := float64(r.Label[cell])*2 - 1
				for q, th := range grid {
					logL[q] -= model.Softplus(-(y * (a[j]*th + b[j])))
				}
			}
			mx := math.Inf(-1)
			for _, l := range logL {
				mx = math.Max(mx, l)
			}
			s, eap := 0.0, 0.0
			for q, l := range logL {
				logL[q] = math.Exp(l - mx)
				s += logL[q]
				eap += logL[q] * grid[q]
			}
			nll -= mx + math.Log(s)
			theta[i] = eap / s
			for _, cell := range row {
				j := int(r.Item[cell])
				for q := range grid {
					w := logL[q] / s
					n[j*Q+q] += w
					k[j*Q+q] += w * float64(r.Label[cell])
				}
			}
		}
		hist = append(hist, nll)
		if math.IsNaN(nll) || math.IsInf(nll, 0) || nll > hist[0]+0.01*math.Abs(hist[0]) {
			return nil, model.FieldErrorf("Method", "mml: diverged at EM iteration %d: the marginal loss is %.4g, up from %.4g at the start (items answered all right or all wrong by groups of models separate perfectly, and their discrimination runs off); use {Method} cbmm, whose prior keeps a finite", iter, nll, hist[0])
		}
		// M step: per item, Newton's method on the expected complete-data
		// log-likelihood Σ_q k log p + (n − k) log(1 − p).
		// The first Newton gradient is the marginal log-likelihood's
		// (Fisher's identity), the first-order certificate; each Newton
		// step is halved until Q does not fall, so EM stays monotone.
		move, grad := 0.0, 0.0
		for j := 0; j < J; j++ {
			aj, bj := a[j], b[j]
			qj := func(a, b float64) float64 {
				s := 0.0
				for q, th := range grid {
					if nq := n[j*Q+q]; nq > 0 {
						x := a*th + b
						s -= k[j*Q+q]*model.Softplus(-x) + (nq-k[j*Q+q])*model.Softplus(x)
					}
				}
				return s
			}
			for step := 0; step < 50; step++ {
				var ga, gb, haa, hab, hbb float64
				for q, th := range grid {
					nq := n[j*Q+q]
					if nq == 0 {
						continue
					}
					p := model.Sigmoid(aj*th + bj)
					res := k[j*Q+q] - nq*p
					w := nq * p * (1 - p)
					ga += res * th
					gb += res
					haa += w * th * th
					hab += w * th
					hbb += w
				}
				det := haa*hbb - hab*hab
				if !(det > 0) {
					break
				}
				if step == 0 && answered[j] > 0 && right[j] > 0 && right[j] < answered[j] {
					grad = math.Max(grad, math.Max(math.Abs(ga), math.Abs(gb))/answered[j])
				}
				da := (hbb*ga - hab*gb) / det
				db := (haa*gb - hab*ga) / det
				for q0, t := qj(aj, bj), 0; t < 40 && qj(aj+da, bj+db) < q0; t++ {
					da, db = da/2, db/2
				}
				aj += da
				bj += db
				if math.Abs(da)+math.Abs(db) < 1e-12 {
					break
				}
			}
			if math.IsNaN(aj) || math.IsInf(aj, 0) || math.IsNaN(bj) || math.IsInf(bj, 0) {
				return nil, model.FieldErrorf("Method", "mml: diverged at EM iteration %d: item %q's parameters became non-finite (a %v, b %v); use {Method} cbmm", iter, limits.Clip(r.Items[j]), aj, bj)
			}
			move = math.Max(move, math.Max(math.Abs(aj-a[j]), math.Abs(bj-b[j])))
			a[j], b[j] = aj, bj
		}
		lastGrad = grad
		if move < c.Tol {
			converged = grad <= c.GradTol
			break
		}
	}
	m := &model.IRT{Models: r.Models, Items: r.Items, Rank: 1, Sigma: 1, Theta: theta, A: a, B: b,
		LossHistory: hist, Iterations: min(iter, c.MaxIter), Converged: converged}
	switch {
	case !converged && iter <= c.MaxIter:
		m.Note = fmt.Sprintf("EM stopped moving (less than %g) but the marginal log-likelihood's gradient is %.3g per answer, above %g", c.Tol, lastGrad, c.GradTol)
	case !converged:
		m.Note = fmt.Sprintf("EM iteration limit %d reached while a parameter still moved more than %g per iteration", c.MaxIter, c.Tol)
	}
	return m, nil
}
