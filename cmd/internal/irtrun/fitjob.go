package irtrun

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/irtfit"
	"github.com/jeirt/jeirt/model/limits"
	"github.com/jeirt/jeirt/model/progress"
	"github.com/jeirt/jeirt/train/backend"
	"github.com/jeirt/jeirt/train/irt"
	"github.com/jeirt/jeirt/train/irtguard"
	"github.com/jeirt/jeirt/train/irtstat"
)

// FitJob fits one or more response files with the same settings (cbmm: all
// in one batched run of the backend's hot loop) and builds their fit folders.
type FitJob struct {
	Settings irtfit.Settings
	Data     []string // the files, for settings.data and errors
	Version  string   // the jeirt release, written into fit.json
	// Log receives a line per fit and per bootstrap; nil is silent.
	Log progress.Logf
	// Trace, when set, is called with file k's loss after each iteration and
	// the seconds since the start (cbmm, lbfgs).
	Trace func(k int, secs, loss float64)
	// Device is the device the cBMM fits run on, as the run resolved it
	// (backend.Resolve); "" means Settings.Device, resolved by each fit.
	// Settings.Device stays the request, as fit.json records it.
	Device string
}

// specFor is the job's fit specification (SpecFor), on its device.
func (j FitJob) specFor(set irtfit.Settings, r *model.Responses) (irt.Spec, error) {
	sp, err := SpecFor(set, r)
	if j.Device != "" {
		sp.CBMM.Device = j.Device
	}
	return sp, err
}

// ran is the device the job's fits of set ran on: the resolved device of
// cBMM (its bootstrap too), the CPU for the other methods; "" when the job
// left cBMM's device to each fit.
func (j FitJob) ran(set irtfit.Settings) string {
	if irt.Method(set.Method) != irt.MethodCBMM {
		return backend.CPU
	}
	return j.Device
}

// Fitted is one fitted file of a FitJob: its parameters, analysis and folder.
type Fitted struct {
	Fit      *model.IRT
	Analysis *irtstat.Analysis
	Folder   *irtfit.Folder
	// Interrupted is set when the bootstrap was stopped: the folder holds
	// the fit and the replicates done (fit.json says so).
	Interrupted *irtstat.Interrupted
	// Guard is what the starts of a joint fit (cbmm, lbfgs) reached.
	Guard *irtguard.Result
	// Prior is the prior the fit ran under (settings.prior, any scale it
	// leaves to the data estimated), and EB how those were estimated.
	Prior model.Prior
	EB    irtguard.EBResult
	// MethodCertificate is the certificate of a method that certifies its
	// own fits (mml, which has no starts).
	MethodCertificate *irt.Certificate
}

