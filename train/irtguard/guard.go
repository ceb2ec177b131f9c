// Package irtguard runs the fits of train/irt so that none can stop short
// of what it nests: every fit is run from more than one start, one of them
// the fit of the nested model (a 2PL from its 1PL, a 3PL from its 2PL,
// rank r from rank r − 1, each itself guarded), so that its objective can
// never end above the nested fit's; each start runs until a first-order
// certificate holds (Certify: the projected gradient per answer at most
// GradTol) as well as the loss-change test of its method, and the starts'
// ends are compared, so that a fit that depends on where it began says so.
package irtguard

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/irtfit"
	"github.com/jeirt/jeirt/model/progress"
	"github.com/jeirt/jeirt/train/irt"
	_ "github.com/jeirt/jeirt/train/irtlbfgs" // registers irt.MethodLBFGS
	_ "github.com/jeirt/jeirt/train/irtmml"   // registers irt.MethodMML
)

// Guard fits responses with the settings of CBMM (the model, rank, σ, Tol,
// MaxIter, device...) by Method, from several starts. The zero value of
// each setting means its default. CBMM.Trace sees the losses of every start
// of matrix k (not the nested fits' or the continued runs').
type Guard struct {
	CBMM irt.CBMM
	// Method is the irt.Fitter registered under it (irt.Lookup): "" is
	// irt.MethodCBMM. A joint method (cbmm, lbfgs) runs from several
	// starts, its nested fit always by cBMM; one that integrates θ out
	// (mml) is fitted once and certified by itself.
	Method irt.Method
	// GradTol is the certificate's tolerance on the largest projected
	// gradient per answer; 0 means DefaultGradTol.
	GradTol float64
	// AgreeTol is how close, relative, two starts' final losses must be to
	// count as the same optimum; 0 means DefaultAgreeTol.
	AgreeTol float64
	// MergeTol: a start whose fitted probabilities come within MergeTol of
	// another start's on every observed cell (compared every
	// irt.WatchEvery iterations) has reached the same optimum, and the
	// one of the two with the higher loss is stopped there (cbmm only);
	// 0 means DefaultMergeTol, negative never.
	MergeTol float64
	Log      progress.Logf
}

// Result is a guarded fit: the lowest of the starts' ends (Fit, whose
// Converged holds only with the certificate), and what each start reached;
// for a method that certifies its own fits (not joint: mml), the one fit
// and MethodCertificate, without starts.
type Result struct {
	Fit         *model.IRT
	Certificate Certificate
	GradTol     float64
	Starts      []irtfit.Start
	Agree       bool   // every start reached the chosen optimum (AgreeTol)
	Note        string // which starts did not, when they did not
	Nested      string // the nested model, "" for the 1PL
	NestedLoss  float64
	// NestedResult is the nested model's own guarded fit (nil for the 1PL).
	NestedResult *Result
	// Prior is the prior the fit ran under: the guard's, with the scales
	// it leaves to the data estimated (EB; model.Prior.AScaleAuto).
	Prior model.Prior
	EB    EBResult
	// MethodCertificate is the certificate of a method that certifies its
	// own fits (irt.Fitted.Certificate), nil for a joint method.
	MethodCertificate *irt.Certificate
}

// For is the guard of the fit s specifies.
func For(s irt.Spec, log progress.Logf) Guard {
	return Guard{CBMM: s.CBMM, Method: s.Method, GradTol: s.GradTol, Log: log}
}

// spec is the fit specification of g's settings.
func (g Guard) spec() irt.Spec { return irt.Spec{Method: g.Method, CBMM: g.CBMM, GradTol: g.GradTol} }

// fitter is the registered fitter of g's method, or an error naming it.
func (g Guard) fitter() (irt.Fitter, error) {
	f := irt.Lookup(g.Method)
	if f == nil {
		return nil, fmt.Errorf("irtguard: method %q: want %s", g.Method, irt.MethodNames(irt.Methods...))
	}
	if err := f.Check(g.spec(), nil); err != nil {
		return nil, fmt.Errorf("irtguard: %w", err)
	}
	return f, nil
}

// DefaultAgreeTol is Guard.AgreeTol's default. Joint maximum likelihood
// on real benchmarks leaves some parameters drifting slowly (near-perfect
// rows and columns) long after the rest have settled, so two starts of
// the same optimum can end a few 1e-6 apart; distinct optima are further.
const DefaultAgreeTol = 1e-4

