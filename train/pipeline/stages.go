package pipeline

import (
	"context"
	"time"

	"github.com/jeirt/jeirt/encoder"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/progress"
	"github.com/jeirt/jeirt/train/jeirt"
	"github.com/jeirt/jeirt/train/route"
)

// The stages of the pipeline, in the order Run calls them: LoadSplits,
// Encode, TrainSplit (the fit and the routing default), then the
// evaluation and the checkpoint's write. A command that runs the pipeline
// its own way (route eval --splits: many splits, no write) calls the same
// stages.

// Encode is the encode stage: the encoder vectors of every item of all
// (NumItems x enc.Dim(), row-major), cached under cache ("" for none). An
// encoder that learns from text (encoder.Fitter) is fitted on trainR's
// question texts first, so the validation and test texts stay unseen.
func Encode(ctx context.Context, enc encoder.Encoder, all, trainR *model.Responses, cache string, log progress.Logf) ([]float32, error) {
	if f, ok := enc.(encoder.Fitter); ok {
		if err := f.Fit(ctx, trainR.ObservedItemTexts()); err != nil {
			return nil, err
		}
	}
	return jeirt.EncodeItemsCached(ctx, enc, all, cache, log)
}

// Trained is what the train stage makes of one split: the JE-IRT fit, the
// routing block (the default rule, chosen by cross-validation) with its
// rule read back, and the out-of-domain reference (nil with fewer than two
// training questions).
type Trained struct {
	Fit     *jeirt.Result
	Routing *checkpoint.Routing
	Rule    route.Rule
	Domain  *checkpoint.Domain
	// FitTime is how long the fit took (the routing's cross-validation
	// after it not counted).
	FitTime time.Duration
}

// TrainSplit is the train stage: it fits tr on trainR (early-stopped on
// valR) from the items' encoder vectors features (dim wide), then chooses
// the routing default (Routing, with the short forms' vectors short). Cancelling ctx keeps the best epoch so far
// (Fit.Interrupted) and records best-single.
func TrainSplit(ctx context.Context, cfg *Config, tr jeirt.Trainer, trainR, valR *model.Responses, features []float32, short [][]float32, dim int, log progress.Logf) (*Trained, error) {
	start := time.Now()
	fit, err := tr.Fit(ctx, trainR, valR, features, dim)
	if err != nil {
		return nil, err
	}
	fitTime := time.Since(start)
	log.Printf("stopped: %s", fit.Stop)
	if fit.Interrupted {
		log.Printf("interrupted: keeping epoch %d (best validation loss); baselines skipped", fit.BestEpoch)
	}
	if cfg.Route.Folds > 0 && !fit.Interrupted {
		log.Printf("routing: choosing the default routing rule (route.folds: 0 skips it; Ctrl-C keeps the trained model and records best-single)")
	}
	rec, dom, err := Routing(ctx, cfg, tr, fit, trainR, valR, features, short, dim, log)
	if err != nil {
		return nil, err
	}
	rule, err := route.Recorded(rec)
	if err != nil {
		return nil, err
	}
	log.Printf("routing: default rule %s: %s", rule, rec.Why)
	return &Trained{Fit: fit, Routing: rec, Rule: rule, Domain: dom, FitTime: fitTime}, nil
}
