package checkpoint

import (
	"fmt"
	"math"
	"slices"
)

// Routing is the manifest's "routing" block: the rule jeirt route, route
// eval and serve apply when none is asked for, why it was chosen, the
// figures it was chosen on, and the out-of-domain check. jeirt train writes
// it; a checkpoint written before it existed has none (its commands route
// by the highest P, as they did then).
type Routing struct {
	// Rule is the default rule: best-single, max-p, shortlist, margin or
	// lambda; Param is its parameter (shortlist T, margin δ, λ), absent
	// for best-single and max-p.
	Rule  string   `json:"rule"`
	Param *float64 `json:"param,omitempty"`
	// Why says why Rule is the default, in one clause ("the highest
	// accuracy in 5-fold cross-validation ...").
	Why string `json:"why"`
	// Fallback is the best single model (the highest training accuracy):
	// best-single's choice, the margin rule's default model, and the model
	// an out-of-domain query goes to.
	Fallback string `json:"fallback"`
	// TrainAccuracy is each model's accuracy on the training cells, the
	// ranking of best-single, the shortlist and the margin's default model.
	// A model added later (jeirt add-model) has none and ranks last.
	TrainAccuracy map[string]float64 `json:"train_accuracy"`
	// Costs is each model's price when the rules were scored with costs
	// (the λ rule needs them); nil otherwise.
	Costs map[string]float64 `json:"costs,omitempty"`
	// CV is the cross-validation the rule was chosen by (nil when it was
	// not run).
	CV *RoutingCV `json:"cv,omitempty"`
	// OutOfDomain is the check of domain.safetensors, as it was set.
	OutOfDomain *OutOfDomain `json:"out_of_domain,omitempty"`
	// Calibration is the recalibration of the router's P that the rules
	// apply (route.Calibration); nil in a checkpoint trained without it,
	// whose rules use the map's P.
	Calibration *Calibration `json:"calibration,omitempty"`
}

// Calibration is the router's calibrated P(correct),
// σ(JEIRT·z + Accuracy·logit(acc_i) + Intercept), z the JE-IRT logit and
// acc_i the model's training accuracy, fitted on Cells out-of-fold
// predictions of the routing cross-validation.
type Calibration struct {
	JEIRT     float64 `json:"jeirt"`
	Accuracy  float64 `json:"accuracy"`
	Intercept float64 `json:"intercept"`
	Cells     int     `json:"cells"`
	// LogLoss and RawLogLoss are the mean log loss of those predictions
	// with the calibration (each fold's cells under the weights fitted on
	// the other folds' cells) and with the map's own P.
	LogLoss    float64 `json:"log_loss,omitempty"`
	RawLogLoss float64 `json:"raw_log_loss,omitempty"`
}

// Identity is the calibration that gives the map's own P.
var Identity = Calibration{JEIRT: 1}

// Logit is the calibrated logit of a question-model pair whose JE-IRT
// logit is z, for a model whose accuracy logit is s.
func (c Calibration) Logit(z, s float64) float64 {
	return c.JEIRT*z + c.Accuracy*s + c.Intercept
}

// Check reports a calibration with a non-finite figure.
func (c *Calibration) Check() error {
	for _, v := range []float64{c.JEIRT, c.Accuracy, c.Intercept, c.LogLoss, c.RawLogLoss} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("routing.calibration: weights %v, %v, %v (log loss %v, %v), want finite numbers", c.JEIRT, c.Accuracy, c.Intercept, c.LogLoss, c.RawLogLoss)
		}
	}
	return nil
}

// RoutingCV is the K-fold cross-validation over the training questions
// that chose Routing.Rule.
type RoutingCV struct {
	Folds     int    `json:"folds"`     // K
	Repeats   int    `json:"repeats"`   // deals of the questions into K folds
	Completed int    `json:"completed"` // folds scored, over all repeats (fewer than Folds·Repeats when interrupted)
	Questions int    `json:"questions"` // training questions held out once each
	Seed      int64  `json:"seed"`
	Refit     string `json:"refit"` // how each fold's model was trained
	Guard     string `json:"guard"` // how the scores chose the rule: one-se, se or reality-check
	// Rules holds every candidate's figures, best-single first.
	Rules []RuleScore `json:"rules"`
}