// DefaultMergeTol is Guard.MergeTol's default. Two starts certified at
// the same optimum of the shipped benchmarks still differ by up to 0.012
// in some cell's probability (the certificate bounds gradients, not
// probabilities); starts at distinct optima differ by 0.6 and more.
const DefaultMergeTol = 1e-2

func (g Guard) withDefaults() Guard {
	if g.GradTol == 0 {
		g.GradTol = DefaultGradTol
	}
	if g.AgreeTol == 0 {
		g.AgreeTol = DefaultAgreeTol
	}
	if g.MergeTol == 0 {
		g.MergeTol = DefaultMergeTol
	}
	if g.Method == "" {
		g.Method = irt.MethodCBMM
	}
	g.CBMM = g.CBMM.WithDefaults()
	if g.CBMM.Log == nil {
		g.CBMM.Log = g.Log
	}
	return g
}

// nested returns the settings of the model c nests and its name, or ok
// false for the 1PL (nothing below it). The asymptote goes first (a 3PL
// nests its 2PL at the same rank), then the rank, then the common slope
// (model.Family.Nested).
func nested(c irt.CBMM) (n irt.CBMM, name string, ok bool) {
	n = c
	fam, famOK := c.Model.Nested()
	switch {
	case famOK && c.Model.HasAsymptote():
		n.Model, n.Guess, n.ItemGuess = fam, 0, nil
		return n, fam.String(), true
	case c.Rank > 1:
		n.Rank--
		n.Signed = c.Signed && n.Rank > 1
		return n, fmt.Sprintf("rank %d", n.Rank), true
	case famOK:
		n.Model = fam
		return n, fam.String(), true
	}
	return n, "", false
}

// Fit fits one response matrix.
func (g Guard) Fit(ctx context.Context, r *model.Responses) (*Result, error) {
	res, err := g.FitBatch(ctx, []*model.Responses{r})
	if err != nil {
		return nil, err
	}
	return res[0], nil
}