// Run fits rs (one per Data file) and returns the fits and the seconds the
// fitting took; Analyze completes each one.
func (j FitJob) Run(ctx context.Context, rs []*model.Responses) ([]*Fitted, float64, error) {
	set := j.Settings
	start := time.Now()
	record := func(k int, loss float64) {
		if j.Trace != nil {
			j.Trace(k, time.Since(start).Seconds(), loss)
		}
	}
	for k, r := range rs {
		if n := min(r.NumModels(), r.NumItems()); set.Rank > n {
			return nil, 0, fmt.Errorf("%s: %w", j.Data[k], model.FieldErrorf("Rank", "{Rank} %d needs at least %d models and %d items; the data has %d models and %d items", set.Rank, set.Rank, set.Rank, r.NumModels(), r.NumItems()))
		}
	}
	sp, err := j.specFor(set, nil)
	if err != nil {
		return nil, 0, err
	}
	if _, err := strconv.ParseFloat(set.Guess, 64); set.Guess != "" && err != nil && len(rs) > 1 {
		return nil, 0, model.FieldErrorf("Guess", "{Guess} %s names a column of one benchmark's items file; it cannot go with several {Data} files", limits.Clip(set.Guess))
	}
	if len(rs) == 1 {
		if sp, err = j.specFor(set, rs[0]); err != nil {
			return nil, 0, err
		}
	}
	fitter := sp.Fitter()
	if fitter == nil {
		return nil, 0, model.FieldErrorf("Method", "{Method} %q: want %s", set.Method, irt.MethodNames(irt.Methods...))
	}
	sp.CBMM.Log = j.Log
	sp.CBMM.Trace = func(k, _ int, loss float64) { record(k, loss) }
	guard := irtguard.For(sp, j.Log)
	var guards []*irtguard.Result
	if fitter.Joint() {
		// Every file in one batch (cbmm: one run of the backend's hot loop).
		for k, r := range rs {
			if err := fitter.Check(sp, r); err != nil {
				return nil, 0, fmt.Errorf("%s: %w", j.Data[k], err)
			}
		}
		if guards, err = guard.FitBatch(ctx, rs); err != nil {
			return nil, 0, err
		}
	} else {
		// A method that integrates θ out fits each file on its own, after
		// the scales its prior leaves to the data are estimated as for the
		// joint fits (irtguard.Guard.EmpiricalBayes).
		guards = make([]*irtguard.Result, len(rs))
		for k, r := range rs {
			if err := fitter.Check(sp, r); err != nil {
				return nil, 0, fmt.Errorf("%s: %w", j.Data[k], err)
			}
			if guards[k], err = guard.Fit(ctx, r); err != nil {
				return nil, 0, fmt.Errorf("%s: %w", j.Data[k], err)
			}
		}
	}
	fits := make([]*model.IRT, len(guards))
	for k, g := range guards {
		fits[k] = g.Fit
	}
	out := make([]*Fitted, len(fits))
	for k, f := range fits {
		// Joint maximum likelihood (cbmm, lbfgs) estimates every θ; the
		// marginal fit integrates θ out, so only items can run off.
		prior, _ := set.PriorSpec() // its scales (estimated or not) bound the same parameters
		noteUnbounded(rs[k], f, fitter.Joint(), prior)
		g := guards[k]
		out[k] = &Fitted{Fit: f, Prior: g.Prior, EB: g.EB, MethodCertificate: g.MethodCertificate}
		if fitter.Joint() {
			out[k].Guard = g
		}
	}
	return out, time.Since(start).Seconds(), nil
}

