package irt

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/irtfit"
)

// CheckSettings reports settings of a fit folder that cannot be fitted
// (errors name the irt fit flags).
func CheckSettings(s irtfit.Settings) error {
	switch {
	case s.Rank < 1:
		return fmt.Errorf("--rank %d: must be at least 1", s.Rank)
	case !(s.Sigma > 0) || math.IsInf(s.Sigma, 0):
		return fmt.Errorf("--sigma %v: must be positive", s.Sigma)
	case !(s.MinA >= 0) || math.IsInf(s.MinA, 0):
		return fmt.Errorf("--min-a %v: must be finite and not negative", s.MinA)
	case !(s.Tol >= 0) || math.IsInf(s.Tol, 0):
		return fmt.Errorf("--tol %v: must not be negative", s.Tol)
	case s.Method != "cbmm" && s.Method != "lbfgs" && s.Method != "mml":
		return fmt.Errorf("--method %q: want cbmm, lbfgs or mml", s.Method)
	case s.Method != "cbmm" && s.Rank != 1:
		return fmt.Errorf("--method %s fits rank 1 only (got --rank %d)", s.Method, s.Rank)
	case s.Method != "cbmm" && s.Bootstrap > 0:
		return fmt.Errorf("--bootstrap needs --method cbmm")
	case s.Method == "mml" && s.Sigma != 1:
		return fmt.Errorf("--method mml uses sigma 1 (got --sigma %v)", s.Sigma)
	case s.Signed && (s.Method != "cbmm" || s.Rank < 2):
		return fmt.Errorf("--signed needs --method cbmm and --rank 2 or more (got --method %s --rank %d)", s.Method, s.Rank)
	case s.MaxIter < 1:
		return fmt.Errorf("--max-iter %d: must be at least 1", s.MaxIter)
	case s.Bootstrap < 0 || s.Bootstrap == 1:
		return fmt.Errorf("--bootstrap %d: must be 0 (none) or at least 2", s.Bootstrap)
	case !(s.Level > 0 && s.Level < 1):
		return fmt.Errorf("--level %v: must be in (0, 1)", s.Level)
	}
	return nil
}

// FitJob fits one or more response files with the same settings (cbmm: all
// in one batched run of the backend's hot loop) and builds their fit folders.
type FitJob struct {
	Settings irtfit.Settings
	Data     []string // the files, for settings.data and errors
	Version  string   // the jeirt release, written into fit.json
	// Log receives a line per fit and per bootstrap; nil is silent.
	Log model.Logf
	// Trace, when set, is called with file k's loss after each iteration and
	// the seconds since the start (cbmm, lbfgs).
	Trace func(k int, secs, loss float64)
}

// Fitted is one fitted file of a FitJob: its parameters, analysis and folder.
type Fitted struct {
	Fit      *model.IRT
	Analysis *Analysis
	Folder   *irtfit.Folder
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
			return nil, 0, fmt.Errorf("%s: --rank %d needs at least %d models and %d items; the data has %d models and %d items", j.Data[k], set.Rank, set.Rank, set.Rank, r.NumModels(), r.NumItems())
		}
	}
	var fits []*model.IRT
	var err error
	switch set.Method {
	case "cbmm":
		c := FromSettings(set)
		c.Log = j.Log
		c.Trace = func(k, _ int, loss float64) { record(k, loss) }
		fits, err = c.FitBatch(ctx, rs)
	default:
		fits = make([]*model.IRT, len(rs))
		for k, r := range rs {
			if set.Method == "lbfgs" {
				fits[k], err = LBFGS2PL{Sigma: set.Sigma, Tol: set.Tol, MaxIter: set.MaxIter, Threads: set.Threads,
					Trace: func(loss float64) { record(k, loss) }}.Fit(ctx, r)
			} else {
				fits[k], err = MML2PL{MaxIter: set.MaxIter}.Fit(ctx, r)
			}
			if err != nil {
				err = fmt.Errorf("%s: %w", j.Data[k], err)
				break
			}
		}
	}
	if err != nil {
		return nil, 0, err
	}
	out := make([]*Fitted, len(fits))
	for k, f := range fits {
		out[k] = &Fitted{Fit: f}
	}
	return out, time.Since(start).Seconds(), nil
}

// Analyze reports on fit k of the job (taking secs for the fit itself), runs
// its bootstrap when the settings ask for one, and builds its folder.
func (j FitJob) Analyze(ctx context.Context, k int, r *model.Responses, f *Fitted, secs float64) error {
	set := j.Settings
	set.Data = j.Data[k]
	fit := f.Fit
	j.Log.Printf("fit %s: %d iterations, loss %.6g, converged %v, %.2fs", set.Data, fit.Iterations,
		fit.LossHistory[len(fit.LossHistory)-1], fit.Converged, secs)
	an := Analyze(r, fit, AnalysisOptions{MinDiscrimination: set.MinA, RankMove: set.RankMove, Threads: set.Threads})
	var boot *BootstrapResult
	var bootSecs float64
	if set.Bootstrap > 0 {
		start := time.Now()
		var err error
		boot, err = Bootstrap{B: set.Bootstrap, Seed: set.Seed, Models: set.BootstrapModels, Level: set.Level,
			MaxMemory: set.MaxMemory, Fitter: FromSettings(set), Log: j.Log}.Run(ctx, r, fit)
		if err != nil {
			return fmt.Errorf("%s: %w", set.Data, err)
		}
		bootSecs = time.Since(start).Seconds()
		j.Log.Printf("bootstrap %s: %d replicates in %.2fs", set.Data, set.Bootstrap, bootSecs)
	}
	doc := irtfit.Doc{Version: j.Version, Settings: set, Seconds: secs, BootstrapSeconds: bootSecs}
	f.Analysis, f.Folder = an, NewFolder(doc, r, fit, an, boot)
	return nil
}