// FitBatch fits many response matrices; with cbmm, each stage runs all of
// them (and their starts) in one batch of the backend's hot loop.
func (g Guard) FitBatch(ctx context.Context, rs []*model.Responses) ([]*Result, error) {
	g = g.withDefaults()
	if g.CBMM.Prior.EstimatesScales() {
		// Each matrix's scales first (EmpiricalBayes), then each matrix
		// fitted under its own prior.
		ebs, err := g.resolvePriors(ctx, rs)
		if err != nil {
			return nil, err
		}
		out := make([]*Result, len(rs))
		for k, r := range rs {
			gk := g
			gk.CBMM.Prior = ebs[k].Prior
			if tr := g.CBMM.Trace; tr != nil {
				gk.CBMM.Trace = func(_, iter int, loss float64) { tr(k, iter, loss) }
			}
			res, err := gk.FitBatch(ctx, []*model.Responses{r})
			if err != nil {
				return nil, err
			}
			out[k] = res[0]
			out[k].EB = ebs[k]
		}
		return out, nil
	}
	c := g.CBMM
	fitter, err := g.fitter()
	if err != nil {
		return nil, err
	}
	if !fitter.Joint() {
		return g.fitOnce(ctx, fitter, rs)
	}
	K := len(rs)
	names := []string{"svd"}
	starts := make([][]*model.IRT, 1, 2)
	starts[0] = make([]*model.IRT, K)
	var nestRes []*Result
	nestC, nestName, hasNest := nested(c)
	if hasNest {
		ng := g
		ng.CBMM, ng.Method = nestC, irt.MethodCBMM
		ng.CBMM.Trace = nil
		if nestRes, err = ng.FitBatch(ctx, rs); err != nil {
			return nil, err
		}
		emb := make([]*model.IRT, K)
		for k, nr := range nestRes {
			emb[k] = embed(rs[k], nr.Fit, c)
		}
		names, starts = append(names, nestName), append(starts, emb)
	}
	// Every start of every matrix, in one batch (cbmm runs it as one).
	S := len(starts)
	all, ps := make([]*model.Responses, 0, S*K), make([]irt.Problem, 0, S*K)
	for s := range starts {
		for k, r := range rs {
			all, ps = append(all, r), append(ps, irt.Problem{R: r, From: starts[s][k]})
		}
	}
	matrix, startNames := make([]int, S*K), make([]string, S*K)
	for n := range matrix {
		matrix[n], startNames[n] = n%K, names[n/K]
	}
	sp := g.spec()
	if tr := c.Trace; tr != nil {
		sp.CBMM.Trace = func(n, iter int, loss float64) { tr(n%K, iter, loss) }
	}
	sp.CBMM.Watch = g.watcher(all, matrix, startNames)
	fitted, err := fitter.Fit(ctx, sp, ps)
	if err != nil {
		return nil, err
	}
	fits := make([]*model.IRT, S*K)
	for n, f := range fitted {
		fits[n] = f.Fit
	}
	merged := make([]bool, len(fits))
	settle(fits, merged)
	certs, err := g.polish(ctx, all, fits, merged, matrix, startNames)
	if err != nil {
		return nil, err
	}
	out := make([]*Result, K)
	for k := range rs {
		res := &Result{GradTol: g.GradTol, Agree: true, Prior: c.Prior, EB: EBResult{Prior: c.Prior, Settled: true}}
		best := 0
		for s := 1; s < S; s++ {
			if last(fits[s*K+k]) < last(fits[best*K+k]) {
				best = s
			}
		}
		chosen := fits[best*K+k]
		res.Fit, res.Certificate = chosen, certs[best*K+k]
		if n := res.Certificate.Separated; n > 0 {
			note := fmt.Sprintf("no finite estimate for the a and d of %d item(s) whose answers the abilities order perfectly: written where the fit stopped", n)
			if c.Prior.A > 0 {
				note = fmt.Sprintf("%d item(s) whose answers the abilities order perfectly have no finite maximum-likelihood a and d: their estimates are the posterior's", n)
			}
			if chosen.Note != "" {
				note = chosen.Note + "; " + note
			}
			chosen.Note = note
		}
		if hasNest {
			res.Nested, res.NestedLoss, res.NestedResult = nestName, fits[(S-1)*K+k].LossHistory[0], nestRes[k]
			if last(chosen) > res.NestedLoss*(1+1e-12)+1e-9 {
				return nil, fmt.Errorf("irtguard: response matrix %d: the fit's loss %.10g is above the nested %s fit's %.10g", k, last(chosen), nestName, res.NestedLoss)
			}
		}
		var far []string
		for s := 0; s < S; s++ {
			f, ct := fits[s*K+k], certs[s*K+k]
			st := irtfit.Start{Name: names[s], StartLoss: model.Float(f.LossHistory[0]), Loss: last(f), Iterations: f.Iterations,
				MaxGradient: model.Float(ct.MaxGradient), Converged: f.Converged, Chosen: s == best,
				MaxProbDiff: model.Float(maxProbDiff(rs[k], f, chosen, c.Threads))}
			if merged[s*K+k] {
				st.Merged = f.Note
			}
			res.Starts = append(res.Starts, st)
			if gap := (st.Loss - last(chosen)) / math.Abs(last(chosen)); gap > g.AgreeTol && !merged[s*K+k] {
				res.Agree = false
				far = append(far, fmt.Sprintf("from %s to loss %.10g (%.2g above)", st.Name, st.Loss, gap))
			}
		}
		if !res.Agree {
			res.Note = fmt.Sprintf("the starts reached different optima: the lowest, loss %.10g from %s, is written; %s", last(chosen), names[best], join(far))
		}
		out[k] = res
	}
	return out, nil
}

// FitFrom fits r by cBMM from the starting values start (same models,
// items and rank), to the same certificate as FitBatch's starts; tests use
// it to reach the optimum nearest a known truth.
func (g Guard) FitFrom(ctx context.Context, r *model.Responses, start *model.IRT) (*model.IRT, Certificate, error) {
	g = g.withDefaults()
	c := g.CBMM
	c.Watch = g.watcher([]*model.Responses{r}, []int{0}, []string{"given"})
	fits, err := c.FitBatchFrom(ctx, []*model.Responses{r}, []*model.IRT{start})
	if err != nil {
		return nil, Certificate{}, err
	}
	merged := []bool{false}
	settle(fits, merged)
	certs, err := g.polish(ctx, []*model.Responses{r}, fits, merged, []int{0}, []string{"given"})
	if err != nil {
		return nil, Certificate{}, err
	}
	return fits[0], certs[0], nil
}