// Analyze reports on fit k of the job (taking secs for the fit itself), runs
// its bootstrap when the settings ask for one, and builds its folder.
func (j FitJob) Analyze(ctx context.Context, k int, r *model.Responses, f *Fitted, secs float64) error {
	set := j.Settings
	set.Data = j.Data[k]
	// The data files as fit.json records them (absolute, hashed), taken
	// now: an interrupted bootstrap cancels every later read.
	src := set
	if err := src.RecordSources(); err != nil {
		return fmt.Errorf("recording the fit's data files: %w", err)
	}
	fit := f.Fit
	note := ""
	if fit.Note != "" {
		note = " (" + fit.Note + ")"
	}
	what := "loss"
	if p, _ := set.PriorSpec(); p.On() {
		what = "negative log posterior"
	}
	j.Log.Printf("fit %s: %d iterations, %s %.6g, converged %v%s, %.2fs", set.Data, fit.Iterations, what,
		fit.LossHistory[len(fit.LossHistory)-1], fit.Converged, note, secs)
	minAnswers := set.MinAnswers
	if minAnswers == 0 {
		minAnswers = -1 // settings record 0 for none
	}
	an := irtstat.Analyze(r, fit, irtstat.AnalysisOptions{MinDiscrimination: set.MinA, RankMove: set.RankMove, MinAnswers: minAnswers, Threads: set.Threads})
	var boot *irtstat.BootstrapResult
	var bootSecs float64
	if set.Bootstrap > 0 {
		start := time.Now()
		var err error
		ranked := make([]bool, len(an.Rank))
		for i, rk := range an.Rank {
			ranked[i] = rk > 0
		}
		sp, err := j.specFor(set, r)
		if err != nil {
			return fmt.Errorf("%s: %w", set.Data, err)
		}
		fitter := sp.CBMM      // the replicates are cBMM fits (CheckSettings)
		fitter.Prior = f.Prior // the replicates run under the fit's own prior, its scales as estimated
		boot, err = irtstat.Bootstrap{B: set.Bootstrap, Seed: set.Seed, Models: set.BootstrapModels, Level: set.Level,
			MaxMemory: set.MaxMemory, Fitter: fitter, Log: j.Log, Ranked: ranked}.Run(ctx, r, fit)
		bootSecs = time.Since(start).Seconds()
		if errors.As(err, &f.Interrupted) {
			err = nil
			kept := "no intervals (fewer than 2 replicates)"
			if boot != nil {
				kept = fmt.Sprintf("intervals from those %d", boot.B)
			}
			j.Log.Printf("bootstrap %s: interrupted after %d of %d replicates in %.2fs; keeping the fit, %s", set.Data,
				f.Interrupted.Done, set.Bootstrap, bootSecs, kept)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", set.Data, err)
		}
		if f.Interrupted == nil {
			j.Log.Printf("bootstrap %s: %d replicates in %.2fs", set.Data, set.Bootstrap, bootSecs)
		}
	}
	set.DeviceResolved = j.ran(set)
	set.Data, set.Items, set.JointData, set.DataSHA256, set.JointSHA256 = src.Data, src.Items, src.JointData, src.DataSHA256, src.JointSHA256
	doc := irtfit.Doc{Version: j.Version, Settings: set, Seconds: secs, BootstrapSeconds: bootSecs}
	if asked, _ := set.PriorSpec(); asked.EstimatesScales() {
		doc.PriorFitted = f.Prior.String()
		j.Log.Printf("prior %s: scales estimated from the data (empirical Bayes, %d rounds, settled %v): %s", set.Data, f.EB.Rounds, f.EB.Settled, doc.PriorFitted)
	}
	if set.Bootstrap > 0 {
		done := set.Bootstrap
		if f.Interrupted != nil {
			done, doc.Interrupted = f.Interrupted.Done, true
		}
		doc.BootstrapCompleted = &done
	}
	f.Analysis, f.Folder = an, NewFolder(doc, r, fit, an, boot)
	d := &f.Folder.Doc
	d.MaxGradient = model.Float(math.NaN())
	if g := f.Guard; g != nil {
		agree := g.Agree
		d.Settings.GradTol, d.MaxGradient = g.GradTol, model.Float(g.Certificate.MaxGradient)
		d.Starts, d.StartsAgree, d.StartsNote, d.Nested, d.NestedLoss = g.Starts, &agree, g.Note, g.Nested, g.NestedLoss
		if !agree {
			j.Log.Printf("fit %s: %s", set.Data, g.Note)
		}
	}
	if c := f.MethodCertificate; c != nil {
		d.Settings.GradTol, d.MaxGradient = c.GradTol, model.Float(c.MaxGradient)
	}
	return nil
}

