package pipeline

import (
	"context"
	"fmt"
	"math"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/progress"
	"github.com/jeirt/jeirt/model/routefile"
	"github.com/jeirt/jeirt/train/jeirt"
	"github.com/jeirt/jeirt/train/route"
)

// Routing chooses the default routing rule of a checkpoint whose model fit
// was trained by tr on trainR (early-stopped on valR; features holds every
// item's encoder vector, dim wide): the K-fold cross-validation of
// cfg.Route over the training questions, each fold's model retrained from
// scratch as cfg.Route.Refit says. It also builds the out-of-domain
// reference at cfg.Route.FalseFlagRate, calibrated on the questions and on
// their short forms (short: EncodeShort's vectors, nil for none), and
// returns the manifest's routing block with both. Cancelling ctx keeps the
// folds completed and records best-single.
func Routing(ctx context.Context, cfg *Config, tr jeirt.Trainer, fit *jeirt.Result, trainR, valR *model.Responses,
	features []float32, short [][]float32, dim int, log progress.Logf) (*checkpoint.Routing, *checkpoint.Domain, error) {
	rc := cfg.Route
	acc := trainR.ModelAccuracy()
	rec := &checkpoint.Routing{TrainAccuracy: map[string]float64{}}
	ref := make([]float64, trainR.NumModels())
	for i, name := range trainR.Models {
		ref[i] = math.Inf(-1)
		if !math.IsNaN(acc[i]) {
			ref[i] = acc[i]
			rec.TrainAccuracy[name] = acc[i]
		}
	}
	rec.Fallback = trainR.Models[route.BestSingle(ref, nil)]
	var costs []float64
	if rc.Costs != "" {
		var err error
		if costs, err = routefile.ReadCosts(rc.Costs, trainR.Models); err != nil {
			return nil, nil, err
		}
		rec.Costs = map[string]float64{}
		for i, c := range costs {
			if !math.IsNaN(c) {
				rec.Costs[trainR.Models[i]] = c
			}
		}
	}
	dom, err := trainingDomain(trainR, features, short, dim, rc.FalseFlagRate)
	if err != nil {
		return nil, nil, err
	}
	if dom != nil {
		rec.OutOfDomain = &checkpoint.OutOfDomain{FalseFlagRate: dom.FalseFlagRate, Threshold: dom.Threshold,
			Calibration: dom.Calibration, Reference: dom.NumReference()}
	}
	bestSingle := func(why string) (*checkpoint.Routing, *checkpoint.Domain, error) {
		rec.Rule, rec.Why = route.RuleBestSingle, why
		return rec, dom, nil
	}
	switch {
	case rc.Folds == 0:
		return bestSingle("the routing rules were not cross-validated (route.folds: 0)")
	case fit.Interrupted:
		return bestSingle("training was interrupted before the routing rules were cross-validated")
	}
	fold := tr
	fold.Progress, fold.Warn = nil, nil
	if rc.Refit == RefitBestEpoch {
		fold.Epochs, fold.Patience = fit.BestEpoch, -1
	}
	refit := func(ctx context.Context, f int, train *model.Responses) (*model.JEIRT, error) {
		v := &model.Responses{Models: trainR.Models, Items: trainR.Items}
		if rc.Refit == RefitEarlyStop {
			// The validation cells of the fold's own questions would
			// choose its stopping epoch on them: left out.
			inFold := make([]bool, trainR.NumItems())
			for _, j := range trainR.Item {
				inFold[j] = true
			}
			for _, j := range train.Item {
				inFold[j] = false
			}
			var keep []int32
			for c, j := range valR.Item {
				if !inFold[j] {
					keep = append(keep, int32(c))
				}
			}
			v = valR.Subset(keep)
		}
		res, err := fold.Fit(ctx, train, v, features, dim)
		if err != nil {
			return nil, err
		}
		return res.Model, nil
	}
	cv := route.CrossValidation{Folds: rc.Folds, Repeats: rc.Repeats, Guard: rc.Guard, Seed: uint64(cfg.Train.Seed), Costs: costs, Refit: refit, Calibrate: rc.Calibrate, Log: log}
	log.Printf("routing: %d-fold cross-validation of the routing rules over the %d training questions (%s refits)", rc.Folds, len(itemsWithCells(trainR)), rc.Refit)
	res, err := cv.Run(ctx, trainR)
	if err != nil {
		if ctx.Err() != nil {
			return bestSingle("the cross-validation of the routing rules was interrupted before its first fold finished")
		}
		return nil, nil, err
	}
	rec.Rule, rec.Param = res.Rule.Record()
	rec.Why, rec.Calibration = res.Why, res.Calibration
	refitWhat := fmt.Sprintf("each fold from scratch for the main run's best epoch count (%d), without validation", fit.BestEpoch)
	if rc.Refit == RefitEarlyStop {
		refitWhat = "each fold from scratch, early-stopped on the validation cells of the questions outside it"
	}
	rec.CV = &checkpoint.RoutingCV{Folds: res.Folds, Repeats: res.Repeats, Completed: res.Completed, Questions: res.Questions, Seed: cfg.Train.Seed,
		Guard: rc.Guard, Refit: refitWhat}
	for _, s := range res.Scores {
		name, param := s.Rule.Record()
		rs := checkpoint.RuleScore{Rule: name, Param: param, Accuracy: s.Accuracy, AccuracySE: s.AccuracySE,
			VsBestSingle: s.VsBest, VsBestSingleSE: s.VsBestSE, Wins: s.Wins, Losses: s.Losses}
		dep := s.Departures
		rs.Departures = &dep
		if !math.IsNaN(s.MeanCost) {
			c := s.MeanCost
			rs.MeanCost = &c
		}
		rec.CV.Rules = append(rec.CV.Rules, rs)
	}
	return rec, dom, nil
}

// trainingDomain is the out-of-domain reference of a checkpoint: the encoder
// vectors (features, NumItems x dim) of the items with training cells in
// trainR, its threshold at false-flag rate rate for the questions and for
// each of their short forms. It is nil when fewer than two items were
// trained on.
func trainingDomain(trainR *model.Responses, features []float32, short [][]float32, dim int, rate float64) (*checkpoint.Domain, error) {
	rows := itemsWithCells(trainR)
	if len(rows) < 2 {
		return nil, nil
	}
	return checkpoint.NewDomain(features, dim, rows, rate, short...)
}

// itemsWithCells lists the items of r that have cells, in r's order.
func itemsWithCells(r *model.Responses) []int {
	seen := make([]bool, r.NumItems())
	for _, j := range r.Item {
		seen[j] = true
	}
	var rows []int
	for j, ok := range seen {
		if ok {
			rows = append(rows, j)
		}
	}
	return rows
}