// fitOnce fits each of rs once by f, a method that integrates θ out and
// certifies its own fits (not joint).
func (g Guard) fitOnce(ctx context.Context, f irt.Fitter, rs []*model.Responses) ([]*Result, error) {
	ps := make([]irt.Problem, len(rs))
	for k, r := range rs {
		ps[k].R = r
	}
	fitted, err := f.Fit(ctx, g.spec(), ps)
	if err != nil {
		return nil, err
	}
	out := make([]*Result, len(rs))
	for k, ft := range fitted {
		p := g.CBMM.Prior
		res := &Result{Fit: ft.Fit, GradTol: g.GradTol, Agree: true, Prior: p, EB: EBResult{Prior: p, Settled: true}, MethodCertificate: ft.Certificate}
		if ct := ft.Certificate; ct != nil {
			res.GradTol, res.Certificate = ct.GradTol, Certificate{MaxGradient: ct.MaxGradient, Where: ct.Where}
		}
		out[k] = res
	}
	return out, nil
}

// polish certifies each fit and continues those whose loss-change test
// stopped them before the certificate holds, from where they stopped with a
// tolerance 1,000 times smaller, while iterations remain (at most three
// times), cBMM's stopping as soon as the certificate holds (watcher); it
// then sets each fit's Converged: the method's own test, or a watcher's
// stop, and the certificate.
//
// A start merged into another (merged[k]: Guard.MergeTol) is certified
// where it stopped but not continued, and its Converged stays false;
// matrix and names say which matrix each fit is a start of, and its name.
func (g Guard) polish(ctx context.Context, rs []*model.Responses, fits []*model.IRT, merged []bool, matrix []int, names []string) ([]Certificate, error) {
	c := g.CBMM
	fitter, err := g.fitter()
	if err != nil {
		return nil, err
	}
	certs := make([]Certificate, len(fits))
	lossOK := make([]bool, len(fits)) // the method's own test has held
	for k, f := range fits {
		certs[k], lossOK[k] = Certify(rs[k], f, c), f.Converged
	}
	tol := c.Tol
	for round := 0; round < 3; round++ {
		var idx []int
		for k, f := range fits {
			if certs[k].MaxGradient > g.GradTol && f.Iterations < c.MaxIter && !merged[k] {
				idx = append(idx, k)
			}
		}
		if len(idx) == 0 {
			break
		}
		tol /= 1000
		// Each continues from where it stopped with the iterations it has
		// left (a batch run in one loop stops them all at the fewest).
		sub, ps := make([]*model.Responses, len(idx)), make([]irt.Problem, len(idx))
		mSub, nSub := make([]int, len(idx)), make([]string, len(idx))
		for n, k := range idx {
			sub[n], ps[n] = rs[k], irt.Problem{R: rs[k], From: fits[k], MaxIter: c.MaxIter - fits[k].Iterations}
			mSub[n], nSub[n] = matrix[k], names[k]
		}
		sp := g.spec()
		sp.CBMM.Tol, sp.CBMM.Trace = tol, nil
		sp.CBMM.Watch = g.watcher(sub, mSub, nSub)
		fitted, err := fitter.Fit(ctx, sp, ps)
		if err != nil {
			return nil, err
		}
		more := make([]*model.IRT, len(idx))
		for n, f := range fitted {
			more[n] = f.Fit
		}
		mergedSub := make([]bool, len(idx))
		settle(more, mergedSub)
		for n, k := range idx {
			merged[k] = mergedSub[n]
		}
		for n, k := range idx {
			m, f := more[n], fits[k]
			if len(m.LossHistory) < 2 || last(m) > last(f) {
				// No step taken (L-BFGS can stop before its first): f stands,
				// and so does its iteration count.
				f.Iterations = c.MaxIter
				continue
			}
			m.LossHistory = append(append([]float64(nil), f.LossHistory...), m.LossHistory[1:]...)
			m.Iterations += f.Iterations
			if lossOK[k] = lossOK[k] || m.Converged; lossOK[k] {
				m.Note = ""
			} else if !merged[k] {
				// The continuation's own cap and tolerance are not the fit's.
				m.Note = fmt.Sprintf("iteration limit %d reached before the relative loss change fell below %g", c.MaxIter, c.Tol)
			}
			fits[k], certs[k] = m, Certify(rs[k], m, c)
		}
	}
	for k, f := range fits {
		ct := certs[k]
		if merged[k] {
			continue
		}
		f.Converged = lossOK[k] && ct.MaxGradient <= g.GradTol
		if lossOK[k] && !f.Converged {
			f.Note = fmt.Sprintf("the loss changed by less than its tolerance but the projected gradient is %.3g per answer (%s), above %g, after %d iterations", ct.MaxGradient, ct.Where, g.GradTol, f.Iterations)
		}
	}
	return certs, nil
}