// RuleScore is one candidate rule's cross-validated figures.
type RuleScore struct {
	Rule  string   `json:"rule"`
	Param *float64 `json:"param,omitempty"`
	// Accuracy is the mean over the held-out questions of the chosen
	// model's label, AccuracySE its standard error.
	Accuracy   float64 `json:"accuracy"`
	AccuracySE float64 `json:"accuracy_se"`
	// VsBestSingle is Accuracy minus best-single's, VsBestSingleSE the
	// standard error of that paired difference over the questions.
	VsBestSingle   float64 `json:"vs_best_single"`
	VsBestSingleSE float64 `json:"vs_best_single_se"`
	// Wins and Losses count the folds where the rule beat or lost to
	// best-single.
	Wins   int `json:"wins"`
	Losses int `json:"losses"`
	// MeanCost is the mean price of the chosen models (with costs).
	MeanCost *float64 `json:"mean_cost,omitempty"`
	// Departures is the share of the held-out questions on which the rule
	// chose another model than best-single's pick; the one-se guard takes,
	// of the rules within one standard error of the best, the one with
	// the fewest. Absent in checkpoints written before it was recorded.
	Departures *float64 `json:"departures,omitempty"`
}

// OutOfDomain is the calibrated out-of-domain check: a query farther, in
// cosine distance of the encoder vectors, from every reference question
// than Threshold is out of domain; Threshold is the conformal quantile at
// FalseFlagRate of Calibration held-out training questions (see Domain).
type OutOfDomain struct {
	FalseFlagRate float64 `json:"false_flag_rate"`
	Threshold     float64 `json:"threshold"`
	Calibration   int     `json:"calibration"`
	Reference     int     `json:"reference"` // reference questions kept in domain.safetensors
}

// Check reports a routing block that no command could apply to a
// checkpoint with models: no rule, a fallback or an accuracy of an unknown
// model, a non-finite figure. The rule itself (its name and parameter) is
// train/route's to read and check (route.Recorded): every command that
// routes reads it there.
func (r *Routing) Check(models []string) error {
	if r.Rule == "" {
		return fmt.Errorf("routing.rule: missing")
	}
	if !slices.Contains(models, r.Fallback) {
		return fmt.Errorf("routing.fallback %q is not a model of the checkpoint", r.Fallback)
	}
	for _, m := range []map[string]float64{r.TrainAccuracy, r.Costs} {
		for name, v := range m {
			if !slices.Contains(models, name) {
				return fmt.Errorf("routing: %q is not a model of the checkpoint", name)
			}
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return fmt.Errorf("routing: model %q has the value %v, want a finite number >= 0", name, v)
			}
		}
	}
	if o := r.OutOfDomain; o != nil && !(o.FalseFlagRate > 0 && o.FalseFlagRate < 1 && o.Threshold >= 0 && o.Threshold <= MaxDistance) {
		return fmt.Errorf("routing.out_of_domain: rate %v and threshold %v, want a rate in (0, 1) and a threshold in [0, %v]", o.FalseFlagRate, o.Threshold, MaxDistance)
	}
	if r.Calibration != nil {
		return r.Calibration.Check()
	}
	return nil
}

// RecordedCosts is the price of every row of M the routing block records
// (NaN for a model it does not price), or nil when it records none.
func (ck *Checkpoint) RecordedCosts() []float64 {
	rt := ck.Manifest.Routing
	if rt == nil || len(rt.Costs) == 0 {
		return nil
	}
	costs := make([]float64, ck.Model.NumModels())
	for i, name := range ck.Model.Models {
		costs[i] = math.NaN()
		if v, ok := rt.Costs[name]; ok {
			costs[i] = v
		}
	}
	return costs
}