// noteUnbounded says in fit.Note which parameters the data r leave without a
// finite estimate, and marks the fit not converged when nothing estimable is
// left. An item answered only right (or only wrong) has its likelihood rise
// for ever as d → ±∞, and under joint maximum likelihood (jointML) so has a
// model's θ; setting those aside can leave others constant in turn, so they
// are set aside until none is. When fewer than two models or two items keep
// both kinds of answer, every parameter ran off to wherever the optimiser
// stopped (all-correct data: d near 40, b near −70), whatever its own
// stopping test said.
//
// Under a prior (model.Prior) the parameters it bounds have a finite
// posterior optimum: the note names them as having no finite
// maximum-likelihood estimate, and their estimates are the posterior's.
func noteUnbounded(r *model.Responses, fit *model.IRT, jointML bool, prior model.Prior) {
	N, J := r.NumModels(), r.NumItems()
	outM, outI := make([]bool, N), make([]bool, J)
	seenM, seenI := make([]bool, N), make([]bool, J)
	for c := range r.Label {
		seenM[r.Model[c]], seenI[r.Item[c]] = true, true
	}
	rightM, wrongM := make([]int, N), make([]int, N)
	rightI, wrongI := make([]int, J), make([]int, J)
	for changed := true; changed; {
		changed = false
		clear(rightM)
		clear(wrongM)
		clear(rightI)
		clear(wrongI)
		for c := range r.Label {
			i, j := r.Model[c], r.Item[c]
			if outM[i] || outI[j] {
				continue
			}
			// A cell of several trials or a graded score can be partly
			// right and partly wrong.
			if k := r.SuccessesAt(c); k > 0 {
				rightM[i]++
				rightI[j]++
			}
			if k := r.SuccessesAt(c); k < float64(r.TrialsAt(c)) {
				wrongM[i]++
				wrongI[j]++
			}
		}
		for j := range outI {
			if !outI[j] && seenI[j] && (rightI[j] == 0 || wrongI[j] == 0) {
				outI[j], changed = true, true
			}
		}
		for i := range outM {
			if jointML && !outM[i] && seenM[i] && (rightM[i] == 0 || wrongM[i] == 0) {
				outM[i], changed = true, true
			}
		}
	}
	count := func(out, seen []bool) (n, kept int) {
		for k := range out {
			switch {
			case out[k]:
				n++
			case seen[k]:
				kept++
			}
		}
		return n, kept
	}
	nI, keptI := count(outI, seenI)
	nM, keptM := count(outM, seenM)
	if !jointML { // models count when they answered a kept item
		onKept := make([]bool, N)
		for c := range r.Label {
			onKept[r.Model[c]] = onKept[r.Model[c]] || !outI[r.Item[c]]
		}
		_, keptM = count(make([]bool, N), onKept)
	}
	if nI == 0 && nM == 0 {
		return
	}
	var parts, params []string
	if nI > 0 {
		parts, params = append(parts, plural(nI, "item")), append(params, fmt.Sprintf("the d of %s", plural(nI, "item")))
	}
	if nM > 0 {
		parts, params = append(parts, plural(nM, "model")), append(params, fmt.Sprintf("the θ of %s", plural(nM, "model")))
	}
	bounded := (prior.D > 0 || nI == 0) && (prior.Theta > 0 || nM == 0)
	if bounded && keptM >= 2 && keptI >= 2 {
		note := fmt.Sprintf("no finite maximum-likelihood estimate for %s answered only right or only wrong: their estimates are the posterior's", strings.Join(params, " and "))
		if fit.Note != "" {
			note = fit.Note + "; " + note
		}
		fit.Note = note
		return
	}
	if keptM >= 2 && keptI >= 2 {
		note := fmt.Sprintf("no finite estimate for %s answered only right or only wrong: written where the fit stopped", strings.Join(params, " and "))
		if fit.Note != "" {
			note = fit.Note + "; " + note
		}
		fit.Note = note
		return
	}
	maxD, maxTheta := 0.0, 0.0
	for _, v := range fit.B {
		maxD = math.Max(maxD, math.Abs(v))
	}
	for _, v := range fit.Theta {
		maxTheta = math.Max(maxTheta, math.Abs(v))
	}
	if bounded {
		// The posterior's optimum is finite and certified, but it is the
		// prior's: the data say nothing of the parameters.
		note := fmt.Sprintf("degenerate data: setting aside the %s answered only right or only wrong leaves %s x %s; "+
			"the likelihood has no finite optimum, and every estimate is the prior's pull alone, not information from the data (largest |d| %.3g, |θ| %.3g)",
			strings.Join(parts, " and "), plural(keptM, "model"), plural(keptI, "item"), maxD, maxTheta)
		if fit.Note != "" {
			note = fit.Note + "; " + note
		}
		fit.Note = note
		return
	}
	fit.Converged = false
	fit.Note = fmt.Sprintf("degenerate data: setting aside the %s answered only right or only wrong leaves %s x %s; "+
		"the likelihood has no finite optimum and every parameter is where the fit stopped (largest |d| %.3g, |θ| %.3g)",
		strings.Join(parts, " and "), plural(keptM, "model"), plural(keptI, "item"), maxD, maxTheta)
}

// plural is "1 item", "2 items".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