func last(f *model.IRT) float64 { return f.LossHistory[len(f.LossHistory)-1] }

func join(s []string) string {
	out := ""
	for k, v := range s {
		if k > 0 {
			out += ", "
		}
		out += v
	}
	return out
}

// mergedNote and certifiedNote start the notes of the fits watcher stops.
const (
	mergedNote    = "merged: "
	certifiedNote = "certified: "
)

// watcher is the irt.CBMM.Watch of a batch of fits of the responses rs
// (problem n is a start named names[n] of matrix matrix[n]): every
// irt.WatchEvery iterations it stops each running fit whose certificate
// holds (it has converged: nothing is gained by running on), and, of two
// running starts of one matrix whose probabilities are within MergeTol
// on every cell, the one with the higher loss (they have reached the same
// optimum; MergeTol < 0: never).
func (g Guard) watcher(rs []*model.Responses, matrix []int, names []string) func(int, []bool, []float64, func(int) *model.IRT) ([]int, []string) {
	return func(iter int, active []bool, loss []float64, view func(int) *model.IRT) (stop []int, why []string) {
		views := make([]*model.IRT, len(active))
		for n, on := range active {
			if !on {
				continue
			}
			views[n] = view(n)
			if ct := Certify(rs[n], views[n], g.CBMM); ct.MaxGradient <= g.GradTol {
				stop = append(stop, n)
				why = append(why, fmt.Sprintf("%sat iteration %d, projected gradient %.3g per answer", certifiedNote, iter, ct.MaxGradient))
				views[n] = nil
			}
		}
		if g.MergeTol < 0 {
			return stop, why
		}
		for a := range views {
			for b := a + 1; b < len(views) && views[a] != nil; b++ {
				if views[b] == nil || matrix[a] != matrix[b] {
					continue
				}
				if d := maxProbDiff(rs[a], views[a], views[b], g.CBMM.Threads); d <= g.MergeTol {
					lose, keep := a, b
					if loss[b] > loss[a] {
						lose, keep = b, a
					}
					stop = append(stop, lose)
					why = append(why, fmt.Sprintf("%sstopped at iteration %d, within %.2g of start %s's probabilities on every cell (the same optimum)", mergedNote, iter, d, names[keep]))
					views[lose] = nil
				}
			}
		}
		return stop, why
	}
}

// settle reads the notes watcher left: a certified fit has converged (its
// note cleared), a merged one has not (its note kept); it returns which
// were merged.
func settle(fits []*model.IRT, merged []bool) {
	for k, f := range fits {
		switch {
		case strings.HasPrefix(f.Note, certifiedNote):
			f.Converged, f.Note = true, ""
		case strings.HasPrefix(f.Note, mergedNote):
			merged[k] = true
		}
	}
}

// maxProbDiff is the largest |P_f − P_g| over r's observed cells.
func maxProbDiff(r *model.Responses, f, g *model.IRT, threads int) float64 {
	if f == g {
		return 0
	}
	d := 0.0
	for _, part := range inChunks(len(r.Label), threads, func(lo, hi int) float64 {
		d := 0.0
		for c := lo; c < hi; c++ {
			i, j := int(r.Model[c]), int(r.Item[c])
			d = math.Max(d, math.Abs(f.Prob(i, j)-g.Prob(i, j)))
		}
		return d
	}) {
		d = math.Max(d, part)
	}
	return d
}

// Fits is the guarded fit of each of rs by c (cBMM), as jeirt irt fit
// makes it, returning only the chosen fits: what refits (cross-validation
// folds, a selection's refit, a validation refit) use, so that every refit
// is the same fit.
func Fits(ctx context.Context, c irt.CBMM, rs []*model.Responses) ([]*model.IRT, error) {
	res, err := Guard{CBMM: c}.FitBatch(ctx, rs)
	if err != nil {
		return nil, err
	}
	out := make([]*model.IRT, len(res))
	for k, r := range res {
		out[k] = r.Fit
	}
	return out, nil
}
